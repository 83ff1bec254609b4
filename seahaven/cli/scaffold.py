"""``seahaven new``: render a complete world distribution from the templates in the package.

The templates live in ``seahaven/cli/templates/world/`` as package data, one file
per file of the new world, each ending in ``.tmpl`` so that no tool mistakes
them for the framework's own modules. A template's text and path hold
placeholders (``__WORLD__``, ``__PACKAGE__``, ...) that ``render`` replaces;
``dot-`` at the start of a file name stands for ``.``.

Every name is checked before anything is written, and the world is written into
a temporary directory beside the target and renamed into place, so a failure
at any point leaves nothing behind.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import secrets
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

from packaging.version import Version

from seahaven.errors import WorldBug
from seahaven.registry.extras import EXTRAS
from seahaven.stores.names import portable_name_problem
from seahaven.version import VERSION

__all__ = ["ScaffoldNames", "Scaffolded", "name_problem", "names_for", "render", "seahaven_range"]

TEMPLATE_SUFFIX = ".tmpl"
# The first-party packages a world's package must not share a name with.
_FRAMEWORK_PACKAGES = frozenset(
    {"seahaven", *(extra.package.partition(".")[0] for extra in EXTRAS.values())}
)


@dataclass(frozen=True, slots=True)
class ScaffoldNames:
    """Every name a new world is written with, derived from the one the author gave."""

    world: str
    """``World(name=...)`` and the entry-point name, exactly as given."""
    package: str
    """The import package: the world's name, lower case, ``-`` and ``.`` as ``_``."""
    distribution: str
    """The distribution's name: ``seahaven-world-<name>``, as the worlds in this repository."""
    error_class: str
    """The base class of the world's errors: ``NotesError`` for ``notes``."""

    def placeholders(self) -> dict[str, str]:
        """What each placeholder in the templates stands for."""
        versions = seahaven_range()
        return {
            "__WORLD__": self.world,
            "__PACKAGE__": self.package,
            "__DIST__": self.distribution,
            "__ERROR__": self.error_class,
            "__SEAHAVEN__": f"seahaven{versions}",
            "__RANGE__": versions,
        }


@dataclass(frozen=True, slots=True)
class Scaffolded:
    """What ``render`` wrote: the new project's directory and its files, relative to it."""

    names: ScaffoldNames
    directory: Path
    files: list[PurePosixPath] = field(default_factory=list)

    def next_steps(self) -> list[str]:
        """The lines ``seahaven new`` prints once the world is written."""
        steps = [
            (f"cd {_shell_word(str(self.directory))}", ""),
            ('python -m pip install -e ".[serve,test]"', "the world, editable, with the server"),
            ("python -m pytest", "its tests pass as written"),
            ("seahaven check", "every lint; run it before each commit"),
            ("python fixtures_src/generate.py", "freeze the generator's fixtures"),
            (
                f"seahaven serve --world {_shell_word(self.names.world)}",
                "then open http://127.0.0.1:8000/console",
            ),
            ("seahaven hub", "when it is time to publish"),
        ]
        width = max(len(command) for command, _ in steps)
        return [
            f"Created the world {self.names.world!r} in {self.directory} "
            f"(package {self.names.package}, distribution {self.names.distribution}).",
            "Next:",
            *(
                f"  {command:<{width}}  # {note}" if note else f"  {command}"
                for command, note in steps
            ),
            "AGENTS.md points a coding agent at the documentation: seahaven docs",
        ]


def seahaven_range() -> str:
    """The range of seahaven releases a new world asks for: this minor series (``>=0.1,<0.2``)."""
    version = Version(VERSION)
    major, minor = version.major, version.minor
    upper = f"0.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{upper}"


def name_problem(name: str) -> str | None:
    """Why ``name``, as written, cannot name a world and its package; ``None`` when it can.

    Only the spelling is judged here; ``names_for`` also refuses a package that
    would shadow a module this machine already has.
    """
    problem = portable_name_problem(name, max_length=64)
    if problem is not None:
        return (
            f"{name!r} is not a world name: {problem}; choose a short name of letters, digits, "
            "'-' and '_', such as 'notes'"
        )
    package = _package_of(name)
    if not (package.isascii() and package.isidentifier()) or keyword.iskeyword(package):
        return (
            f"{name!r} does not make a Python package name ({package!r} is not an identifier); "
            "start with a letter and use letters, digits, '-' and '_', such as 'notes'"
        )
    return None


def _package_of(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def names_for(name: str) -> ScaffoldNames:
    """The names a world called ``name`` is written with, or a ``WorldBug`` naming the problem."""
    problem = name_problem(name)
    if problem is not None:
        raise WorldBug(problem)
    package = _package_of(name)
    if package in _FRAMEWORK_PACKAGES:
        raise WorldBug(
            f"the package {package!r} would shadow Seahaven's own; choose another name, "
            f"such as '{package}_world'"
        )
    if package in sys.stdlib_module_names:
        raise WorldBug(
            f"the package {package!r} has the name of a standard-library module, which Python "
            f"would import instead of the world; choose another name, such as '{package}_world'"
        )
    installed = _importable(package)
    if installed is not None:
        raise WorldBug(
            f"a module {package!r} is already importable here ({installed}), and one of the two "
            f"would shadow the other; choose another name, such as '{package}_world'"
        )
    return ScaffoldNames(
        world=name,
        package=package,
        distribution="seahaven-world-" + re.sub(r"[-_.]+", "-", name).lower(),
        error_class=_error_class(package),
    )


def render(name: str, parent: Path | None = None) -> Scaffolded:
    """Write the world ``name`` into ``parent / name`` (``parent``: the current directory).

    Refuses, before writing anything, a name ``names_for`` refuses, a missing
    ``parent`` and an existing target. The files are written into a temporary
    directory beside the target and renamed into place, so the world appears
    whole or not at all.
    """
    names = names_for(name)
    base = Path.cwd() if parent is None else Path(parent).expanduser()
    if not base.is_dir():
        raise WorldBug(f"{base} is not a directory; create it first, or pass another --dir")
    target = (base / name).absolute()
    if target.exists() or target.is_symlink():
        raise WorldBug(
            f"{target} already exists; seahaven new never writes into an existing directory, "
            "so choose another name or --dir, or move it away"
        )
    placeholders = names.placeholders()
    templates = sorted(_templates(), key=lambda item: str(item[0]))
    # A hidden sibling of the target, made with the umask's permissions (mkdtemp's are private).
    staging = base / f".{name}.{secrets.token_hex(4)}.new"
    staging.mkdir()
    try:
        written = []
        for relative, template in templates:
            destination = PurePosixPath(_fill(str(relative), placeholders))
            path = staging.joinpath(*destination.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_fill(template.read_text(encoding="utf-8"), placeholders), "utf-8")
            written.append(destination)
        if target.exists() or target.is_symlink():
            raise WorldBug(f"{target} appeared while the world was being written; nothing was kept")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Scaffolded(names, target, written)


_Template = tuple[PurePosixPath, Traversable]


def _templates() -> Iterator[_Template]:
    """Every template file, with its path in the new world (placeholders still in it)."""
    root = files("seahaven.cli").joinpath("templates", "world")
    if not root.is_dir():
        raise WorldBug(f"the world templates are missing ({root}); reinstall seahaven")

    def walk(folder: Traversable, prefix: PurePosixPath) -> Iterator[_Template]:
        for entry in folder.iterdir():
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                yield from walk(entry, prefix / entry.name)
            elif entry.name.endswith(TEMPLATE_SUFFIX):
                stem = entry.name[: -len(TEMPLATE_SUFFIX)]
                if stem.startswith("dot-"):
                    stem = "." + stem[len("dot-") :]
                yield prefix / stem, entry

    yield from walk(root, PurePosixPath())


def _fill(text: str, placeholders: dict[str, str]) -> str:
    for placeholder, value in placeholders.items():
        text = text.replace(placeholder, value)
    return text


def _importable(package: str) -> str | None:
    """Where a module ``package`` is imported from here, if one is (a bare folder is not)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "namespace"):
        return None
    return spec.origin


def _error_class(package: str) -> str:
    camel = "".join(part[:1].upper() + part[1:] for part in package.split("_"))
    name = f"{camel}Error"
    return name if name.isidentifier() and camel else "WorldError"


def _shell_word(text: str) -> str:
    """``text`` as one shell word: quoted only when it needs to be."""
    if re.fullmatch(r"[A-Za-z0-9_./~:=+-]+", text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
