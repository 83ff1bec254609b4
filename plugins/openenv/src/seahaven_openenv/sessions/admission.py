"""Admission past capacity: new sessions wait their turn in a bounded queue, or hear when to retry.

A server holds at most ``max_concurrent_envs`` sessions. A new ``/ws``
connection that finds them all taken waits for a seat: in a queue of at most
``queue`` connections, first come first served, for at most ``wait`` seconds.
A seat that frees goes to the connection at the head of the queue; one that
goes away while it waits gives up its place at once. A connection that finds
the queue full, or whose wait runs out, is refused with ``CAPACITY_REACHED``
and ``retry_after``, the seconds after which to try again (what
``SeahavenClient`` honours). A session already admitted never waits on the
queue: it is served exactly as before.

Under ``seahaven serve --workers N`` the seats are the server's, counted on
the shared board (``seahaven_openenv.sessions.pool``), and each worker keeps its own
queue. Each worker publishes when its head connection began waiting, and a
worker admits its head only when no other worker's head waited longer, so the
order holds across workers too. A seat freed in another worker is seen within
``POLL_SECONDS``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Callable
from typing import Any, Literal

from seahaven.errors import WorldBug

__all__ = [
    "DEFAULT_ADMISSION_QUEUE",
    "DEFAULT_ADMISSION_WAIT_SECONDS",
    "DEFAULT_RETRY_AFTER_SECONDS",
    "POLL_SECONDS",
    "Admission",
]

#: How many new connections may wait for a seat at once (per worker). A waiting connection
#: holds a socket and its first frames; one refused comes back after ``retry_after`` for a new
#: handshake, so a short queue under a crowd spends the server on handshakes (16,384 sessions
#: at a 500-session capacity: benchmarks/many_sessions.py, docs/performance.md).
DEFAULT_ADMISSION_QUEUE = 8192
#: How long a new connection waits for a seat before it is refused. Under OpenEnv's
#: 60-second message timeout, so a stock client hears the refusal rather than timing out, and
#: with the reset that then gets its seat under 30 s.
DEFAULT_ADMISSION_WAIT_SECONDS = 20.0
#: The seconds a refusal tells the client to wait before it tries again.
DEFAULT_RETRY_AFTER_SECONDS = 5
#: How often a non-empty queue looks at the seats again: sessions end on paths that do not
#: tell it (the reaper, a resume grace running out, another worker's sessions).
POLL_SECONDS = 0.1


class Admission:
    """The seats of one server (or one worker of it) and the connections waiting for one.

    ``free_seats`` answers how many sessions the server may still open (its
    capacity less the sessions open on every worker). ``wait_for_seat`` and
    ``admits_now`` are the two ways in; a caller told yes must take its seat
    (register its session) before it next awaits anything.
    """

    def __init__(
        self,
        free_seats: Callable[[], int],
        *,
        queue: int = DEFAULT_ADMISSION_QUEUE,
        wait: float = DEFAULT_ADMISSION_WAIT_SECONDS,
        retry_after: int = DEFAULT_RETRY_AFTER_SECONDS,
    ) -> None:
        if isinstance(queue, bool) or not isinstance(queue, int) or queue < 0:
            raise WorldBug("admission_queue is a whole number of connections, 0 (no queue) or more")
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 1e9:
            raise WorldBug("admission_wait is a number of seconds, 0 (no waiting) or more")
        if isinstance(retry_after, bool) or not isinstance(retry_after, int) or retry_after < 1:
            raise WorldBug("retry_after is a whole number of seconds, 1 or more")
        self.queue = queue
        self.wait = float(wait)
        self.retry_after = retry_after
        self._free_seats = free_seats
        # Each waiting connection's seat, resolved when it is granted, with when it began waiting.
        self._waiting: collections.deque[tuple[asyncio.Future[None], float]] = collections.deque()
        # Seats granted to connections that have not yet taken them.
        self._granted = 0
        self._poller: asyncio.Task[None] | None = None
        # Under workers: say when this worker's head began waiting (0: none waits), and the
        # earliest such time of the other workers (0: none waits there).
        self._announce: Callable[[float, int], None] = lambda since, waiting: None
        self._elsewhere: Callable[[], float] = lambda: 0.0

    def share(self, announce: Callable[[float, int], None], elsewhere: Callable[[], float]) -> None:
        """Be one worker's queue among several: publish this head, respect the others'."""
        self._announce = announce
        self._elsewhere = elsewhere
        self._publish_head()

    @property
    def waiting(self) -> int:
        """How many connections wait for a seat here now."""
        return len(self._waiting)

    def seats(self) -> int:
        """Seats free now, less those granted and not yet taken."""
        return self._free_seats() - self._granted

    def admits_now(self, n: int = 1) -> bool:
        """Whether ``n`` new sessions may start at once: seats for them, and nobody before them."""
        return not self._waiting and not self._elsewhere() and self.seats() >= n

    async def wait_for_seat(
        self, gone: asyncio.Future[Any]
    ) -> Literal["admitted", "full", "waited", "gone"]:
        """Wait in the queue for a seat: ``admitted``, or why not.

        ``gone`` completes when the client leaves, which gives the place up at
        once (``gone``). ``full``: the queue had no room (or there is none);
        ``waited``: no seat freed within ``wait`` seconds. The caller refuses
        those two with ``refusal``.
        """
        if self.admits_now():
            return "admitted"
        if len(self._waiting) >= self.queue or self.wait <= 0:
            return "full"
        seat: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (seat, time.monotonic())
        self._waiting.append(entry)
        self._publish_head()
        self._grant()
        if self._poller is None and self._waiting:
            self._poller = asyncio.create_task(self._poll())
        granted = False
        try:
            if not seat.done():
                await asyncio.wait(
                    {seat, gone}, timeout=self.wait, return_when=asyncio.FIRST_COMPLETED
                )
        finally:
            if seat.done() and not seat.cancelled():
                self._granted -= 1
                granted = True
            else:
                seat.cancel()
                with contextlib.suppress(ValueError):
                    self._waiting.remove(entry)
                self._publish_head()
            if not granted or gone.done():
                # A seat granted to a client that left meanwhile passes to the next one.
                self._grant()
        if gone.done():
            return "gone"
        return "admitted" if granted else "waited"

    def nudge(self) -> None:
        """A session ended: give its seat to the head of the queue."""
        if self._waiting:
            self._grant()

    def refusal(self, active: int, capacity: int, waited: bool) -> tuple[str, dict[str, Any]]:
        """The message and data of a ``CAPACITY_REACHED`` refusal of a new session."""
        if waited:
            why = f"no seat freed in the {self.wait:g} s a new session may wait for one"
        elif self.queue and self.wait > 0:
            why = f"{self.queue} more already wait for a seat, as many as may"
        else:
            why = "this server queues no new session past its capacity"
        message = (
            f"the server holds {capacity} sessions, its maximum, and {why}; "
            f"retry after {self.retry_after} s"
        )
        data = {
            "active_sessions": active,
            "max_sessions": capacity,
            "retry_after": self.retry_after,
            "waiting": self.waiting,
        }
        return message, data

    def _grant(self) -> None:
        """Grant seats to the connections at the head of the queue while there are seats."""
        while self._waiting and self.seats() > 0:
            seat, since = self._waiting[0]
            if seat.done():
                self._waiting.popleft()
                continue
            elsewhere = self._elsewhere()
            if elsewhere and elsewhere < since:
                # Another worker's head has waited longer: the seat is its.
                break
            self._waiting.popleft()
            seat.set_result(None)
            self._granted += 1
        self._publish_head()

    def _publish_head(self) -> None:
        self._announce(self._waiting[0][1] if self._waiting else 0.0, len(self._waiting))

    async def _poll(self) -> None:
        """While anyone waits, look at the seats every ``POLL_SECONDS``."""
        try:
            while self._waiting:
                await asyncio.sleep(POLL_SECONDS)
                self._grant()
        finally:
            self._poller = None

    async def shutdown(self) -> None:
        """Stop looking: the server is stopping (each waiting connection ends with it)."""
        poller, self._poller = self._poller, None
        if poller is not None:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
