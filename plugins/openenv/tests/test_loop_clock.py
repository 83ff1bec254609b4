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
from seahaven_openenv.loop_clock import LoopTime, loop_time, own_cpu_seconds, read_loop_clock


def timed(work: Callable[[], object], *, contended: bool = False) -> tuple[LoopTime, float]:
    """The loop time of ``work`` and its wall time."""
    before = read_loop_clock()
    work()
    after = read_loop_clock()
    return loop_time(before, after, contended=contended), after.wall - before.wall


def test_a_sleep_is_a_wait_and_no_cpu() -> None:
    took, _ = timed(lambda: time.sleep(0.05))
    assert took.waited >= 0.045
    assert took.cpu < 0.005


def test_cpu_work_is_cpu_and_no_wait() -> None:
    took, _ = timed(lambda: spin(0.05))
    assert took.cpu >= 0.045
    assert took.waited < 0.01


def test_waits_for_the_interpreter_lock_are_not_the_work_s() -> None:
    stop = threading.Event()

    def hold_the_lock() -> None:
        while not stop.is_set():
            pass

    def yield_often() -> None:
        # Each sleep(0) gives up the lock, and getting it back waits for the spinner's turn.
        for _ in range(20):
            time.sleep(0)

    holder = threading.Thread(target=hold_the_lock, daemon=True)
    holder.start()
    try:
        took, wall = timed(yield_often)
    finally:
        stop.set()
        holder.join()
    # The work itself is a few microseconds; the wall time is the holder's turns.
    assert wall >= 0.02, "the lock was never waited for: the test proves nothing"
    assert took.waited < wall / 4
    assert took.cpu < 0.005


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
        took, wall = timed(lambda: spin(0.1))
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
