"""What the worker processes of one server share: a board of counters, and session id prefixes.

``seahaven serve --workers N`` runs N server processes behind one front process
(``seahaven_openenv.front.workers``). They share a ``Board``: a small table in shared
memory, made before the workers are forked, with one row a worker. Each worker
writes its own row's session count whenever its sessions change; the front
writes the rest (pid, generation, deaths, sessions lost). Any worker answers
``/capacity``, ``/health`` and ``/metrics`` for the whole server by reading it,
so the front process never speaks HTTP and each session is counted once, by the
worker that holds it.

A session id a worker makes (``openenv/session/create``) starts with the
worker's prefix, ``w<index>g<generation>.``: the front routes a request naming
it to that worker. A ``.`` never occurs in the random part (URL-safe base64), so
the prefix is unambiguous, and the random part is as long as it was without it.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "Board",
    "CountedSessions",
    "Seat",
    "health_document",
    "metrics_document",
    "owner_of",
    "prefix_for",
]

K = TypeVar("K")
V = TypeVar("V")

# Per worker: pid, generation, ready, alive, sessions open, sessions ever opened, deaths,
# sessions lost, the last death (wall clock), when the head of its admission queue began
# waiting (the system's monotonic clock, one for every process; 0 while none waits), and how
# many new connections wait in that queue.
_FIELDS = (
    "pid",
    "generation",
    "ready",
    "alive",
    "sessions",
    "opened",
    "deaths",
    "lost",
    "died_at",
    "queued_since",
    "waiting",
)
_WIDTH = len(_FIELDS)
# After a worker dies, /health says "degraded" this long (or while it is down), so a probe
# that polls every few seconds sees it even when the restart is quick.
DEGRADED_SECONDS = 60.0
_PREFIX = re.compile(r"w(\d{1,4})g(\d{1,9})\.")


def prefix_for(index: int, generation: int) -> str:
    """The prefix of the ids worker ``index`` makes in its ``generation``-th life."""
    return f"w{index}g{generation}."


def owner_of(token: str) -> tuple[int, int] | None:
    """The (worker index, generation) a token's prefix names, or ``None`` for no prefix."""
    found = _PREFIX.match(token)
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2))


class Board:
    """The shared table of a server's workers: one row of counters each (see the module)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.started_at = time.time()
        # No lock: every field has one writer, and a reader sums whole 8-byte doubles.
        self._cells: Any = multiprocessing.RawArray("d", workers * _WIDTH)

    def get(self, index: int, field: str) -> float:
        """One counter of worker ``index``."""
        return float(self._cells[index * _WIDTH + _FIELDS.index(field)])

    def set(self, index: int, field: str, value: float) -> None:
        """Write one counter of worker ``index`` (only the field's one writer does)."""
        self._cells[index * _WIDTH + _FIELDS.index(field)] = float(value)

    def total_sessions(self) -> int:
        """Sessions open now, across every live worker."""
        return sum(
            int(self.get(index, "sessions"))
            for index in range(self.workers)
            if self.get(index, "alive")
        )

    def earliest_waiting(self, besides: int) -> float:
        """When the longest-waiting head of another live worker's queue began waiting; 0: none."""
        times = [
            self.get(index, "queued_since")
            for index in range(self.workers)
            if index != besides and self.get(index, "alive")
        ]
        return min((since for since in times if since), default=0.0)

    def rows(self) -> list[dict[str, Any]]:
        """Every worker's row, as ``/metrics`` shows it."""
        rows = []
        for index in range(self.workers):
            alive = bool(self.get(index, "alive")) and bool(self.get(index, "ready"))
            died_at = self.get(index, "died_at")
            rows.append(
                {
                    "index": index,
                    "pid": int(self.get(index, "pid")) or None,
                    "generation": int(self.get(index, "generation")),
                    "alive": alive,
                    "active_sessions": int(self.get(index, "sessions")) if alive else 0,
                    "sessions_opened": int(self.get(index, "opened")),
                    "deaths": int(self.get(index, "deaths")),
                    "sessions_lost": int(self.get(index, "lost")),
                    "last_death": _utc(died_at) if died_at else None,
                    "waiting": int(self.get(index, "waiting")) if alive else 0,
                }
            )
        return rows


class Seat:
    """One worker's place on a ``Board``: its index and generation, and its id prefix."""

    def __init__(self, board: Board, index: int, generation: int) -> None:
        self.board = board
        self.index = index
        self.generation = generation
        self.prefix = prefix_for(index, generation)

    def publish(self, sessions: int, opened: int = 0) -> None:
        """Write this worker's session count; ``opened`` more sessions began since the last."""
        self.board.set(self.index, "sessions", sessions)
        if opened:
            self.board.set(self.index, "opened", self.board.get(self.index, "opened") + opened)

    def announce_waiting(self, since: float, waiting: int) -> None:
        """Write when this worker's longest-waiting new connection began waiting (0: none)."""
        self.board.set(self.index, "queued_since", since)
        self.board.set(self.index, "waiting", waiting)

    def earliest_waiting_elsewhere(self) -> float:
        """``Board.earliest_waiting`` of every worker but this one."""
        return self.board.earliest_waiting(self.index)

    def lost_owner(self, token: str) -> str | None:
        """Why a token this worker never made names no session here, when its prefix says so."""
        owner = owner_of(token)
        if owner is None or owner == (self.index, self.generation):
            return None
        index, generation = owner
        if index == self.index:
            return (
                f"worker {index} of this server held it, and that worker process ended "
                f"(it died and was restarted: this is its life {self.generation}, the session "
                f"was made in life {generation}); its sessions were lost with it"
            )
        return (
            f"worker {index} of this server held it, and that worker process ended (it died); "
            "its sessions were lost with it"
        )


class CountedSessions(dict[K, V]):
    """A worker's ``Hub.sessions``: a dict that publishes its length whenever it changes."""

    def __init__(self, publish: Callable[[int, int], None]) -> None:
        super().__init__()
        self._publish = publish
        publish(0, 0)

    def __setitem__(self, key: K, value: V) -> None:
        new = key not in self
        super().__setitem__(key, value)
        self._publish(len(self), 1 if new else 0)

    def __delitem__(self, key: K) -> None:
        super().__delitem__(key)
        self._publish(len(self), 0)

    def pop(self, key: K, *default: Any) -> Any:
        """``dict.pop``, publishing the new length."""
        value = super().pop(key, *default)
        self._publish(len(self), 0)
        return value

    def clear(self) -> None:
        """``dict.clear``, publishing zero."""
        super().clear()
        self._publish(0, 0)


def health_document(seat: Seat | None) -> dict[str, Any]:
    """What ``/health`` answers: ``healthy``, or ``degraded`` naming the workers that died.

    A server of one process (no ``seat``) is healthy while it answers, as before.
    """
    if seat is None:
        return {"status": "healthy"}
    rows = seat.board.rows()
    now = time.time()
    down = [row["index"] for row in rows if not row["alive"]]
    recent = [
        row["index"]
        for row in rows
        if row["deaths"] and now - seat.board.get(row["index"], "died_at") < DEGRADED_SECONDS
    ]
    if not down and not recent:
        return {"status": "healthy"}
    lost = sum(row["sessions_lost"] for row in rows)
    parts = []
    if down:
        parts.append(f"worker(s) {', '.join(map(str, down))} down")
    if recent:
        parts.append(
            f"worker(s) {', '.join(map(str, recent))} died in the last {DEGRADED_SECONDS:g} s"
        )
    return {
        "status": "degraded",
        "reason": "; ".join(parts) + f"; {lost} session(s) lost so far (GET /metrics)",
        "workers_down": down,
        "sessions_lost": lost,
    }


def metrics_document(
    seat: Seat | None,
    *,
    active_sessions: int,
    max_sessions: int,
    started_at: float,
    waiting: int = 0,
) -> dict[str, Any]:
    """What ``/metrics`` answers: the server's sessions and capacity, and each worker's row.

    ``waiting`` is how many new connections wait for a seat in a server of one process.
    """
    if seat is None:
        workers = [
            {
                "index": 0,
                "pid": os.getpid(),
                "generation": 0,
                "alive": True,
                "active_sessions": active_sessions,
                "sessions_opened": None,
                "deaths": 0,
                "sessions_lost": 0,
                "last_death": None,
                "waiting": waiting,
            }
        ]
    else:
        workers = seat.board.rows()
    return {
        "active_sessions": active_sessions,
        "max_sessions": max_sessions,
        "started_at": _utc(started_at),
        "workers": workers,
        "workers_alive": sum(1 for row in workers if row["alive"]),
        "worker_deaths": sum(row["deaths"] for row in workers),
        "sessions_lost": sum(row["sessions_lost"] for row in workers),
        "waiting": sum(row["waiting"] for row in workers),
    }


def _utc(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
