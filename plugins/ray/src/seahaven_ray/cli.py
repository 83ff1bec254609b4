"""``seahaven episodes run``: a file of episodes, in this process or on Ray, results appended.

Everything that can be checked is checked before the first episode runs: the
episode file line by line, the world, every fixture the file names, and that
``--out`` can be written. Results are appended to ``--out`` one JSON line at a
time as episodes finish, so an interrupted run keeps what it finished, and
``--resume`` runs only the episodes ``--out`` does not hold yet.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from pathlib import Path
from typing import Annotated

import typer

from seahaven.cli.support import Progress, fail, failures, one_world, session
from seahaven.extras import EXTRAS
from seahaven_ray.episodes import Episode, EpisodeResult, WorldLoader, run_in_process
from seahaven_ray.files import EpisodeFileError, read_done, read_episodes

__all__ = ["episodes_app", "run"]

episodes_app = typer.Typer(
    name="episodes",
    help="Run files of episodes, in this process or on a Ray cluster.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
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


@episodes_app.command("run")
def run(
    ctx: typer.Context,
    world_argument: Annotated[
        str | None,
        typer.Argument(
            metavar="WORLD",
            help="The world: a registered name or module:attr, the same as --world.",
            show_default=False,
        ),
    ] = None,
    *,
    world_option: Annotated[
        str | None,
        typer.Option(
            "--world",
            metavar="WORLD",
            help="The world, if not given as WORLD.",
            show_default=False,
        ),
    ] = None,
    episodes_path: Annotated[
        Path,
        typer.Option("--episodes", metavar="FILE", help="The episodes, one JSON object per line."),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", metavar="FILE", help="Append one JSON result per line here."),
    ],
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: 'local' starts a cluster here, else a cluster address ('auto', "
            "ray://host:10001). Without it, episodes run in this process.",
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Skip the episodes --out already holds, and append."),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Ray actors (default: the cluster's CPUs)."),
    ] = None,
    instances_per_worker: Annotated[
        int,
        typer.Option("--instances-per-worker", min=1, help="Episodes each actor runs at once."),
    ] = 1,
    max_attempts: Annotated[
        int,
        typer.Option("--max-attempts", min=1, help="Starts of an episode whose worker dies."),
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
    """Run every episode of FILE against WORLD and append each result to --out."""
    named = one_world(world_argument, world_option)
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
        found = session(ctx).find_world(world)
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
        if ray_address is not None:
            _check_ray_installed()
        created = not out.exists()
        done_ids = _check_out(out, resume=resume)
        todo = [episode for _, episode in lines if episode.episode_id not in done_ids]
        skipped = len(lines) - len(todo)
        results = _results(
            todo,
            world,
            found.world,
            ray_address=ray_address,
            workers=workers,
            instances_per_worker=instances_per_worker,
            max_attempts=max_attempts,
            episode_timeout=episode_timeout,
        )
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
            results.close()
            progress.clear()
            typer.echo(
                f"interrupted: {written + skipped} of {len(lines)} episodes are in {out}; run "
                "the same command with --resume to run the rest",
                err=True,
            )
            raise typer.Exit(130) from None
        finally:
            results.close()
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


def _check_ray_installed() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        fail(
            f"--ray needs Ray, which is not installed; install it with: "
            f"{EXTRAS['seahaven.ray'].install_command}"
        )


def _results(
    todo: list[Episode],
    name: str,
    found: object,
    *,
    ray_address: str | None,
    workers: int | None,
    instances_per_worker: int,
    max_attempts: int,
    episode_timeout: float | None,
) -> Generator[EpisodeResult, None, None]:
    if ray_address is None:
        from seahaven import World

        known = {name: found} if isinstance(found, World) else {}
        return run_in_process(todo, worlds=WorldLoader(known))
    from seahaven_ray.cluster import run_episodes

    return run_episodes(
        todo,
        address=None if ray_address == "local" else ray_address,
        workers=workers,
        instances_per_worker=instances_per_worker,
        max_attempts=max_attempts,
        episode_timeout=episode_timeout,
    )
