"""``seahaven episodes run``: one scripted episode, or a file of episodes here or elsewhere.

With ``--calls`` (or a script on standard input) it runs one scripted episode
and prints every call (``seahaven.cli.episode``). With ``--episodes FILE`` it
runs every episode of the file and appends each result to ``--out``, one JSON
line at a time as episodes finish, so an interrupted run keeps what it
finished and ``--resume`` runs only the episodes ``--out`` does not hold yet.
Everything that can be checked is checked before the first episode runs: the
episode file line by line, the world, every fixture the file names, and that
``--out`` can be written. The file runs in this process, or, with ``--ray
ADDRESS``, on the runner a plugin gives through the
``seahaven_episode_file_runner`` hook (the Ray plugin's).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from seahaven.cli.episode import (
    SCRIPT_OPTIONS,
    CallsOption,
    ClockModeOption,
    DocumentOption,
    EpisodeIdOption,
    NowOption,
    SeedOption,
    StartupOption,
    run_script,
)
from seahaven.cli.support import (
    Progress,
    StorageOption,
    WorldFirstCommand,
    WorldOption,
    fail,
    failures,
    one_world,
    session,
)
from seahaven.declaration.world import World
from seahaven.episodes.files import EpisodeFileError, read_done, read_episodes
from seahaven.episodes.model import Episode, EpisodeResult
from seahaven.episodes.run import WorldLoader, run_in_process
from seahaven.registry.extras import EXTRAS
from seahaven.registry.hookspecs import hookimpl

__all__ = ["episodes_app", "run", "run_file", "seahaven_cli"]

episodes_app = typer.Typer(
    name="episodes",
    help="Run scripted episodes, or files of episodes in this process or on a Ray cluster.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

FILE_OPTIONS = (
    "out",
    "ray_address",
    "resume",
    "workers",
    "instances_per_worker",
    "max_attempts",
    "episode_timeout",
)
"""The parameters only a file of episodes (``--episodes``) takes."""

_FLAGS = {
    "calls": "--calls",
    "seed": "--seed",
    "now": "--now",
    "clock_mode": "--clock-mode",
    "startup": "--startup",
    "storage": "--storage",
    "document_path": "--document",
    "episode_id": "--episode-id",
    "out": "--out",
    "ray_address": "--ray",
    "resume": "--resume",
    "workers": "--workers",
    "instances_per_worker": "--instances-per-worker",
    "max_attempts": "--max-attempts",
    "episode_timeout": "--episode-timeout",
}


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """The options among ``names`` the command line gave (not left at their defaults)."""
    given = []
    for name in names:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name != "DEFAULT":
            given.append(_FLAGS[name])
    return given


@episodes_app.command("run", cls=WorldFirstCommand)
def run(
    ctx: typer.Context,
    first: Annotated[
        str | None,
        typer.Argument(
            metavar="[WORLD]",
            help="The world, as --world takes it: a registered name or module:attr (default: "
            "the project's own world; with --episodes, name it).",
            show_default=False,
        ),
    ] = None,
    second: Annotated[
        str | None,
        typer.Argument(
            metavar="[FIXTURE]",
            help="The fixture a scripted episode starts from; omit for a blank instance.",
            show_default=False,
        ),
    ] = None,
    world_option: WorldOption = None,
    calls: CallsOption = "-",
    seed: SeedOption = None,
    now: NowOption = None,
    clock_mode: ClockModeOption = None,
    startup: StartupOption = None,
    storage: StorageOption = None,
    document_path: DocumentOption = None,
    episode_id: EpisodeIdOption = None,
    episodes_path: Annotated[
        Path | None,
        typer.Option(
            "--episodes",
            metavar="FILE",
            help="Run a file of episodes, one JSON object per line, instead of one script.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="With --episodes: append one JSON result per line here.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="With --episodes, run on Ray: 'local' starts a cluster here, else a cluster "
            "address ('auto', ray://host:10001). Without it, episodes run in this process.",
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Skip the episodes --out already holds, and append."),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", metavar="N", min=1, help="Ray actors (default: the cluster's CPUs)."
        ),
    ] = None,
    instances_per_worker: Annotated[
        int,
        typer.Option(
            "--instances-per-worker", metavar="N", min=1, help="Episodes each actor runs at once."
        ),
    ] = 1,
    max_attempts: Annotated[
        int,
        typer.Option(
            "--max-attempts", metavar="N", min=1, help="Starts of an episode whose worker dies."
        ),
    ] = 3,
    episode_timeout: Annotated[
        float | None,
        typer.Option(
            "--episode-timeout",
            metavar="SECONDS",
            min=0.001,
            help="With --ray: give up an episode still running after SECONDS, stopping its "
            "actor (default: no limit).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a scripted episode, or (with --episodes) every episode of a file."""
    if episodes_path is None:
        stray = _given(ctx, FILE_OPTIONS)
        if stray:
            raise typer.BadParameter(
                "takes a file of episodes; give --episodes FILE, or leave it out to run one "
                "script (--calls)",
                param_hint=stray[0],
            )
        run_script(
            ctx,
            first,
            second,
            world_option,
            calls=calls,
            seed=seed,
            now=now,
            clock_mode=clock_mode,
            startup=startup,
            storage=storage,
            document_path=document_path,
            episode_id=episode_id,
        )
        return
    stray = _given(ctx, SCRIPT_OPTIONS)
    if stray:
        raise typer.BadParameter(
            "belongs to one scripted episode; an episode file says it on each line",
            param_hint=stray[0],
        )
    if second is not None:
        raise typer.BadParameter(
            "an episode file names each episode's fixture on its line; give only the WORLD",
            param_hint="FIXTURE",
        )
    if out is None:
        raise typer.BadParameter(
            "missing: give the file to append one JSON result per line to", param_hint="--out"
        )
    run_file(
        ctx,
        one_world(first, world_option),
        episodes_path,
        out,
        ray_address=ray_address,
        resume=resume,
        workers=workers,
        instances_per_worker=instances_per_worker,
        max_attempts=max_attempts,
        episode_timeout=episode_timeout,
    )


def _eta(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.0f}m{seconds % 60:02.0f}s"
    return f"{seconds:.0f}s"


def _status(done: int, failed: int, total: int, started: float) -> str:
    elapsed = max(time.monotonic() - started, 1e-9)
    rate = done / elapsed
    left = total - done
    eta = _eta(left / rate) if rate > 0 else "?"
    return f"episodes {done}/{total} done, {failed} failed, {rate:.1f}/s, ETA {eta}"


def _check_out(out: Path, *, resume: bool) -> frozenset[str]:
    """Check ``--out`` can be appended to; the episode ids it holds when resuming."""
    if out.is_dir():
        fail(f"--out {out} is a directory; give a file to append results to")
    if not resume and out.exists() and out.stat().st_size > 0:
        fail(
            f"--out {out} already holds results; pass --resume to run only the episodes it "
            "does not hold, or choose another file"
        )
    done = read_done(out) if resume else None
    try:
        with out.open("ab") as handle:
            if done is not None and done.size > done.whole_bytes:
                handle.truncate(done.whole_bytes)  # the partial line of an interrupted write
    except OSError as error:
        fail(f"cannot write --out {out}: {error.strerror or error}")
    return done.ids if done is not None else frozenset()


def run_file(
    ctx: typer.Context,
    named: str | None,
    episodes_path: Path,
    out: Path,
    *,
    ray_address: str | None,
    resume: bool,
    workers: int | None,
    instances_per_worker: int,
    max_attempts: int,
    episode_timeout: float | None,
) -> None:
    """Run every episode of ``episodes_path`` against the world ``named``, appending to ``out``."""
    if named is None:
        # Each worker finds the world again by this name, so the project's default will not do.
        raise typer.BadParameter("name the world, as WORLD or --world WORLD", param_hint="WORLD")
    world: str = named
    if episode_timeout is not None and ray_address is None:
        raise typer.BadParameter(
            "needs --ray: an episode running in this process cannot be stopped, an actor can",
            param_hint="--episode-timeout",
        )
    with failures():
        try:
            lines = read_episodes(episodes_path, world=world)
        except OSError as error:
            fail(f"cannot read --episodes {episodes_path}: {error.strerror or error}")
        cli_session = session(ctx)
        found = cli_session.find_world(world)
        fixtures = {fixture.id for fixture in found.world.fixtures()}
        for number, episode in lines:
            if episode.fixture is not None and episode.fixture not in fixtures:
                raise EpisodeFileError(
                    episodes_path,
                    number,
                    f"world {found.world.name!r} has no fixture {episode.fixture!r} (its "
                    f"fixtures: {', '.join(sorted(fixtures)) or 'none'}); name one of them, or "
                    "leave fixture out for a blank instance",
                )
        elsewhere = None
        if ray_address is not None:
            elsewhere = cli_session.manager.hook.seahaven_episode_file_runner(address=ray_address)
            if elsewhere is None:
                fail(
                    f"--ray needs Ray, which is not installed; install it with: "
                    f"{EXTRAS['seahaven.ray'].install_command}"
                )
        created = not out.exists()
        done_ids = _check_out(out, resume=resume)
        todo = [episode for _, episode in lines if episode.episode_id not in done_ids]
        skipped = len(lines) - len(todo)
        if elsewhere is None:
            known = {world: found.world} if isinstance(found.world, World) else {}
            results: Iterator[EpisodeResult] = run_in_process(todo, worlds=WorldLoader(known))
        else:
            results = elsewhere(
                todo,
                workers=workers,
                instances_per_worker=instances_per_worker,
                max_attempts=max_attempts,
                episode_timeout=episode_timeout,
            )
        _write_results(results, out, todo, lines, skipped, created)


def _write_results(
    results: Iterator[EpisodeResult],
    out: Path,
    todo: list[Episode],
    lines: list[tuple[int, Episode]],
    skipped: int,
    created: bool,
) -> None:
    """Append each result to ``out`` as it comes, showing progress; then the summary line."""
    progress = Progress()
    written = failed = 0
    started = time.monotonic()
    finished = False
    try:
        with out.open("a", encoding="utf-8") as handle:
            progress.show(_status(0, 0, len(todo), started))
            for result in results:
                handle.write(result.model_dump_json() + "\n")
                handle.flush()
                written += 1
                failed += 0 if result.ok else 1
                progress.show(_status(written, failed, len(todo), started))
        finished = True
    except KeyboardInterrupt:
        _close(results)
        progress.clear()
        typer.echo(
            f"interrupted: {written + skipped} of {len(lines)} episodes are in {out}; run "
            "the same command with --resume to run the rest",
            err=True,
        )
        raise typer.Exit(130) from None
    finally:
        _close(results)
        progress.clear()
        if created and not finished and written == 0:
            # The file was made only to prove it could be; a run that wrote nothing to it
            # (a cluster that never answered, say) leaves no empty file behind.
            out.unlink(missing_ok=True)
    already = f", {skipped} already in {out}" if skipped else ""
    typer.echo(
        f"{written} episodes run ({written - failed} ok, {failed} failed){already}; results "
        f"in {out}"
    )


def _close(results: Iterator[EpisodeResult]) -> None:
    """Close a runner's generator, so a run stopped early stops its workers too."""
    close = getattr(results, "close", None)
    if close is not None:
        close()


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven episodes run``."""
    app.add_typer(episodes_app, name="episodes")
