"""``seahaven hub``: add what publishing a world to a hub (a Hugging Face Space) needs.

The project's root receives the five files ``openenv push`` looks for
(``openenv.yaml``, ``Dockerfile``, ``__init__.py``, ``models.py`` and
``client.py``). ``README.md`` gains the Space's settings as front matter and a
section on connecting, after its ``## Using it`` section (or at its end); a
missing README is created with both. The project is found from its
``pyproject.toml`` alone, and the world is never imported.

With ``wheelhouse=True`` (``seahaven hub --wheelhouse``) a ``wheels/`` folder
is built beside them, holding every wheel the image installs
(``seahaven_openenv.hub.wheelhouse``), and the Dockerfile installs from it with no
package index: the way to build an image while Seahaven is not on the index.

Nothing is ever overwritten: every file is checked first, and if any of the
five exists (or ``wheels/``), or the README already has front matter or the
section, each one is named and nothing is written. The files are written beside
their targets under temporary names and renamed into place, so a failure leaves
the project as it was.

A project that publishes a pack of scenarios (a ``seahaven.scenarios`` entry
point) also gets a ``validation:`` block in ``openenv.yaml`` and the runtime plan
it names, ``validation/runtime.json``: what ``openenv validate`` checks, measured
from the pack and the project's app (``seahaven_openenv.hub.validation``). A project
without one gets neither, since a world alone computes no reward.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from seahaven.errors import WorldBug
from seahaven.registry.discovery import declared_worlds, nearest_pyproject, project_package
from seahaven.scenarios import SCENARIOS_GROUP
from seahaven_openenv.hub.wheelhouse import (
    WHEELS_DIR,
    build_wheelhouse,
    project_requirements,
    python_version,
)

__all__ = [
    "CONNECTING_HEADING",
    "HUB_FILES",
    "HubProject",
    "connect_section",
    "find_project",
    "publish",
    "with_hub_readme",
]

HUB_FILES = ("openenv.yaml", "Dockerfile", "__init__.py", "client.py", "models.py")
"""The files ``openenv push`` checks a directory for, in the order ``seahaven hub`` writes them."""

CONNECTING_HEADING = "## Connecting to the published world"
"""The heading of the section ``seahaven hub`` adds to ``README.md``."""

USING_HEADING = "## Using it"
# The comment openenv.yaml carries in place of a validation: block, for a world with no pack.
NO_PACK = (
    "# No `validation:` block: that is where rewards are described (range, oracle), and a\n"
    "# Seahaven world computes none; publish a pack of scenarios (a seahaven.scenarios entry\n"
    "# point) and seahaven hub declares the reward its scenarios grade.\n"
)
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True)
class HubProject:
    """A world's project as ``seahaven hub`` reads it from ``pyproject.toml``."""

    root: Path
    package: str
    world: str
    version: str
    #: ``[project] name``: the distribution the image installs.
    distribution: str = ""
    #: The packs of scenarios it publishes (``seahaven.scenarios`` entry points), name to target.
    packs: dict[str, str] = field(default_factory=dict)

    @property
    def app(self) -> str:
        """The ASGI import string the image serves."""
        return f"{self.package}.openenv_app:app"


def find_project(start: Path | None = None) -> HubProject:
    """The project at or above ``start`` (default: here), or a ``WorldBug`` naming the fix."""
    here = Path.cwd() if start is None else start
    pyproject = nearest_pyproject(here)
    if pyproject is None:
        raise WorldBug(
            f"no pyproject.toml at or above {here}; run seahaven hub in a world's project, "
            "such as one seahaven new made"
        )
    root = pyproject.parent
    declared = declared_worlds(pyproject)
    if len(declared) > 1:
        raise WorldBug(
            f"{pyproject} publishes {len(declared)} worlds ({', '.join(sorted(declared))}); "
            "a hub image serves one, so publish each from a project of its own"
        )
    if declared:
        [(world, value)] = declared.items()
        package = value.partition(":")[0].partition(".")[0]
    else:
        package = project_package(pyproject)
        world = package
    app_file = root / "src" / package / "openenv_app.py"
    if not app_file.is_file():
        raise WorldBug(
            f"{app_file.relative_to(root)} is missing; the Dockerfile and openenv.yaml serve "
            f"{package}.openenv_app:app, so add that module (app = seahaven.openenv.app(world)) "
            "and run seahaven hub again"
        )
    table = _read_project(pyproject)
    name = table.get("name")
    return HubProject(
        root,
        package,
        world,
        _project_version(table),
        name if isinstance(name, str) and name else package,
        _published_packs(table),
    )


def _published_packs(project: dict[str, Any]) -> dict[str, str]:
    entry_points = project.get("entry-points", {})
    group = entry_points.get(SCENARIOS_GROUP, {}) if isinstance(entry_points, dict) else {}
    return {str(k): str(v) for k, v in group.items()} if isinstance(group, dict) else {}


def connect_section() -> str:
    """The README section on connecting to the published world."""
    return _template("connecting.md")


def with_hub_readme(text: str | None, project: HubProject) -> str:
    """``text`` (a README, or ``None`` for none) with the front matter and the section added."""
    front = _fill(_template("front_matter"), project)
    section = connect_section().rstrip("\n") + "\n"
    if text is None:
        return f"{front}# {project.world}\n\nA Seahaven world.\n\n{section}"
    lines = text.splitlines(keepends=True)
    insert_at = _after_using_section(lines)
    if insert_at is None:
        insert_at = len(lines)
    before, after = "".join(lines[:insert_at]), "".join(lines[insert_at:])
    before = before.rstrip("\n") + "\n\n" if before.strip() else ""
    return f"{front}{before}{section}{chr(10) if after else ''}{after}"


def problems(project: HubProject, *, wheelhouse: bool = False) -> list[str]:
    """Everything already there that ``seahaven hub`` would have to overwrite, one line each."""
    names = [*HUB_FILES, WHEELS_DIR] if wheelhouse else list(HUB_FILES)
    if project.packs:
        from seahaven_openenv.hub.validation import PLAN_FILE

        names.append(PLAN_FILE)
    found = [name for name in names if (project.root / name).exists()]
    said = [f"{name} exists" for name in found]
    readme = project.root / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        if _has_front_matter(text):
            said.append("README.md already has front matter")
        if any(line.strip() == CONNECTING_HEADING for line in text.splitlines()):
            said.append(f"README.md already has the section {CONNECTING_HEADING!r}")
    elif readme.exists():
        said.append("README.md is not a file")
    return said


def publish(
    start: Path | None = None,
    *,
    wheelhouse: bool = False,
    say: Callable[[str], None] = lambda line: None,
    note: Callable[[str], None] = lambda line: None,
) -> tuple[HubProject, list[Path]]:
    """Add the hub files to the project at or above ``start``; answer what was written.

    ``wheelhouse`` builds ``wheels/`` too, and a Dockerfile that installs from it;
    ``say`` hears what a long build is doing, and ``note`` what the author may want
    to change (a pack the app does not serve). Raises ``WorldBug`` naming every file
    in the way, having written nothing.
    """
    project = find_project(start)
    in_the_way = problems(project, wheelhouse=wheelhouse)
    if in_the_way:
        raise WorldBug(
            f"seahaven hub never overwrites, and wrote nothing: {'; '.join(in_the_way)} "
            f"(in {project.root}); move those away to write them afresh"
        )
    readme = project.root / "README.md"
    planned = {name: _fill(_template(name), project) for name in HUB_FILES}
    if project.packs:
        from seahaven_openenv.hub import validation

        say("grading the pack's scenarios to measure the reward's floor and oracle")
        measured = validation.measure(project.root, project.package, project.world, project.packs)
        for line in measured.notes:
            note(line)
        manifest = planned["openenv.yaml"].replace("__VALIDATION_NOTE__", "")
        planned["openenv.yaml"] = manifest + validation.validation_block(measured)
        planned[validation.PLAN_FILE] = validation.runtime_plan(measured)
    else:
        planned["openenv.yaml"] = planned["openenv.yaml"].replace("__VALIDATION_NOTE__", NO_PACK)
    if wheelhouse:
        planned["Dockerfile"] = _fill(_template("Dockerfile.wheelhouse"), project)
    planned["README.md"] = with_hub_readme(
        readme.read_text(encoding="utf-8") if readme.is_file() else None, project
    )
    staged: dict[Path, Path] = {}
    placed: list[Path] = []
    made: list[Path] = []
    try:
        if wheelhouse:
            # Built first, under a temporary name: it is the step that can fail.
            requirements = project_requirements(
                _read_pyproject(project.root / "pyproject.toml"), "pyproject.toml"
            )
            folder = project.root / f".{WHEELS_DIR}.{secrets.token_hex(4)}.hub"
            build_wheelhouse(project.root, requirements, project.distribution, folder, say=say)
            staged[project.root / WHEELS_DIR] = folder
        for name, text in planned.items():
            target = project.root / name
            if not target.parent.exists():
                target.parent.mkdir(parents=True)
                made.append(target.parent)
            temporary = target.parent / f".{target.name}.{secrets.token_hex(4)}.hub"
            with temporary.open("x", encoding="utf-8", newline="") as out:
                out.write(text)
            staged[target] = temporary
        for target, temporary in staged.items():
            if target.name != "README.md" and target.exists():
                raise WorldBug(f"{target} appeared while seahaven hub ran; nothing was kept")
            os.replace(temporary, target)
            placed.append(target)
    except BaseException:
        for target in placed:
            if target.name == WHEELS_DIR:
                shutil.rmtree(target, ignore_errors=True)
            elif target.name != "README.md":
                target.unlink(missing_ok=True)
        for temporary in staged.values():
            if temporary.is_dir():
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                temporary.unlink(missing_ok=True)
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    return project, placed


def _after_using_section(lines: list[str]) -> int | None:
    """The line index just past the ``## Using it`` section, or ``None`` when there is none."""
    in_fence = False
    using = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = line.rstrip()
        if using and re.match(r"#{1,2} ", heading):
            return index
        if heading == USING_HEADING:
            using = True
    return len(lines) if using else None


def _has_front_matter(text: str) -> bool:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return first.rstrip() == "---"


def _read_pyproject(pyproject: Path) -> dict[str, Any]:
    import tomllib

    try:
        loaded: dict[str, Any] = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise WorldBug(f"{pyproject} cannot be read: {error}") from None
    return loaded


def _read_project(pyproject: Path) -> dict[str, Any]:
    project = _read_pyproject(pyproject).get("project", {})
    return project if isinstance(project, dict) else {}


def _project_version(project: dict[str, Any]) -> str:
    version = project.get("version")
    return version if isinstance(version, str) and version else "0.1.0"


def _template(name: str) -> str:
    return files("seahaven_openenv.hub").joinpath("templates", f"{name}.tmpl").read_text("utf-8")


def _fill(text: str, project: HubProject) -> str:
    # JSON strings are YAML strings, so a name YAML would read as a number stays a name.
    return (
        text.replace("__NAME__", json.dumps(project.world))
        .replace("__VERSION__", json.dumps(project.version))
        .replace("__PACKAGE__", project.package)
        .replace("__DIST__", project.distribution)
        .replace("__PYTHON__", python_version())
    )
