"""What holds for every instance of a process: its call slots, and stopping them all.

The call slots (``CallSlots``, the process's own from ``call_slots()``) bound
how many tool calls run at once across all instances in the process. They never
reject: extra calls queue, and they are served first come, first served. A
released slot is handed straight to the longest waiter, so a thread that
releases and immediately asks again goes to the back of the queue instead of
barging ahead. Nested calls and ``bulk()`` take no slot.

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

__all__ = [
    "CallSlots",
    "call_slots",
    "concurrency",
    "default_concurrency",
    "interrupt_all",
    "set_concurrency",
    "watch",
]


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
    """One queued call: woken with a slot already counted for it, or with the slots removed."""

    __slots__ = ("counted", "event")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.counted = False


class CallSlots:
    """A number of call slots, with a FIFO queue and direct hand-off of released slots."""

    __slots__ = ("_capacity", "_in_use", "_lock", "_waiters")

    def __init__(self, capacity: int) -> None:
        self._lock = threading.Lock()
        self._capacity = capacity
        self._in_use = 0
        self._waiters: deque[_Ticket] = deque()

    @property
    def capacity(self) -> int:
        """The number of slots in force; 0 means calls take none and never wait."""
        return self._capacity

    def acquire(self) -> bool:
        """Take a slot, waiting in line if none is free. Returns whether a slot was counted."""
        # The lock taken and given back by hand, not by ``with``: every call comes here.
        lock = self._lock
        lock.acquire()
        try:
            if self._capacity == 0:
                return False
            if not self._waiters and self._in_use < self._capacity:
                self._in_use += 1
                return True
            ticket = _Ticket()
            self._waiters.append(ticket)
        finally:
            lock.release()
        ticket.event.wait()
        return ticket.counted

    def release(self) -> None:
        """Give a counted slot back, handing it to the longest waiter if there is one."""
        lock = self._lock
        lock.acquire()
        try:
            self._in_use -= 1
            if self._waiters:
                self._serve()
        finally:
            lock.release()

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


_slots = CallSlots(default_concurrency())


def call_slots() -> CallSlots:
    """The call slots in force for this process."""
    return _slots


def concurrency() -> int:
    """How many call slots the process has, or 0 when calls take none."""
    return _slots.capacity


def set_concurrency(size: int) -> None:
    """Set how many call slots there are; 0 removes them. Calls already running keep theirs."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise WorldBug(f"set_concurrency takes a whole number of slots, 0 or more, not {size!r}")
    _slots.resize(size)
