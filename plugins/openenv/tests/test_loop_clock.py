"""What a frame's time on the event loop counts: its CPU and its own waits, nothing else."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import spin
from seahaven_openenv.sessions.loop_clock import (
    LoopReading,
    LoopTime,
    loop_time,
    own_cpu_seconds,
    read_loop_clock,
)


def timed(work: Callable[[], object], *, contended: bool = False) -> tuple[LoopTime, float]:
    """The loop time of ``work`` and its wall time."""
    before = read_loop_clock()
    work()
    after = read_loop_clock()
    return loop_time(before, after, contended=contended), after.wall - before.wall


def least_waited(work: Callable[[], object], tries: int = 3) -> tuple[LoopTime, float]:
    """The try of ``work`` that waited least: a shared machine's noise can only add waits."""
    return min((timed(work) for _ in range(tries)), key=lambda outcome: outcome[0].waited)


def test_a_sleep_is_a_wait_and_no_cpu() -> None:
    took, _ = timed(lambda: time.sleep(0.05))
    assert took.waited >= 0.045
    assert took.cpu < 0.005


def test_cpu_work_is_cpu_and_no_wait() -> None:
    took, _ = least_waited(lambda: spin(0.05))
    assert took.cpu >= 0.045
    assert took.waited < 0.01


def reading(wall: float, thread_cpu: float, process_cpu: float, queued: float) -> LoopReading:
    """A reading of the clocks, in milliseconds, collections at zero."""
    return LoopReading(
        wall=wall / 1e3,
        thread_cpu=thread_cpu / 1e3,
        process_cpu=process_cpu / 1e3,
        queued=queued / 1e3,
        collecting=0.0,
    )


def test_time_the_other_threads_ran_or_a_cpu_was_busy_is_no_wait_of_the_work() -> None:
    # 100 ms on the clock: 10 ms of its own CPU, 20 ms in the run queue, and 50 ms in which
    # the process's other threads ran (holding the interpreter lock, for all it can tell).
    before = reading(1000, 100, 300, 40)
    after = reading(1100, 110, 360, 60)
    took = loop_time(before, after, contended=False)
    assert took.cpu == pytest.approx(0.010)
    assert took.waited == pytest.approx(0.020)
    # The same, with work in flight on the pool's threads: no wait can be told apart.
    assert loop_time(before, after, contended=True).waited == 0.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run queue is Linux's")
def test_waits_for_a_lock_holder_that_runs_are_not_the_work_s() -> None:
    # Live: a thread that spins holds the interpreter lock for its switch interval.
    stop = threading.Event()
    holder_id: list[int] = []

    def hold_the_lock() -> None:
        holder_id.append(threading.get_native_id())
        while not stop.is_set():
            pass

    def yield_often() -> None:
        # Each sleep(0) gives up the lock, and getting it back waits for the spinner's turn.
        for _ in range(20):
            time.sleep(0)

    holder = threading.Thread(target=hold_the_lock, daemon=True)
    holder.start()
    tries: list[tuple[LoopTime, float, float]] = []
    try:
        while not holder_id:
            time.sleep(0.001)
        # On a busy machine the holder may be off a CPU for a whole try: try again.
        for _ in range(20):
            queued = _queued_seconds(holder_id[0])
            took, wall = timed(yield_often)
            tries.append((took, wall, _queued_seconds(holder_id[0]) - queued))
            if sum(wall >= 0.02 for _, wall, _ in tries) == 3:
                break
    finally:
        stop.set()
        holder.join()
    # The work itself is a few microseconds; the wall time is the holder's turns. Only a
    # holder that another process preempted leaves waits nothing explains.
    assert any(wall >= 0.02 for _, wall, _ in tries), "the lock was never waited for"
    for took, wall, holder_queued in tries:
        assert took.cpu < 0.005
        if wall >= 0.02:
            assert took.waited <= holder_queued + 0.2 * wall


def _queued_seconds(thread: int) -> float:
    """The seconds a thread of this process has waited in the run queue."""
    fields = Path(f"/proc/self/task/{thread}/schedstat").read_text().split()
    return int(fields[1]) / 1e9


def test_under_contention_no_wait_is_counted() -> None:
    took, _ = timed(lambda: time.sleep(0.02), contended=True)
    assert took.waited == 0.0


def test_collections_are_left_out_of_the_cpu() -> None:
    garbage = [[[] for _ in range(20)] for _ in range(20_000)]
    # Objects a full collection must walk, so that it takes milliseconds.
    started = own_cpu_seconds()
    took, wall = timed(gc.collect)
    assert wall >= 0.002, "the collection was too quick to tell"
    assert took.cpu < wall / 4
    assert own_cpu_seconds() - started < wall / 4
    del garbage


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run queue is Linux's")
def test_time_waiting_for_a_cpu_is_not_the_work_s() -> None:
    # This thread and a busy process share one CPU: the work waits in the run queue.
    before_affinity = os.sched_getaffinity(0)
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(other.pid, {0})
        os.sched_setaffinity(0, {0})
        # The busy process is running once it has used some CPU.
        deadline = time.monotonic() + 10
        while _cpu_ticks(other.pid) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        took, wall = least_waited(lambda: spin(0.1))
    finally:
        os.sched_setaffinity(0, before_affinity)
        other.kill()
        other.wait()
    assert wall >= 0.15, "the CPU was never shared: the test proves nothing"
    assert took.cpu >= 0.095
    assert took.waited < 0.03


def _cpu_ticks(pid: int) -> int:
    """The user CPU clock ticks process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="schedstat is Linux's")
def test_a_thread_s_schedstat_descriptor_closes_when_the_thread_ends() -> None:
    def open_descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_descriptors()
    threads = [threading.Thread(target=read_loop_clock) for _ in range(20)]
    for thread in threads:
        thread.start()
        thread.join()
    gc.collect()
    assert open_descriptors() <= before
