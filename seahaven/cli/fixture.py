"""``seahaven fixture``: list a world's fixtures, build new ones, materialise and verify them.

``freeze`` fills a blank instance with a generator and freezes it; ``fork``
does the same from an instance of another fixture. ``create`` runs every
check creating an instance makes, then copies the fixture's state files into a
directory, one per store, named as in an instance directory. ``verify`` runs
those checks for one fixture or all of them and prints every problem.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seahaven.cli.support import (
    Progress,
    WorldArgument,
    WorldFirstCommand,
    WorldOption,
    check_clock_mode_option,
    check_instant_option,
    failures,
    one_line,
    one_world,
    reported_here,
    session,
    split_world,
)
from seahaven.errors import SeahavenError, ToolError, WorldBug
from seahaven.fixtures.listing import (
    fixture_directory,
    fixture_ids,
    other_worlds_fixtures,
    shared_directory_note,
)
from seahaven.fixtures.preparation import (
    copy_state_file,
    prepare,
    schema_problems,
    shape_problems,
)
from seahaven.fixtures.sidecar import load
from seahaven.fixtures.verification import verify_file
from seahaven.registry.discovery import add_import_roots, nearest_pyproject
from seahaven.registry.hookspecs import hookimpl
from seahaven.registry.targets import import_target, split_target
from seahaven.stores.names import check_fixture_id

if TYPE_CHECKING:
    from seahaven.declaration.composition import Composition
    from seahaven.declaration.world import World
    from seahaven.fixtures.sidecar import Fixture

__all__ = ["seahaven_cli"]

fixture_app = typer.Typer(
    name="fixture",
    help="A world's fixtures: list, freeze, fork, create and verify them.",
    no_args_is_help=True,
)

Generator = Callable[[Any], object]


# --- option checks (a bad value is a usage error, exit 2) -----------------------------------------


def _checked_id(value: str | None, name: str) -> str:
    """A fixture id ``split_world`` handed over, or a usage error (exit 2) naming the argument."""
    if value is None:
        raise typer.BadParameter("missing", param_hint=name)
    try:
        return check_fixture_id(value)
    except WorldBug as error:
        raise typer.BadParameter(str(error), param_hint=name) from None


def _check_run(value: str) -> str:
    if split_target(value) is None:
        raise typer.BadParameter(
            f"{value!r} does not name a generator; write module:function, such as "
            "fixtures_src.generate:empty"
        )
    return value


def _argument(metavar: str, help: str) -> Any:
    """A positional of a ``[WORLD] ...`` command: optional to the parser; ``split_world`` sorts."""
    return typer.Argument(metavar=metavar, help=help, show_default=False)


LeadingWorld = Annotated[
    str | None,
    _argument(
        "[WORLD]",
        "The world, as --world takes it: a registered name or module:attr (default: the "
        "project's own world).",
    ),
]
RunOption = Annotated[
    str,
    typer.Option(
        "--run",
        metavar="MODULE:FUNCTION",
        callback=_check_run,
        help="The generator: a function taking the live instance and filling it.",
        show_default=False,
    ),
]
# No SEAHAVEN_* variables here: a variable set for serving must not change how fixtures build.
BuildClockOption = Annotated[
    str | None,
    typer.Option(
        "--clock-mode",
        metavar="MODE",
        callback=check_clock_mode_option,
        help="How the clock moves while the generator runs (default: the world's). With fixed "
        "or tick, --now and --seed, a build writes the same bytes every time.",
        show_default=False,
    ),
]
BuildSeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        metavar="N",
        help="The caller seed the generator's ids are drawn from (default: a random one).",
        show_default=False,
    ),
]
DescriptionOption = Annotated[
    str,
    typer.Option(
        "--description",
        metavar="TEXT",
        help="What the fixture holds and which scenarios it supports, for eval authors.",
        show_default=False,
    ),
]


# --- list ----------------------------------------------------------------------------------------


@fixture_app.command("list")
def list_fixtures(
    ctx: typer.Context, world_argument: WorldArgument = None, world: WorldOption = None
) -> None:
    """Every fixture of the world, one per line: id, parent or -, now, description."""
    chosen = one_world(world_argument, world)
    with failures():
        found = session(ctx).find_world(chosen)
        for fixture in found.world.fixtures():
            parent = fixture.parent_id if fixture.parent_id is not None else "-"
            typer.echo(f"{fixture.id}\t{parent}\t{fixture.now}\t{one_line(fixture.description)}")
        others = other_worlds_fixtures(found.world)
        if others:
            typer.echo(f"note: {shared_directory_note(found.world, others)}", err=True)


# --- freeze and fork -----------------------------------------------------------------------------


def import_generator(spec: str, project: Path | None) -> Generator:
    """The function ``module:function`` names, importable from the project or the working dir."""
    add_import_roots(project)
    target = import_target(
        spec,
        what="a generator function",
        example="generate:build",
        module_word="the generator module ",
        import_fix="run from the project that holds it, or correct --run",
        attribute_fix="correct --run to name the generator function",
    )
    if not callable(target):
        raise WorldBug(
            f"{spec} is a {type(target).__name__}, not a function; --run names a function "
            "taking the live instance"
        )
    return target


def _build(
    ctx: typer.Context,
    world_name: str | None,
    parent: str | None,
    fixture_id: str,
    run: str,
    description: str,
    making: dict[str, Any],
) -> None:
    """``freeze`` and ``fork``: check, fill and freeze, then say what was frozen."""
    with failures():
        found = session(ctx).find_world(world_name)
        _refuse_existing(found.world, fixture_id)
        generator = import_generator(run, _project_of(found.project))
        given = {key: value for key, value in making.items() if value is not None}
        fixture = _fill_and_freeze(
            found.world, parent, fixture_id, run, generator, description, given
        )
        _report_frozen(fixture)


def _fill_and_freeze(
    world: World,
    parent: str | None,
    fixture_id: str,
    run: str,
    generator: Generator,
    description: str,
    making: dict[str, Any],
) -> Fixture:
    """Make the instance (``making`` holds ``world.instance``'s keywords), fill it, freeze it.

    The instance never survives.
    """
    progress = Progress()
    with progress.working(f"creating an instance of world {world.name!r}"):
        instance = world.instance(parent, **making)
    try:
        with progress.working(f"running {run}"), reported_here():
            try:
                generator(instance)
            except ToolError as error:
                raise WorldBug(
                    f"the generator {run} made a call that failed with {type(error).__name__} "
                    f"{error.code}: {error.message}; fix the generator"
                ) from None
            except SeahavenError as error:
                raise WorldBug(f"the generator {run} failed: {error}") from None
            except Exception as error:
                raise WorldBug(
                    f"the generator {run} raised {type(error).__name__}: {error}; fix the "
                    "generator, then run the command again"
                ) from None
        with progress.working(f"freezing fixture {fixture_id!r}"):
            return instance.freeze(fixture_id, description)
    finally:
        instance.destroy()


def _refuse_existing(world: World, fixture_id: str) -> None:
    target = world.fixtures_dir / fixture_id
    if target.exists() or target.is_symlink():
        raise WorldBug(
            f"fixture {fixture_id!r} already exists in {world.fixtures_dir}; fixtures are "
            "immutable, so choose a new id, or delete the directory to regenerate it"
        )


def _report_frozen(fixture: Fixture) -> None:
    parent = fixture.parent_id if fixture.parent_id is not None else "-"
    typer.echo(
        f"froze fixture {fixture.id!r} (parent {parent}, now {fixture.now}) into "
        f"{fixture.directory}"
    )


def _project_of(project: Path | None) -> Path | None:
    if project is not None:
        return project
    pyproject = nearest_pyproject(Path.cwd())
    return pyproject.parent if pyproject is not None else None


@fixture_app.command("freeze", cls=WorldFirstCommand)
def freeze(
    ctx: typer.Context,
    first: LeadingWorld = None,
    second: Annotated[str | None, _argument("ID", "The new fixture's id.")] = None,
    *,
    run: RunOption,
    description: DescriptionOption,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            metavar="TS",
            callback=check_instant_option,
            help="Where the blank instance's clock starts (default: the wall clock). Pass it, "
            "and pass the same value every time.",
            show_default=False,
        ),
    ] = None,
    clock_mode: BuildClockOption = None,
    seed: BuildSeedOption = None,
    world: WorldOption = None,
) -> None:
    """Fill a blank instance with the generator and freeze it as fixture ID."""
    chosen, (fixture_id,) = split_world((first, second), world, takes=("ID",), required=1)
    making = {"now": now, "clock_mode": clock_mode, "seed": seed}
    _build(ctx, chosen, None, _checked_id(fixture_id, "ID"), run, description, making)


@fixture_app.command("fork", cls=WorldFirstCommand)
def fork(
    ctx: typer.Context,
    first: LeadingWorld = None,
    second: Annotated[str | None, _argument("PARENT", "The fixture to start from.")] = None,
    third: Annotated[str | None, _argument("ID", "The new fixture's id.")] = None,
    *,
    run: RunOption,
    description: DescriptionOption,
    clock_mode: BuildClockOption = None,
    seed: BuildSeedOption = None,
    world: WorldOption = None,
) -> None:
    """Fill an instance of PARENT with the generator and freeze it as fixture ID, its child."""
    chosen, (parent, fixture_id) = split_world(
        (first, second, third), world, takes=("PARENT", "ID"), required=2
    )
    making = {"clock_mode": clock_mode, "seed": seed}
    parent_id = _checked_id(parent, "PARENT")
    _build(ctx, chosen, parent_id, _checked_id(fixture_id, "ID"), run, description, making)


# --- create --------------------------------------------------------------------------------------


def _check_into(into: Path) -> bool:
    """Refuse anything but a new or empty directory; return whether it must be made."""
    if into.is_symlink() and not into.exists():
        raise WorldBug(f"{into} is a dangling link; pass a new or empty directory to --into")
    if not into.exists():
        return True
    if not into.is_dir():
        raise WorldBug(f"{into} is not a directory; pass a new or empty directory to --into")
    if any(into.iterdir()):
        raise WorldBug(
            f"{into} is not empty; pass a new or empty directory to --into, so nothing in it "
            "is overwritten"
        )
    return False


def _missing_ancestors(into: Path) -> list[Path]:
    """``into`` and each folder above it that does not exist yet, deepest first."""
    missing = []
    for folder in (into, *into.parents):
        if folder.exists() or folder.is_symlink():
            break
        missing.append(folder)
    return missing


def _remove_made(folders: list[Path]) -> None:
    """Remove the folders ``create`` made, deepest first, if they are (still) empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _unwritable_into(into: Path, error: OSError) -> str:
    where = error.filename if error.filename else into
    return (
        f"{where} cannot be written ({error.strerror or error}), so nothing was copied; pass "
        "--into a new or empty directory in a place you can write to"
    )


@fixture_app.command("create", cls=WorldFirstCommand)
def create(
    ctx: typer.Context,
    first: LeadingWorld = None,
    second: Annotated[str | None, _argument("FIXTURE", "The fixture to copy.")] = None,
    *,
    into: Annotated[
        Path,
        typer.Option(
            "--into",
            metavar="DIR",
            help="A new or empty directory to put the instance's files in.",
            show_default=False,
        ),
    ],
    world: WorldOption = None,
) -> None:
    """Check FIXTURE as creating an instance would, then copy its files into DIR."""
    chosen, (given_id,) = split_world((first, second), world, takes=("FIXTURE",), required=1)
    fixture_id = _checked_id(given_id, "FIXTURE")
    with failures():
        target_world = session(ctx).find_world(chosen).world
        composition = target_world.composition()
        make_directory = _check_into(into)
        prepared = prepare(target_world, composition, fixture_id)
        progress = Progress()
        made: list[Path] = []
        created = _missing_ancestors(into) if make_directory else []
        try:
            if make_directory:
                into.mkdir(parents=True)
        except OSError as error:
            _remove_made(created)
            raise WorldBug(_unwritable_into(into, error)) from None
        try:
            for count, node in enumerate(composition.nodes, start=1):
                target = into / node.file_name
                progress.show(f"copying {node.file_name} ({count}/{len(composition.nodes)})")
                copy_state_file(prepared.files[node.path], target)
                made.append(target)
        except BaseException as error:
            for path in made:
                path.unlink(missing_ok=True)
            _remove_made(created)
            if isinstance(error, OSError):
                raise WorldBug(_unwritable_into(into, error)) from None
            raise
        finally:
            progress.clear()
        for node, path in zip(composition.nodes, made, strict=True):
            typer.echo(f"{path}\t{node.path}\t{node.world.name} {node.world.version}")


# --- verify --------------------------------------------------------------------------------------


def _fixture_ids(world: World, others: dict[str, str]) -> list[str]:
    """Every fixture directory of the world's, by name: those another world froze are left out."""
    return [name for name in fixture_ids(world.fixtures_dir) if name not in others]


def fixture_problems(world: World, composition: Composition, fixture_id: str) -> list[str]:
    """Every reason an instance of ``fixture_id`` could not be created, one sentence each.

    ``prepare`` decides: when it passes there is nothing to report. When it
    fails, the shape, schema and file checks are run one by one so that each
    problem is its own line, with ``prepare``'s own message as the fallback.
    """
    try:
        check_fixture_id(fixture_id)
        prepare(world, composition, fixture_id)
    except WorldBug as error:
        refusal = str(error)
    else:
        return []
    try:
        fixture = load(fixture_directory(world, fixture_id))
    except WorldBug:
        return [refusal]
    if fixture.id != fixture_id or fixture.world != world.name:
        return [refusal]
    problems = shape_problems(fixture, composition) + schema_problems(fixture, composition)
    for path, (file, expected) in fixture.files().items():
        try:
            verify_file(fixture, path, file, expected)
        except WorldBug as error:
            problems.append(str(error))
    return problems or [refusal]


@fixture_app.command("verify", cls=WorldFirstCommand)
def verify(
    ctx: typer.Context,
    first: LeadingWorld = None,
    second: Annotated[
        str | None, _argument("[FIXTURE]", "One fixture to verify (default: all of them).")
    ] = None,
    world: WorldOption = None,
) -> None:
    """Run every check creating an instance makes, for one fixture or all; exit 1 on any problem."""
    chosen, (given_id,) = split_world((first, second), world, takes=("FIXTURE",), required=0)
    fixture_id = None if given_id is None else _checked_id(given_id, "FIXTURE")
    with failures():
        target_world = session(ctx).find_world(chosen).world
        composition = target_world.composition()
        others = other_worlds_fixtures(target_world) if fixture_id is None else {}
        if others:
            typer.echo(f"note: {shared_directory_note(target_world, others)}", err=True)
        ids = [fixture_id] if fixture_id is not None else _fixture_ids(target_world, others)
        if not ids:
            typer.echo(
                f"world {target_world.name!r} has no fixtures in {target_world.fixtures_dir}",
                err=True,
            )
            return
        progress = Progress()
        failed = 0
        for count, current in enumerate(ids, start=1):
            progress.show(f"verifying {current} ({count}/{len(ids)})")
            problems = fixture_problems(target_world, composition, current)
            progress.clear()
            if problems:
                failed += 1
            for problem in problems:
                typer.echo(f"{current}: {one_line(problem)}")
            if not problems:
                typer.echo(f"{current}: ok")
        if failed:
            raise typer.Exit(1)


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven fixture list|freeze|fork|create|verify``."""
    app.add_typer(fixture_app, name="fixture")
