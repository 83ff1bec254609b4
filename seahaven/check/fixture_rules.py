"""SH401 to SH406: the fixture rules, making the checks instance creation makes, before a commit.

Every sentence about a fixture's files, schema and shape is the one creation
raises (``seahaven.fixtures``), so the two can never disagree. SH401 goes
first and alone: a sidecar that does not load has none of the fields the
other rules read, so nothing else is said about that fixture.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from seahaven.check.model import CheckContext, Finding, Rule
from seahaven.declaration.composition import ROOT_PATH, Composition, Node
from seahaven.errors import WorldBug
from seahaven.fixtures.preparation import schema_problems, shape_problems
from seahaven.fixtures.sidecar import SIDECAR, Fixture, load
from seahaven.fixtures.verification import COMPANION_SUFFIXES, refuse_links, verify_file
from seahaven.stores.clock import is_canonical

__all__ = ["RULES"]

_REGENERATE = (
    "rebuild it the way it was made: the project's generator (python fixtures_src/generate.py), "
    "or delete its directory and run seahaven fixture freeze (or fork) with its id again"
)
# The generator a scaffolded world (and each world in Seahaven's repository) commits.
GENERATOR = Path("fixtures_src") / "generate.py"


def regenerate(ctx: CheckContext, directory: Path, parent: str | None = None) -> str:
    """How to build the fixture in ``directory`` again, with what this project has.

    ``fixture freeze`` refuses an id that exists, so a fix naming it alone does
    not work: the project's generator replaces the directory itself, and
    without one the directory goes first.
    """
    generator = GENERATOR.as_posix()
    if (ctx.project / GENERATOR).is_file():
        return (
            f"rebuild the fixtures with the project's generator, parents first: python "
            f"{generator} from the project's directory ({generator} {directory.name} rebuilds "
            "this one alone), then commit what it wrote"
        )
    try:
        shown = directory.relative_to(ctx.project).as_posix()
    except ValueError:
        shown = str(directory)
    verb = f"fork {parent} {directory.name}" if parent is not None else f"freeze {directory.name}"
    return (
        f"delete {shown} (a fixture is never overwritten), then build it again with seahaven "
        f"fixture {verb} --run MODULE:FUNCTION --description TEXT"
    )


@dataclass(frozen=True, slots=True)
class _Read:
    """One fixture directory, and its sidecar or the reason it does not load."""

    directory: Path
    fixture: Fixture | None
    problem: str | None
    # Set when the sidecar loads, is in its own directory, and names another world.
    other_world: bool = False

    @property
    def sidecar(self) -> Path:
        return self.directory / SIDECAR


def _read_all(ctx: CheckContext) -> list[_Read]:
    world = ctx.world
    if world is None:
        return []
    folder = world.fixtures_dir
    if not folder.is_dir():
        return []
    found = []
    for directory in sorted(folder.iterdir()):
        # Dot-directories are a freeze in progress, never a fixture.
        if directory.name.startswith(".") or not directory.is_dir():
            continue
        if not (directory / SIDECAR).exists():
            continue
        read = _read(directory, world.name)
        # A fixture another world froze, in a directory two worlds share, is that
        # world's to check (fixture list and verify say the directory is shared).
        if read.fixture is None and read.other_world:
            continue
        found.append(read)
    return found


def _read(directory: Path, world_name: str) -> _Read:
    sidecar = directory / SIDECAR
    try:
        # A non-canonical ``now`` is SH404's to report, not a sidecar that fails to load.
        fixture = load(directory, require_canonical_now=False)
    except WorldBug as error:
        text = str(error)
        prefix = f"{sidecar}: "
        return _Read(directory, None, text[len(prefix) :] if text.startswith(prefix) else text)
    if fixture.id != directory.name:
        return _Read(
            directory,
            None,
            f"its id is {fixture.id!r}, but it is in the directory for {directory.name!r}",
        )
    if fixture.world != world_name:
        return _Read(
            directory,
            None,
            f"it was frozen from world {fixture.world!r}, and this is world {world_name!r}",
            other_world=True,
        )
    return _Read(directory, fixture, None)


def _made(fixture: Fixture) -> tuple[Path, str | None]:
    """A fixture's directory and parent, as ``regenerate`` takes them."""
    return fixture.directory, fixture.parent_id


def _loaded(ctx: CheckContext) -> Iterator[Fixture]:
    for read in _read_all(ctx):
        if read.fixture is not None:
            yield read.fixture


def _sidecar_invalid(ctx: CheckContext) -> Iterator[Finding]:
    for read in _read_all(ctx):
        if read.problem is not None:
            yield SIDECAR_INVALID.finding(
                read.sidecar,
                None,
                f"the sidecar of fixture {read.directory.name!r}: {read.problem}",
                fix=regenerate(ctx, read.directory),
            )


def _file_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    for fixture in _loaded(ctx):
        try:
            refuse_links(fixture.id, fixture.directory)
        except WorldBug as error:
            problem, _, advice = str(error).partition("; ")
            yield FILE_MISMATCH.finding(
                fixture.directory, None, problem, fix=advice or regenerate(ctx, *_made(fixture))
            )
            continue
        for path, (file, expected) in fixture.files().items():
            try:
                verify_file(fixture, path, file, expected)
            except WorldBug as error:
                # The first clause is the defect; creation's advice after it is the fix below.
                problem, _, advice = str(error).partition("; ")
                damaged = file.is_symlink() or not file.is_file()
                # A changed file cannot be forked (the fork is refused the same way), so the
                # fix is creation's own: restore the file, or regenerate the fixture.
                yield FILE_MISMATCH.finding(
                    file,
                    None,
                    problem,
                    fix=regenerate(ctx, *_made(fixture)) if damaged else advice or None,
                )


def _root_only(ctx: CheckContext) -> Composition:
    """The root's node alone: enough for the half of SH403 that needs no tree."""
    assert ctx.world is not None
    return Composition(ctx.world, [Node(world=ctx.world, scope=None, path=ROOT_PATH, index=0)], [])


def _schema_drift(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.world is None:
        return
    composition = ctx.composition if ctx.composition is not None else _root_only(ctx)
    for fixture in _loaded(ctx):
        for problem in schema_problems(fixture, composition):
            yield SCHEMA_DRIFT.finding(
                fixture.directory / SIDECAR,
                None,
                f"fixture {fixture.id!r}: {problem.partition('; ')[0]}",
                fix=regenerate(ctx, *_made(fixture)),
            )


def _now_not_canonical(ctx: CheckContext) -> Iterator[Finding]:
    for fixture in _loaded(ctx):
        if is_canonical(fixture.now):
            continue
        sidecar = fixture.directory / SIDECAR
        yield NOW_NOT_CANONICAL.finding(
            sidecar,
            _key_line(sidecar, "now"),
            f"fixture {fixture.id!r}: now {fixture.now!r} is not the clock's canonical text",
        )


def _key_line(sidecar: Path, key: str) -> int | None:
    try:
        lines = sidecar.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pattern = re.compile(rf"{re.escape(key)}\s*:")
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return None


def _companions(ctx: CheckContext) -> Iterator[Finding]:
    for fixture in _loaded(ctx):
        for path, (file, _) in fixture.files().items():
            for suffix in COMPANION_SUFFIXES:
                companion = file.with_name(file.name + suffix)
                if companion.exists() or companion.is_symlink():
                    yield COMPANIONS.finding(
                        companion,
                        None,
                        f"fixture {fixture.id!r}, node {path!r}: {companion.name} sits beside "
                        f"{file.name}, so the file was opened for writing after it was frozen",
                        fix=regenerate(ctx, *_made(fixture)),
                    )


def _shape_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    composition = ctx.composition
    if composition is None or ctx.world is None:
        return
    for fixture in _loaded(ctx):
        problems = shape_problems(fixture, composition)
        if problems:
            yield SHAPE_MISMATCH.finding(
                fixture.directory / SIDECAR,
                None,
                f"fixture {fixture.id!r} of world {ctx.world.name!r} cannot be used: "
                + "; ".join(problems),
                fix=regenerate(ctx, *_made(fixture)),
            )


SIDECAR_INVALID = Rule(
    code="SH401",
    severity="error",
    title="a fixture sidecar that does not validate",
    fix=_REGENERATE,
    check=_sidecar_invalid,
)
FILE_MISMATCH = Rule(
    code="SH402",
    severity="error",
    title="a fixture's file_sha256 does not match its state file",
    fix="fixtures are immutable: fork it, change the fork, and freeze that",
    check=_file_mismatch,
)
SCHEMA_DRIFT = Rule(
    code="SH403",
    severity="error",
    title="a fixture's schema_hash does not match the world",
    fix=_REGENERATE,
    check=_schema_drift,
)
NOW_NOT_CANONICAL = Rule(
    code="SH404",
    severity="error",
    title="a fixture's now is not canonical",
    fix="canonical is 2026-06-01T09:00:00.000Z: UTC, milliseconds, trailing Z",
    check=_now_not_canonical,
)
COMPANIONS = Rule(
    code="SH405",
    severity="error",
    title="a fixture's state file has -wal, -shm or -journal companions",
    fix=_REGENERATE,
    check=_companions,
)
SHAPE_MISMATCH = Rule(
    code="SH406",
    severity="error",
    title="a composite sidecar's nodes disagrees with the world's composition",
    fix=_REGENERATE,
    check=_shape_mismatch,
)

RULES: tuple[Rule, ...] = (
    SIDECAR_INVALID,
    FILE_MISMATCH,
    SCHEMA_DRIFT,
    NOW_NOT_CANONICAL,
    COMPANIONS,
    SHAPE_MISMATCH,
)
