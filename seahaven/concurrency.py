"""What holds for every instance of a process: the concurrency gate, and stopping them all.

The gate bounds how many tool calls run at once across all instances in the
process. It never rejects: extra calls queue, and they are served first come,
first served. A released slot is handed straight to the longest waiter, so a
thread that releases and immediately asks again goes to the back of the queue
instead of barging ahead. Nested calls and ``bulk()`` bypass the gate.

``interrupt_all()`` stops the statement every instance of the process is running,
those still being made (their ``setup_sql``) included: what a server calls when it
shuts down, so a runaway query does not hold up the exit.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from typing import Protocol

from seahaven.errors import WorldBug

__all__ = ["concurrency", "default_concurrency", "interrupt_all", "set_concurrency", "watch"]


class Interruptible(Protocol):
    """Something running statements that another thread may stop: an instance."""

    def interrupt(self) -> None:
        """Stop the statement it runs now, if any."""


_watched: weakref.WeakSet[Interruptible] = weakref.WeakSet()
_watched_lock = threading.Lock()


def watch(target: Interruptible) -> None:
    """Let ``interrupt_all()`` reach ``target`` for as long as it lives."""
    with _watched_lock:
        _watched.add(target)


def interrupt_all() -> None:
    """Stop the statement each instance of this process runs now; safe from any thread.

    Each one's statement fails as ``Instance.interrupt()`` makes it; an instance
    being made fails to be made, and leaves nothing behind.
    """
    with _watched_lock:
        targets = list(_watched)
    for target in targets:
        target.interrupt()


def default_concurrency() -> int:
    """``min(cpus, 16)``, counting the CPUs this process may run on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 16))


class _Ticket:
    """One queued call: woken with a slot already counted for it, or with the gate removed."""

    __slots__ = ("counted", "event")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.counted = False


class FairGate:
    """A counting gate with a FIFO queue and direct hand-off of released slots."""

    __slots__ = ("_capacity", "_in_use", "_lock", "_waiters")

    def __init__(self, capacity: int) -> None:
        self._lock = threading.Lock()
        self._capacity = capacity
        self._in_use = 0
        self._waiters: deque[_Ticket] = deque()

    @property
    def capacity(self) -> int:
        """The size in force; 0 means no gate."""
        return self._capacity

    def acquire(self) -> bool:
        """Take a slot, waiting in line if none is free. Returns whether a slot was counted."""
        with self._lock:
            if self._capacity == 0:
                return False
            if not self._waiters and self._in_use < self._capacity:
                self._in_use += 1
                return True
            ticket = _Ticket()
            self._waiters.append(ticket)
        ticket.event.wait()
        return ticket.counted

    def release(self) -> None:
        """Give a counted slot back, handing it to the longest waiter if there is one."""
        with self._lock:
            self._in_use -= 1
            self._serve()

    def resize(self, capacity: int) -> None:
        """Change the size. Calls already running are not affected."""
        with self._lock:
            self._capacity = capacity
            if capacity == 0:
                while self._waiters:
                    self._waiters.popleft().event.set()
            else:
                self._serve()

    def waiting(self) -> int:
        """How many calls are queued."""
        return len(self._waiters)

    def _serve(self) -> None:
        while self._waiters and self._in_use < self._capacity:
            ticket = self._waiters.popleft()
            self._in_use += 1
            ticket.counted = True
            ticket.event.set()


_gate = FairGate(default_concurrency())


def gate() -> FairGate:
    """The gate in force for this process."""
    return _gate


def concurrency() -> int:
    """The gate's size, or 0 when there is no gate."""
    return _gate.capacity


def set_concurrency(size: int) -> None:
    """Resize the gate; 0 removes it. Calls already running are not affected."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise WorldBug(f"set_concurrency takes a whole number of slots, 0 or more, not {size!r}")
    _gate.resize(size)
