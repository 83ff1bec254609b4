"""Where a frame's work runs: on the event loop while its kind is quick, else on a worker."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable

import pytest
from conftest import instance_dirs, spin
from fastapi import FastAPI
from seahaven_openenv.sessions.session_pool import SessionPool as Hub

from seahaven.calls.concurrency import concurrency, set_concurrency


def test_quick_work_stays_on_the_event_loop(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    for _ in range(5):
        ws.call("add_note", text="quick")
    ws.state()
    assert served.hub.offloaded == set()


def test_a_slow_tool_moves_to_a_worker_and_the_other_sessions_are_answered_meanwhile(
    served, wire, beacon_world
) -> None:
    slow, other = wire(served), wire(served)
    slow.reset()
    other.reset()
    # The first run is not counted; the second, at 100 ms, is past the budget on its own.
    for _ in range(2):
        assert slow.call("wait", seconds=0.1)["data"]["observation"]["result"] == "waited"
    assert "tool wait" in served.hub.offloaded
    assert "tool add_note" not in served.hub.offloaded
    slow.send(
        {
            "type": "step",
            "data": {"type": "call_tool", "tool_name": "wait", "arguments": {"seconds": 3}},
        }
    )
    # While the slow call runs on a worker, another session's frames are answered.
    assert other.call("add_note", text="meanwhile")["data"]["observation"]["error"] is None
    with pytest.raises(TimeoutError):
        slow.connection.recv(timeout=0)
    assert slow.receive()["data"]["observation"]["result"] == "waited"
    assert len(instance_dirs(beacon_world)) == 2


def test_the_workers_leave_the_loop_a_slot_of_the_gate() -> None:
    before = concurrency()
    try:
        set_concurrency(4)
        assert Hub()._workers == 3 and Hub().inline_calls
        # With one slot, a call on the loop could wait behind a worker's: calls all go to it.
        set_concurrency(1)
        assert Hub()._workers == 1 and not Hub().inline_calls
        set_concurrency(0)
        assert Hub()._workers == 8 and Hub().inline_calls
    finally:
        set_concurrency(before)


def test_with_one_slot_calls_run_on_the_worker(serving, wire, beacon_world) -> None:
    before = concurrency()
    try:
        set_concurrency(1)
        server = serving(beacon_world)
        ws = wire(server)
        ws.reset()
        assert ws.call("add_note", text="on the worker")["data"]["observation"]["error"] is None
        assert server.hub.offloaded == set() and not server.hub.inline_calls
    finally:
        set_concurrency(before)


def test_moving_a_kind_of_work_to_a_worker_is_said_at_info(
    served, wire, server_log, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="seahaven.openenv")
    ws = wire(served)
    ws.reset()
    for _ in range(2):
        ws.call("wait", seconds=0.05)
    assert "tool wait" in served.hub.offloaded
    said = [r for r in caplog.records if "runs on a worker thread" in r.getMessage()]
    assert [record.levelname for record in said] == ["INFO"]
    # An expected decision is no warning.
    assert server_log.records == [], server_log.text()


def run_with_pool(scenario: Callable[[Hub], Awaitable[None]]) -> None:
    """Run ``scenario`` against a pool that is up as it is in a server, and shut down after."""

    async def main() -> None:
        pool = Hub()
        async with pool.lifespan(FastAPI()):
            await scenario(pool)

    asyncio.run(main())


def test_cpu_work_moves_past_its_budget_and_comes_back_once_it_is_cheap() -> None:
    async def scenario(pool: Hub) -> None:
        # The first run is not counted; at 60 ms a run, the average passes 20 ms on the second.
        for _ in range(3):
            await pool.execute("tool heavy", spin, 0.06)
        assert "tool heavy" in pool.offloaded
        assert (await pool.execute("tool heavy", spin, 0.0)).startswith("seahaven-")
        # Cheap on the workers now (a new process's first resets are dear): back on the loop.
        for _ in range(20):
            await pool.execute("tool heavy", spin, 0.0)
        assert "tool heavy" not in pool.offloaded
        assert await pool.execute("tool heavy", spin, 0.0) == threading.current_thread().name

    run_with_pool(scenario)


def test_cpu_work_under_its_budget_stays_on_the_loop() -> None:
    async def scenario(pool: Hub) -> None:
        # 8 ms of CPU is past the wait budget, but well under the CPU budget.
        for _ in range(15):
            await pool.execute("tool middling", spin, 0.008)
        assert pool.offloaded == set()

    run_with_pool(scenario)


def test_work_that_waits_moves_and_stays_moved() -> None:
    async def scenario(pool: Hub) -> None:
        for _ in range(2):
            await pool.execute("tool nap", time.sleep, 0.05)
        assert "tool nap" in pool.offloaded
        # On a worker its waits cannot be told from the lock's: quick runs do not bring it back.
        for _ in range(20):
            await pool.execute("tool nap", time.sleep, 0.0)
        assert "tool nap" in pool.offloaded

    run_with_pool(scenario)
