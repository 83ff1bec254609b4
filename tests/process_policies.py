"""Policies the tests of worker processes send to them: importable by name in a worker.

A policy a worker runs travels by reference to its module, so these live in a module of
their own, which a worker imports from the test's import path (``sys.path`` travels with it).
"""

from __future__ import annotations

import asyncio
import os
import time

from seahaven.evaluation import PolicySession, solution_policy

# The scenario whose trial kills the worker that plays it.
FATAL_SCENARIO = "reply-in-thread"
# The file whose absence makes that trial fatal (it is made as the worker dies): once only.
MARKER = "SEAHAVEN_TEST_DIE_ONCE"


def dies_once_on_one_scenario(session: PolicySession) -> None:
    """The reference solution, except that one scenario's trial kills its worker, once."""
    marker = os.environ[MARKER]
    if session.scenario.id == FATAL_SCENARIO and not os.path.exists(marker):
        with open(marker, "w"):
            pass
        os._exit(3)
    solution_policy(session)


def stalls_once(session: PolicySession) -> None:
    """The reference solution, except that the first trial to get here (in any worker, as the
    ``MARKER`` file says) waits an hour: a trial that only a stop can end."""
    try:
        made = os.open(os.environ[MARKER], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        solution_policy(session)
        return
    os.close(made)
    time.sleep(3600)


def always_dies(session: PolicySession) -> None:
    """Kills the worker that runs it, every time: a worker that cannot run anything."""
    os._exit(4)


def slow_solution(session: PolicySession) -> None:
    """The reference solution after a pause: a run long enough to stop half way."""
    time.sleep(0.3)
    solution_policy(session)


async def stalls(session: PolicySession) -> None:
    """Never plays: waits far past any trial's time limit."""
    await asyncio.sleep(3600)
