"""Trials N at a time in this process, on one asyncio event loop.

``run_concurrently(specs, policy, concurrency=N)`` is a ``TrialRunner``: it
runs the trials on an event loop of its own in a helper thread, at most ``N``
at a time, each with its own instance and session, and yields each result in
the calling thread as its trial ends. An ``async`` policy (a model-backed agent,
whose time goes in waiting for the model) is awaited on that loop, so N trials
wait at once; a plain policy runs on a pool of N threads. The world's calls run
on the loop itself: a tool call is a few SQLite statements (tens of
microseconds; ``docs/performance.md`` has the figures), far less than a model's
answer takes.

A trial gives the same result here as one at a time: its seed is its own, its
instance is its own, and nothing else is shared but the solution replays a
``matches_solution`` grader reads, which do not depend on order.

Closing the iterator (``evaluate`` does when it stops: Ctrl-C, too many errored
trials) cancels the trials in flight, awaits the policy's ``aclose()`` if it has
one, and ends the loop; the trials that finished have been yielded, and no
others will be.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.policies import Policy, close_policy_async, is_async_policy
from seahaven.evaluation.results import TrialResult
from seahaven.evaluation.trials import TrialSpec, run_trial_async
from seahaven.evaluation.users import UserSource, close_user_async

__all__ = ["check_concurrency", "check_trial_timeout", "run_concurrently"]

# What the loop's thread puts on the queue: a result, an exception to raise, or the end.
_END = object()


def check_concurrency(concurrency: object) -> int:
    """``concurrency`` if it is a whole number, 1 or more; a ``WorldBug`` otherwise."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise WorldBug(f"concurrency is a whole number of trials, 1 or more; got {concurrency!r}")
    return concurrency


def check_trial_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds (``None``: no limit); a ``WorldBug`` unless it is above 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise WorldBug(f"trial_timeout is a number of seconds above 0, or None; got {timeout!r}")
    return float(timeout)


def run_concurrently(
    specs: Sequence[TrialSpec],
    policy: Policy,
    *,
    concurrency: int = 8,
    storage: str | None = None,
    trial_timeout: float | None = None,
    record: bool = False,
    runner: str = "in process",
    user: UserSource | None = None,
) -> Iterator[TrialResult]:
    """Run ``specs`` at most ``concurrency`` at a time; yield each result as its trial ends.

    ``trial_timeout`` limits each trial's play (see ``run_trial_async``),
    ``storage`` is where the instances keep their stores, and with ``record``
    each result carries its transcript; ``user`` plays the scenarios' users
    (``seahaven.evaluation.users``). A trial that cannot start (its fixture
    is missing) stops the run with that error, as it does one at a time.
    """
    concurrency = check_concurrency(concurrency)
    timeout = check_trial_timeout(trial_timeout)
    specs = list(specs)
    if not specs:
        return
    results: queue.Queue[Any] = queue.Queue()
    started = threading.Event()
    state: dict[str, Any] = {}

    async def main() -> None:
        state["loop"] = asyncio.get_running_loop()
        state["task"] = asyncio.current_task()
        started.set()
        threads = None if is_async_policy(policy) else ThreadPoolExecutor(concurrency)
        worlds: dict[str, World] = {}
        pending: set[asyncio.Task[TrialResult]] = set()
        waiting = iter(specs)
        try:
            while True:
                while len(pending) < concurrency:
                    spec = next(waiting, None)
                    if spec is None:
                        break
                    name = spec.scenario.world_name
                    if name not in worlds:
                        worlds[name] = spec.scenario.resolve_world()
                    trial = run_trial_async(
                        spec,
                        policy,
                        world=worlds[name],
                        runner=runner,
                        storage=storage,
                        record=record,
                        timeout=timeout,
                        executor=threads,
                        user=user,
                    )
                    pending.add(asyncio.ensure_future(trial))
                if not pending:
                    break
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                failed: BaseException | None = None
                for task in done:
                    if task.exception() is None:
                        results.put(task.result())
                    elif failed is None:
                        failed = task.exception()  # a trial that could not start
                if failed is not None:
                    raise failed
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await close_policy_async(policy)
            if user is not None:
                await close_user_async(user)
            if threads is not None:
                # A plain policy past its time limit may still be in its thread; it is refused
                # every call now, so it ends at its next one, and the loop need not wait.
                threads.shutdown(wait=False, cancel_futures=True)

    def loop_thread() -> None:
        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            pass  # closed from the calling thread
        except BaseException as error:
            results.put(error)
        finally:
            started.set()
            results.put(_END)

    thread = threading.Thread(target=loop_thread, name="seahaven-trials", daemon=True)
    thread.start()
    try:
        while True:
            item = results.get()
            if item is _END:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        started.wait()
        loop, task = state.get("loop"), state.get("task")
        if loop is not None and task is not None and thread.is_alive():
            # Stopped early (Ctrl-C, an error, enough errored trials): cancel what is in flight.
            with contextlib.suppress(RuntimeError):  # the loop has just closed: nothing in flight
                loop.call_soon_threadsafe(task.cancel)
        thread.join()
