"""A wheelhouse: every wheel a world's image installs, so it installs with no package index.

``seahaven hub --wheelhouse`` builds one into ``wheels/`` beside the Dockerfile.
Seahaven, its plugins and worlds that are not on a public index (or whose name
there belongs to someone else) come from the directories they were installed
from here: every installed distribution the world needs whose ``direct_url.json``
names a local directory is built from a copy of that directory (or, installed
from a local wheel file, that file is taken). Everything else is fetched with
pip from the index this machine uses. The image then runs
``pip install --no-index --find-links wheels "<world>[serve]"``.

The wheels are this machine's: its Python version (the Dockerfile's base image
names the same one) and its platform, which must be Linux on the architecture
the image will run on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from seahaven.errors import WorldBug

__all__ = [
    "WHEELS_DIR",
    "LocalSource",
    "build_wheelhouse",
    "local_sources",
    "project_requirements",
    "python_version",
]

WHEELS_DIR = "wheels"
"""Where the wheelhouse goes, beside the Dockerfile."""

# What a copy of a project leaves out: version control, environments, build output, caches.
_IGNORED = shutil.ignore_patterns(
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "build",
    "dist",
    WHEELS_DIR,
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "node_modules",
    ".*.hub",
)


@dataclass(frozen=True, slots=True)
class LocalSource:
    """An installed distribution that no index may have: where its wheel comes from."""

    name: str
    #: The project directory it was installed from, or a wheel file.
    path: Path


def python_version() -> str:
    """``major.minor`` of this interpreter: the wheels' Python, and the image's."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _local_path(distribution: metadata.Distribution) -> Path | None:
    """The directory or wheel file ``distribution`` was installed from, when it was local."""
    text = distribution.read_text("direct_url.json")
    if not text:
        return None
    try:
        direct = json.loads(text)
    except ValueError:
        return None
    url = direct.get("url") if isinstance(direct, dict) else None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    path = Path(unquote(urlsplit(url).path))
    if "dir_info" in direct and (path / "pyproject.toml").is_file():
        return path
    if path.suffix == ".whl" and path.is_file():
        return path
    return None


def _requirements(
    texts: Iterable[str], extras: Iterable[str], source: str
) -> list[tuple[Requirement, frozenset[str]]]:
    """The requirements among ``texts`` that apply here with ``extras`` asked for."""
    wanted: list[tuple[Requirement, frozenset[str]]] = []
    for text in texts:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise WorldBug(f"{source}: {text!r} is not a requirement: {error}") from None
        marker = requirement.marker
        if marker is not None and not any(
            # The rest of the environment is this interpreter's, which the wheels are for.
            marker.evaluate({"extra": extra})
            for extra in ("", *extras)
        ):
            continue
        wanted.append((requirement, frozenset(requirement.extras)))
    return wanted


def local_sources(requirements: Iterable[str], *, source: str) -> list[LocalSource]:
    """The installed distributions ``requirements`` need, all the way down, that are local.

    ``source`` names where the requirements were read, for an error.
    """
    found: dict[str, LocalSource] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    queue = _requirements(requirements, (), source)
    while queue:
        requirement, extras = queue.pop()
        name = canonicalize_name(requirement.name)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # not installed here: pip fetches it from the index
        path = _local_path(distribution)
        if path is not None:
            found.setdefault(name, LocalSource(name, path))
        queue.extend(_requirements(distribution.requires or (), extras, f"{name}'s metadata"))
    return [found[name] for name in sorted(found)]


def _nested_projects(directory: str, names: list[str]) -> set[str]:
    """The entries of ``directory`` a project's copy leaves out: junk, and nested projects."""
    ignored = set(_IGNORED(directory, names))
    for name in names:
        if (Path(directory) / name / "pyproject.toml").is_file():
            ignored.add(name)
    return ignored


def _pip(arguments: list[str], what: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *arguments]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        raise WorldBug(f"cannot run pip to {what}: {error}") from None
    if result.returncode != 0:
        if "No module named pip" in result.stderr:
            raise WorldBug(
                f"{what} needs pip in this environment; install it with "
                f"{sys.executable} -m ensurepip"
            )
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-12:])
        raise WorldBug(f"pip could not {what}:\n{tail}")


def build_wheelhouse(
    project_root: Path,
    requirements: Iterable[str],
    distribution: str,
    into: Path,
    *,
    say: Callable[[str], None] = lambda line: None,
) -> list[Path]:
    """Build into ``into`` (a new directory) every wheel ``distribution[serve]`` installs.

    ``project_root`` is the world's project and ``requirements`` what it asks for with
    its ``serve`` extra. Answers the wheels, sorted; a failure leaves ``into`` absent.
    """
    if not sys.platform.startswith("linux"):
        raise WorldBug(
            "a wheelhouse holds wheels for the machine that builds it, and a hub image "
            f"runs Linux; run seahaven hub --wheelhouse on Linux (this is {sys.platform})"
        )
    locals_ = [
        source
        for source in local_sources(requirements, source=str(project_root / "pyproject.toml"))
        if canonicalize_name(source.name) != canonicalize_name(distribution)
    ]
    into.mkdir()
    try:
        with tempfile.TemporaryDirectory(prefix="seahaven-wheelhouse-") as scratch:
            work = Path(scratch)
            built = work / "local"
            built.mkdir()
            projects = [project_root] + [s.path for s in locals_ if s.path.is_dir()]
            copies = []
            for index, project in enumerate(projects):
                copy = work / f"src-{index}"
                # A copy, so building never writes into a checkout (build/, *.egg-info).
                shutil.copytree(project, copy, symlinks=True, ignore=_nested_projects)
                copies.append(copy)
            names = ", ".join([distribution, *(s.name for s in locals_)])
            say(f"building the wheels of {names}")
            _pip(
                ["wheel", "--no-deps", "--quiet", "--wheel-dir", str(built), *map(str, copies)],
                "build the local wheels",
            )
            for source in locals_:
                if source.path.is_file():
                    shutil.copy2(source.path, built / source.path.name)
            wheels = sorted(built.glob("*.whl"))
            own = [
                wheel for wheel in wheels if _wheel_name(wheel) == canonicalize_name(distribution)
            ]
            if len(own) != 1:
                raise WorldBug(f"building {project_root} gave no single wheel of {distribution}")
            say("fetching the wheels of every dependency")
            targets = [str(wheel) for wheel in wheels if wheel not in own]
            targets.append(f"{own[0]}[serve]")
            _pip(
                ["wheel", "--quiet", "--wheel-dir", str(into), *targets],
                "gather the wheels the world depends on",
            )
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return sorted(into.glob("*.whl"))


def _wheel_name(wheel: Path) -> str:
    return canonicalize_name(wheel.name.split("-", 1)[0])


def project_requirements(pyproject: Mapping[str, Any], source: str) -> list[str]:
    """``[project] dependencies`` and the ``serve`` extra's, or a ``WorldBug`` naming the fix."""
    project = pyproject.get("project", {})
    if not isinstance(project, dict):
        raise WorldBug(f"{source} has no [project] table")
    dependencies = project.get("dependencies", [])
    extras = project.get("optional-dependencies", {})
    serve = extras.get("serve") if isinstance(extras, dict) else None
    if not isinstance(serve, list) or not serve:
        raise WorldBug(
            f"{source} has no serve extra, which the image installs; add "
            '[project.optional-dependencies] serve = ["seahaven[serve]"]'
        )
    return [str(item) for item in [*(dependencies or []), *serve]]
