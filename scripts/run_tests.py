"""Run every test session the project has: the framework's suite, each world's, each plugin's.

Each first-party plugin, each world and each example extension is its own
distribution with its own project directory, so its tests run as their own
pytest session from that directory (where the pytest plugin's `world` fixture
finds a world by convention). The sessions run one after another, but the
worlds' and examples' run beside the agents plugin's (``BESIDE``), which spends
half its time waiting. Exits non-zero if any session fails. Extra arguments are
passed to every pytest session.

Four environment variables shape a run (docs/testing.md, "The project's own suite"):

- `SEAHAVEN_TEST_WORKERS=N` (N > 1) spreads each session over N processes with
  pytest-xdist, a test file per process at a time (`--dist loadfile`), in the order the
  session collects them, so the slow files its conftest puts first start first. The
  sessions in `ONE_PROCESS` (and the worlds' and examples') stay in one process.
  `./scripts/test` sets it to the number of cores for the 3.11 pass; tox does not.
- `SEAHAVEN_SKIP_ONCE_PER_RUN=1` deselects the tests marked `once_per_run` (the installs
  into fresh environments and the image builds, which check nothing that depends on the
  interpreter). The tox environments of the other interpreters set it: the 3.11 pass
  runs those tests once for the whole run.
- `SEAHAVEN_TEST_SESSIONS=PATTERN,...` runs only the sessions whose label (`framework`,
  `plugin openenv`, `world company`, ...) matches one of the shell-style patterns; the run
  says which it leaves out. The tox environments share the plugins' sessions out between
  them, so every plugin runs on 3.11 and on one other interpreter, and the framework and
  the worlds on all three.
- `SEAHAVEN_TEST_SHARD=K/N` runs part K of N of the framework's test files, shared out by
  size so each part holds about as many bytes of tests. The tox environments of 3.12 and
  3.13 take one part each, so every framework test runs on 3.11 and on one of the two.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKERS_VARIABLE = "SEAHAVEN_TEST_WORKERS"
SKIP_ONCE_VARIABLE = "SEAHAVEN_SKIP_ONCE_PER_RUN"
SESSIONS_VARIABLE = "SEAHAVEN_TEST_SESSIONS"
SHARD_VARIABLE = "SEAHAVEN_TEST_SHARD"
ONCE_PER_RUN = "once_per_run"


def sessions() -> list[tuple[str, Path, list[str]]]:
    """Every session: (label, the directory pytest runs in, its targets), the framework first."""
    found = [("framework", ROOT, ["tests"])]
    for folder, label in (("plugins", "plugin"), ("worlds", "world"), ("examples", "example")):
        projects = ROOT / folder
        if not projects.is_dir():
            continue
        for project in sorted(projects.iterdir()):
            if (project / "pyproject.toml").is_file() and (project / "tests").is_dir():
                found.append((f"{label} {project.name}", project, ["tests"]))
    return found


# Sessions that run in one process even when the run is spread, and why (docs/testing.md has
# the measurements). The Ray plugin's tests time episodes and trials on local clusters of two
# CPUs each: two clusters at once on two cores pushed an actor's start past a 15 s episode
# limit. A world's or an example's tests are calls on in-process instances, seconds in all,
# where a second process's start-up (interpreter, pytest, plugins, collection) costs more.
ONE_PROCESS = {"plugins/ray"}
ONE_PROCESS_FOLDERS = {"worlds", "examples"}


def spread(directory: Path) -> bool:
    """Whether the session run in ``directory`` may be spread over processes."""
    if not directory.is_relative_to(ROOT):
        return True
    relative = directory.relative_to(ROOT)
    if relative.as_posix() in ONE_PROCESS:
        return False
    return relative.parent.as_posix() not in ONE_PROCESS_FOLDERS


def workers(environ: dict[str, str]) -> int:
    """The processes each session is spread over: 1 (no xdist) unless the variable says more."""
    value = environ.get(WORKERS_VARIABLE, "").strip()
    if not value:
        return 1
    try:
        count = int(value)
    except ValueError:
        raise SystemExit(f"{WORKERS_VARIABLE} must be a whole number, not {value!r}") from None
    return max(count, 1)


def session_arguments(
    argv: list[str], environ: dict[str, str], *, may_spread: bool = True
) -> list[str]:
    """The pytest arguments a session gets: the run's options, then ``argv``."""
    arguments = []
    count = workers(environ)
    if count > 1 and may_spread:
        # A file at a time keeps each module's fixtures (a Ray cluster, a built wheel) to one
        # process; collection order, not xdist's largest-file-first, so slow files go first.
        arguments += ["-n", str(count), "--dist", "loadfile", "--no-loadscope-reorder"]
    argv = list(argv)
    if environ.get(SKIP_ONCE_VARIABLE) == "1":
        # A caller's `-m EXPR` is kept, and narrowed.
        if "-m" in argv[:-1]:
            at = argv.index("-m") + 1
            argv[at] = f"({argv[at]}) and not {ONCE_PER_RUN}"
        else:
            arguments += ["-m", f"not {ONCE_PER_RUN}"]
    return arguments + argv


def shard(environ: dict[str, str]) -> tuple[int, int] | None:
    """The part ``(K, N)`` the variable names, or None when it is unset or empty."""
    value = environ.get(SHARD_VARIABLE, "").strip()
    if not value:
        return None
    part, _, parts = value.partition("/")
    try:
        chosen_part, count = int(part), int(parts)
    except ValueError:
        chosen_part = count = 0
    if not 1 <= chosen_part <= count:
        raise SystemExit(f"{SHARD_VARIABLE} is K/N with 1 <= K <= N, such as 1/2, not {value!r}")
    return chosen_part, count


def shared_out(files: list[Path], part: int, parts: int) -> list[Path]:
    """Part ``part`` (from 1) of ``parts`` of ``files``: largest first, each to the lightest.

    Every file lands in exactly one part, the same one on every machine (ties go by path).
    """
    loads = [0] * parts
    owned: list[list[Path]] = [[] for _ in range(parts)]
    for path in sorted(files, key=lambda path: (-path.stat().st_size, path.as_posix())):
        lightest = loads.index(min(loads))
        loads[lightest] += path.stat().st_size
        owned[lightest].append(path)
    return sorted(owned[part - 1])


def framework_targets(environ: dict[str, str]) -> list[str] | None:
    """The framework session's test files when the run is sharded, else None (all of ``tests``)."""
    chosen_shard = shard(environ)
    if chosen_shard is None:
        return None
    files = sorted((ROOT / "tests").glob("test_*.py"))
    return [path.relative_to(ROOT).as_posix() for path in shared_out(files, *chosen_shard)]


def chosen(
    found: list[tuple[str, Path, list[str]]], environ: dict[str, str]
) -> list[tuple[str, Path, list[str]]]:
    """The sessions the variable names (all of them when it is unset or empty)."""
    value = environ.get(SESSIONS_VARIABLE, "").strip()
    if not value:
        return found
    patterns = [pattern.strip() for pattern in value.split(",") if pattern.strip()]
    labels = [label for label, _, _ in found]
    for pattern in patterns:
        if not fnmatch.filter(labels, pattern):
            raise SystemExit(
                f"{SESSIONS_VARIABLE}: {pattern!r} names no session; the sessions are "
                + ", ".join(labels)
            )
    return [
        session
        for session in found
        if any(fnmatch.fnmatchcase(session[0], pattern) for pattern in patterns)
    ]


# The session the worlds' and examples' sessions run beside, and why: it spends about half its
# time waiting (on its scripted model server and the `seahaven eval` processes it starts: 124 s
# of CPU in 113 s of wall on two cores, in the run of 7 December), and they are one process
# each, about two minutes of one core in all. Run side by side, their output is kept and
# printed whole after it, so the two never interleave.
BESIDE = "plugin agents"


def lanes(
    run: list[tuple[str, Path, list[str]]],
) -> tuple[list[tuple[str, Path, list[str]]], list[tuple[str, Path, list[str]]]]:
    """The run split into the sessions run in turn and those run beside ``BESIDE``.

    Nothing runs beside when ``BESIDE`` is not in the run (the other interpreters' passes).
    """
    if all(label != BESIDE for label, _, _ in run):
        return run, []
    beside = [
        session
        for session in run
        if session[1].relative_to(ROOT).parent.as_posix() in ONE_PROCESS_FOLDERS
    ]
    return [session for session in run if session not in beside], beside


def _header(label: str, directory: Path, targets: list[str]) -> str:
    shown = " ".join(targets) if len(targets) < 4 else "tests (a part)"
    where = directory.relative_to(ROOT) if directory.is_relative_to(ROOT) else directory
    return f"\n=== {label}: pytest {shown} (in {where or '.'})"


def run_session(
    label: str,
    directory: Path,
    targets: list[str],
    argv: list[str],
    output: int | None = None,
) -> tuple[int, str]:
    """One pytest session: its exit status and what it took (wall and CPU seconds).

    ``output`` is a file descriptor for its output (stdout and stderr), else this
    process's own. The CPU seconds are the session's and its reaped children's
    (``os.wait4``), so two sessions at once are counted apart.
    """
    arguments = session_arguments(argv, dict(os.environ), may_spread=spread(directory))
    started = time.monotonic()
    process = subprocess.Popen(
        # -rs: every skip is listed with its reason, so a run shows what it left out.
        [sys.executable, "-m", "pytest", "-rs", *targets, *arguments],
        cwd=directory,
        stdout=output,
        stderr=None if output is None else subprocess.STDOUT,
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    # The CPU time beside the wall time shows which sessions wait more than they work.
    cpu = usage.ru_utime + usage.ru_stime
    return process.returncode, f"{label} {time.monotonic() - started:.0f} s ({cpu:.0f} s CPU)"


def _run_beside(
    sessions_beside: list[tuple[str, Path, list[str]]],
    argv: list[str],
    results: list[tuple[str, int, str, str]],
) -> None:
    """Run ``sessions_beside`` in turn, each one's output kept for printing later."""
    for label, directory, targets in sessions_beside:
        with tempfile.TemporaryFile() as kept:
            status, took = run_session(label, directory, targets, argv, output=kept.fileno())
            kept.seek(0)
            text = kept.read().decode("utf-8", "replace")
        results.append((label, status, took, _header(label, directory, targets) + "\n" + text))


def main(argv: list[str]) -> int:
    failed = []
    took = []
    every = sessions()
    run = chosen(every, dict(os.environ))
    left = [label for label, _, _ in every if all(label != other for other, _, _ in run)]
    if left:
        print(f"{SESSIONS_VARIABLE} leaves out: {', '.join(left)}", flush=True)
    sharded = framework_targets(dict(os.environ))
    in_turn, beside = lanes(run)
    beside_results: list[tuple[str, int, str, str]] = []
    for label, directory, targets in in_turn:
        if label == "framework" and sharded is not None:
            print(f"{SHARD_VARIABLE}: {len(sharded)} of the framework's test files", flush=True)
            targets = sharded
        side: threading.Thread | None = None
        if label == BESIDE and beside:
            print(f"\n(beside it: {', '.join(name for name, _, _ in beside)})", flush=True)
            side = threading.Thread(target=_run_beside, args=(beside, argv, beside_results))
            side.start()
        print(_header(label, directory, targets), flush=True)
        status, session_took = run_session(label, directory, targets, argv)
        took.append(session_took)
        if status != 0:
            failed.append(label)
        if side is not None:
            side.join()
            for other, other_status, other_took, text in beside_results:
                print(text, end="", flush=True)
                took.append(other_took)
                if other_status != 0:
                    failed.append(other)
    # What each session took, in one line: the figures docs/testing.md keeps the budget with.
    print(f"\nsessions: {', '.join(took)}", flush=True)
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("\nall test sessions passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
