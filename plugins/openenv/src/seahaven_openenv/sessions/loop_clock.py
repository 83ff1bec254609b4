"""How long a frame's work held the event loop, leaving out what says nothing about the work.

The session pool moves a kind of work to worker threads once its time on the
loop passes a budget (``seahaven_openenv.sessions.session_pool``). Wall time is the
wrong measure on a busy machine: it counts

- the moments the operating system ran another process on this thread's CPU
  (three processes on two CPUs: a 0.2 ms call was seen to take 68 ms);
- the waits for the interpreter lock while a worker thread of this process
  held it (once one kind runs on a worker, every cheap call on the loop grows);
- a garbage collection that happened to start during the work.

Counting them moved cheap calls to worker threads, where every one pays a
thread hand-off, so a loaded server got slower the more it was loaded. What is
counted instead is this thread's own CPU time and, apart, the time it waited for
something other than a CPU or the lock (a ``sleep``, a disk, a socket). Both
hold up every other session's frames; a worker thread frees the loop for the
whole of a wait, but only between the lock's switches for CPU work, so the pool
gives the two different budgets. The run queue's delay is read from Linux's
``schedstat``; elsewhere it counts as waiting.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from dataclasses import dataclass

__all__ = ["LoopReading", "LoopTime", "loop_time", "own_cpu_seconds", "read_loop_clock"]


class _CollectorClock:
    """The CPU seconds each thread has spent in garbage collections.

    A full collection under load takes tens of milliseconds, and it lands on whatever
    frame is running: it says nothing about that frame's work. The collector runs in the
    thread that triggered it, so each thread's share is its own.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        gc.callbacks.append(self._observe)

    def _observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._local.started = time.thread_time()
        elif hasattr(self._local, "started"):
            self._local.spent = self.spent() + time.thread_time() - self._local.started

    def spent(self) -> float:
        """This thread's seconds in collections so far."""
        spent: float = getattr(self._local, "spent", 0.0)
        return spent


class _Schedstat:
    """One thread's ``schedstat`` file, open while the thread lives; closed with it."""

    __slots__ = ("fd",)

    def __init__(self) -> None:
        try:
            path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
            self.fd = os.open(path, os.O_RDONLY)
        except OSError:
            self.fd = -1

    def __del__(self) -> None:
        # A thread's locals are dropped when it ends: its descriptor goes with them.
        if self.fd >= 0:
            os.close(self.fd)


class _RunQueueClock:
    """This thread's seconds spent runnable but waiting for a CPU (Linux), else zero."""

    def __init__(self) -> None:
        self._local = threading.local()

    def waited(self) -> float:
        """The run-queue delay so far, in seconds; 0.0 where the kernel does not say."""
        schedstat = getattr(self._local, "schedstat", None)
        if schedstat is None:
            schedstat = self._local.schedstat = _Schedstat()
        if schedstat.fd < 0:
            return 0.0
        try:
            # Fields: time on a CPU, time waiting on a run queue (both ns), timeslices.
            return int(os.pread(schedstat.fd, 128, 0).split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0


_collector = _CollectorClock()
_run_queue = _RunQueueClock()


def own_cpu_seconds() -> float:
    """The calling thread's CPU seconds so far, its collections left out."""
    return time.thread_time() - _collector.spent()


@dataclass(frozen=True, slots=True)
class LoopReading:
    """The clocks a frame's time is worked out from, read in the thread that runs it."""

    wall: float
    thread_cpu: float
    process_cpu: float
    queued: float
    collecting: float


def read_loop_clock() -> LoopReading:
    """Read every clock now, in the calling thread."""
    return LoopReading(
        wall=time.perf_counter(),
        thread_cpu=time.thread_time(),
        process_cpu=time.process_time(),
        queued=_run_queue.waited(),
        collecting=_collector.spent(),
    )


@dataclass(frozen=True, slots=True)
class LoopTime:
    """A frame's own time on the event loop, in seconds: its CPU, and what it waited for."""

    cpu: float
    waited: float


def loop_time(before: LoopReading, after: LoopReading, *, contended: bool) -> LoopTime:
    """The work's own time between two readings: its CPU, and its waits for anything else.

    The thread's time off a CPU is a wait for a CPU (the run queue's delay), for the
    interpreter lock, or for something the work asked for (a ``sleep``, a disk). A wait
    for the lock is at most the CPU time the process's other threads used meanwhile,
    unless the lock's holder was itself waiting for a CPU: so with ``contended`` (other
    threads had work in flight) the waits cannot be told apart, and none is counted.
    Collections are left out of the CPU.
    """
    wall = after.wall - before.wall
    cpu = after.thread_cpu - before.thread_cpu
    others = max(0.0, after.process_cpu - before.process_cpu - cpu)
    queued = after.queued - before.queued
    waited = 0.0 if contended else max(0.0, wall - cpu - queued - others)
    return LoopTime(cpu=max(0.0, cpu - (after.collecting - before.collecting)), waited=waited)
