"""Running trials: one trial in process, a plan of them, and a whole eval.

``plan`` lists the trials of a pack (scenarios times trials, each with a seed
derived from the pack, the scenario and the trial number), ``run_trial`` runs
one in this process (``run_trial_async`` in asynchronous code), and
``evaluate`` runs a plan through a runner, appends each result to a results
file as it ends, and summarizes. What a policy is, and how a runner plays one,
is ``seahaven.evaluation.policies``.

A trial that is **errored** (its failure is not the agent's: see
``TrialResult.errored``) is written like any other and left out of the scores;
``evaluate`` stops after ``max_consecutive_errors`` of them in a row, since
something is broken that more trials will not fix.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from seahaven.declaration.world import World
from seahaven.errors import SeahavenError, WorldBug
from seahaven.evaluation.policies import (
    LocalSession,
    Policy,
    check_policy,
    describe_policy,
    is_async_policy,
    load_policy,
)
from seahaven.evaluation.pool import check_concurrency, check_trial_timeout, run_concurrently
from seahaven.evaluation.processes import check_workers, run_in_processes
from seahaven.evaluation.results import (
    ResultsFile,
    TrialResult,
    check_resumable,
    latest,
    transcript_line,
)
from seahaven.evaluation.summary import Summary, summarize
from seahaven.evaluation.transcripts import TranscriptsFile
from seahaven.evaluation.trials import TrialSpec, plan, run_trial, run_trial_async, trial_seed
from seahaven.evaluation.users import UserSource, check_user_source, close_user, describe_user
from seahaven.scenarios.pack import ScenarioSet
from seahaven.stores.storage import check_storage

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_CONSECUTIVE_ERRORS",
    "EvalStopped",
    "InProcessRunner",
    "LocalSession",
    "TrialRunner",
    "TrialSpec",
    "evaluate",
    "in_process",
    "plan",
    "run_in_process",
    "run_trial",
    "run_trial_async",
    "trial_seed",
]

# How many errored trials in a row stop an eval: enough that a one-off failure does not,
# few enough that a dead server or a broken world does not burn through the whole plan.
DEFAULT_MAX_CONSECUTIVE_ERRORS = 5
# How many trials of an async policy (a model-backed agent, mostly waiting on its model) run
# at once by default: enough to hide a model's latency, few enough for a rate limit.
DEFAULT_CONCURRENCY = 8


class EvalStopped(SeahavenError):
    """An eval stopped because too many trials in a row errored; ``last`` is the last of them.

    Every trial that ended is in the results file; the errored ones run again
    with ``resume`` once the cause is fixed.
    """

    def __init__(self, count: int, last: TrialResult, out: Path | None) -> None:
        error = last.error
        cause = f"{error.kind}: {' '.join(error.message.split())}" if error else "unknown"
        where = (
            f"the finished trials are in {out}; fix the cause and run again with --resume"
            if out is not None
            else "fix the cause and run again"
        )
        super().__init__(
            f"stopped after {count} errored trials in a row, the last "
            f"{last.scenario} #{last.trial} ({cause}); {where}"
        )
        self.count = count
        self.last = last


TrialRunner = Callable[[Sequence[TrialSpec], Policy], Iterable[TrialResult]]
"""Runs trials and yields each result as it ends, in any order: in process, on Ray, remotely."""


def run_in_process(
    specs: Sequence[TrialSpec],
    policy: Policy,
    *,
    storage: str | None = None,
    record: bool = False,
    user: UserSource | None = None,
) -> Iterator[TrialResult]:
    """The default runner: each trial in turn, in this process (``storage`` as ``run_trial``'s).

    An ``async`` policy's trials run in turn on one event loop (the pool's, one
    at a time), so what the policy keeps on its loop (a model client's
    connections) serves every trial. With ``record``, each result carries its
    transcript; ``user`` plays the scenarios' users.
    """
    if is_async_policy(policy):
        yield from run_concurrently(
            specs, policy, concurrency=1, storage=storage, record=record, user=user
        )
        return
    worlds: dict[str, World] = {}
    for spec in specs:
        name = spec.scenario.world_name
        if name not in worlds:
            worlds[name] = spec.scenario.resolve_world()
        yield run_trial(spec, policy, world=worlds[name], storage=storage, record=record, user=user)


@dataclass(frozen=True)
class InProcessRunner:
    """A ``TrialRunner`` in this process; ``in_process`` makes one."""

    storage: str | None = None
    # Trials at once; ``None``: ``DEFAULT_CONCURRENCY`` for an async policy, else 1.
    concurrency: int | None = None
    trial_timeout: float | None = None
    record: bool = False
    # What plays the scenarios' users (``seahaven.evaluation.users``); ``None``: their own.
    user: UserSource | None = None
    # Processes the trials are spread over (``seahaven.evaluation.processes``); 1: this one.
    workers: int = 1

    def with_user(self, user: UserSource | None) -> InProcessRunner:
        """This runner, its trials' users played by ``user``."""
        return replace(self, user=user)

    def concurrency_for(self, policy: Policy) -> int:
        """How many trials of ``policy`` run at once (in all the workers together)."""
        if self.concurrency is not None:
            return self.concurrency
        return DEFAULT_CONCURRENCY if is_async_policy(policy) else self.workers

    def __call__(self, specs: Sequence[TrialSpec], policy: Policy) -> Iterator[TrialResult]:
        """Run ``specs`` with ``policy``; yield each result as its trial ends."""
        at_once = self.concurrency_for(policy)
        if self.workers > 1:
            return run_in_processes(
                specs,
                policy,
                workers=self.workers,
                concurrency=at_once,
                storage=self.storage,
                trial_timeout=self.trial_timeout,
                record=self.record,
                user=self.user,
            )
        if at_once == 1 and self.trial_timeout is None:
            return run_in_process(
                specs, policy, storage=self.storage, record=self.record, user=self.user
            )
        return run_concurrently(
            specs,
            policy,
            concurrency=at_once,
            storage=self.storage,
            trial_timeout=self.trial_timeout,
            record=self.record,
            user=self.user,
        )


def in_process(
    *,
    storage: str | None = None,
    concurrency: int | None = None,
    trial_timeout: float | None = None,
    record: bool = False,
    workers: int = 1,
) -> InProcessRunner:
    """The runner on this machine, with its options checked now.

    ``storage`` is ``"memory"`` or ``"disk"`` (``None`` leaves it to
    ``SEAHAVEN_STORAGE``); ``concurrency`` is how many trials run at once (by
    default ``DEFAULT_CONCURRENCY`` for an ``async`` policy and 1 for a plain
    one, which runs on threads when given more); ``trial_timeout`` (seconds)
    ends a trial whose policy plays longer, as the agent's failure (kind
    ``timeout``); with ``record`` each result carries its transcript
    (``evaluate(..., transcripts=FILE)`` turns it on). ``workers`` above 1
    spreads the trials over that many worker processes
    (``seahaven.evaluation.processes``), ``concurrency`` shared between them (by
    default one plain policy's trial per worker); the results are the same.
    """
    return InProcessRunner(
        storage=None if storage is None else check_storage(storage),
        concurrency=None if concurrency is None else check_concurrency(concurrency),
        trial_timeout=check_trial_timeout(trial_timeout),
        record=record,
        workers=check_workers(workers),
    )


def _with_user(runner: TrialRunner, user: UserSource) -> TrialRunner:
    """``runner`` with its trials' users played by ``user``; refused if it cannot."""
    with_user = getattr(runner, "with_user", None)
    if not callable(with_user):
        raise WorldBug(
            f"the runner {type(runner).__name__} cannot have the scenarios' users played by "
            f"{describe_user(user)}: a served world plays each scenario's user on the server, as "
            "the scenario says; run the trials in this process or on Ray for a model-played user"
        )
    changed: TrialRunner = with_user(user)
    return changed


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives in the block until the block has ended.

    Only the main thread receives it, and only while Python's own handler is
    installed; anywhere else the block runs as it is.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda number, frame: held.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


def evaluate(
    pack: ScenarioSet,
    policy: Policy | str,
    *,
    split: str | None = None,
    trials: int = 1,
    scenarios: Sequence[str] | None = None,
    out: Path | str | None = None,
    resume: bool = False,
    runner: TrialRunner | None = None,
    progress: Callable[[TrialResult, int, int], None] | None = None,
    max_consecutive_errors: int | None = DEFAULT_MAX_CONSECUTIVE_ERRORS,
    transcripts: Path | str | None = None,
    user: UserSource | None = None,
    only: Iterable[tuple[str, int]] | None = None,
    workers: int | None = None,
) -> tuple[Summary, list[TrialResult]]:
    """Run an eval and summarize it; with ``out``, each result is appended as it ends.

    ``policy`` is a function of the session (``async`` too) or ``"module:attr"``;
    anything else is refused before a trial runs, and every result records its
    name (``describe_policy``). With ``resume``, the trials the file holds are not
    run again, except errored ones, whose new line supersedes the old; a file of
    another policy's trials is refused. After ``max_consecutive_errors`` errored
    trials in a row (``None``: never) the eval stops with ``EvalStopped``.

    A ``KeyboardInterrupt`` stops the eval after the trials that finished, which
    are in the file; run again with ``resume`` to finish. The runner's iterator
    is closed when the eval stops, early or not, so a runner on a cluster stops
    the work it has in flight. The file is created with the first result, so an
    eval refused before its first trial leaves none.

    The results come back in the plan's order. ``runner`` is where the trials
    run (``in_process()`` by default). With
    ``transcripts`` (a file), each trial's transcript is appended there as its
    result is written (``seahaven.evaluation.transcripts``); the runner in
    process records them, and a result from a runner that kept none has no line.

    ``user`` (a ``seahaven.evaluation.users.UserSource``, such as
    ``seahaven.agents.ModelUser``) plays the users of the scenarios that have
    one, instead of their scripts; every result records it as ``user``, and a
    runner that cannot play users so (a served world plays its own) is refused.
    ``only`` limits the plan to these ``(scenario, trial)`` pairs (a replay of a
    transcripts file runs the trials the file holds).

    ``workers`` spreads the trials over that many processes of this machine
    (``in_process(workers=N)``, with the runner in process's other options).
    """
    chosen = load_policy(policy) if isinstance(policy, str) else check_policy(policy)
    name = describe_policy(chosen)
    user_name: str | None = None
    if user is not None:
        user = check_user_source(user)
        user_name = describe_user(user)
    if max_consecutive_errors is not None and (
        isinstance(max_consecutive_errors, bool)
        or not isinstance(max_consecutive_errors, int)
        or max_consecutive_errors < 1
    ):
        raise WorldBug(
            "max_consecutive_errors is a whole number, 1 or more (or None never to stop); "
            f"got {max_consecutive_errors!r}"
        )
    specs = plan(pack, split=split, trials=trials, scenarios=scenarios)
    if only is not None:
        kept_keys = set(only)
        specs = [spec for spec in specs if spec.key in kept_keys]
    if runner is None:
        runner = in_process()
    if workers is not None:
        if not isinstance(runner, InProcessRunner):
            raise WorldBug(
                f"workers={workers!r} spreads trials over this machine's processes; the runner "
                f"{type(runner).__name__} places them itself: give one or the other"
            )
        runner = replace(runner, workers=check_workers(workers))
    if transcripts is not None and isinstance(runner, InProcessRunner):
        runner = replace(runner, record=True)
    if user is not None:
        runner = _with_user(runner, user)
    planned = [spec.key for spec in specs]
    wanted = set(planned)
    results: list[TrialResult] = []
    file = ResultsFile(out) if out is not None else None
    recorded = TranscriptsFile(transcripts) if transcripts is not None else None
    if recorded is not None:
        if file is not None and recorded.path.resolve() == file.path.resolve():
            raise WorldBug(
                f"the transcripts and the results would both go to {file.path}; give the "
                "transcripts a file of their own"
            )
        recorded.open(resume=resume)
    tags = {spec.scenario.id: spec.scenario.tags for spec in specs}
    if file is not None:
        kept = file.open(resume=resume)
        hashes = {s.scenario.id: s.scenario.hash for s in specs}
        check_resumable(kept, hashes, file.path, pack=pack.name, policy=name, user=user_name)
        finished = {
            key: result
            for key, result in latest(r for r in kept if r.pack == pack.name).items()
            if key in wanted and not result.errored
        }
        results.extend(finished.values())
        specs = [spec for spec in specs if spec.key not in finished]
    total = len(planned)
    stream: Iterable[TrialResult] = ()
    in_a_row = 0
    try:
        stream = runner(specs, chosen)
        for result in stream:
            if result.policy is None:
                result = result.model_copy(update={"policy": name})
            if result.user is None and user_name is not None:
                result = result.model_copy(update={"user": user_name})
            transcript = result.transcript
            if transcript is not None:
                result = result.with_transcript(None)  # written below, not kept in memory
            results.append(result)
            line = (
                transcript_line(result, transcript, tags.get(result.scenario, ()))
                if recorded is not None and transcript is not None
                else None
            )
            # A result and its transcript are written together: a Ctrl-C between the two would
            # leave a finished trial that --resume does not run again, with no transcript.
            with _interrupts_held():
                if file is not None:
                    file.write(result)
                if recorded is not None and line is not None:
                    recorded.write(line)
            if progress is not None:
                progress(result, len(results), total)
            in_a_row = in_a_row + 1 if result.errored else 0
            if max_consecutive_errors is not None and in_a_row >= max_consecutive_errors:
                raise EvalStopped(in_a_row, result, file.path if file is not None else None)
    finally:
        # A runner's iterator that stops early (Ctrl-C, an error here) is closed now, not when
        # it is collected, so a runner on a cluster cancels what it has in flight at once.
        close = getattr(stream, "close", None)
        if callable(close):
            close()
        if file is not None:
            file.close()
        if recorded is not None:
            recorded.close()
        if user is not None:
            close_user(user)
    # In the plan's order, however many ran at once (the file has them in the order they ended).
    position = {key: index for index, key in enumerate(planned)}
    results.sort(key=lambda result: position.get(result.key, len(position)))
    return summarize(pack.name, split, trials, planned, results), results
