"""``SnapshotStore``: snapshots kept by token, under limits on their count, their bytes and
their age, for a server that hands tokens to its clients; ``SnapshotRefused`` when a limit
refuses one, ``UnknownSnapshot`` for a token that names none (or no longer does).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal

from seahaven.errors import SeahavenError, WorldBug
from seahaven.instance.snapshots import Snapshot

__all__ = ["SnapshotRefused", "SnapshotStore", "UnknownSnapshot"]


class SnapshotRefused(SeahavenError):
    """A ``SnapshotStore`` refused a snapshot: ``limit`` names the limit, ``setting`` its keyword.

    The message names no path and is fit for a client; a server that sets the
    limit under another name (a command-line flag) says so with ``limit`` and
    ``setting`` rather than parsing the text.
    """

    def __init__(self, message: str, *, limit: str, setting: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.setting = setting


class UnknownSnapshot(SeahavenError, LookupError):
    """No snapshot is kept under a token: never put, discarded, evicted or expired."""

    def __init__(self, token: str, why: str) -> None:
        super().__init__(f"no snapshot {token!r} is kept: {why}")
        self.token = token


When = Literal["evict", "refuse"]


class _Entry:
    __slots__ = ("kept_at", "snapshot")

    def __init__(self, snapshot: Snapshot, kept_at: float) -> None:
        self.snapshot = snapshot
        self.kept_at = kept_at


class SnapshotStore:
    """Snapshots by token, bounded by count, total bytes and age. Thread-safe.

    ``put`` keeps a snapshot and answers its token; ``get`` answers it again
    until it is discarded, evicted or older than ``max_age`` seconds (counted
    from ``put``). When a new snapshot would pass ``max_count`` or
    ``max_bytes``, ``when_full="evict"`` drops the oldest first, and
    ``"refuse"`` raises ``SnapshotRefused`` instead; a snapshot larger than
    ``max_bytes`` on its own is always refused. Dropping a snapshot releases
    its memory once nothing else holds it.
    """

    def __init__(
        self,
        *,
        max_count: int = 64,
        max_bytes: int = 1 << 30,
        max_age: float = 3600.0,
        when_full: When = "evict",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("max_count", max_count), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WorldBug(f"SnapshotStore({name}=...) takes an integer of 1 or more")
        if isinstance(max_age, bool) or not isinstance(max_age, int | float) or max_age <= 0:
            raise WorldBug("SnapshotStore(max_age=...) takes a number of seconds above 0")
        if when_full not in ("evict", "refuse"):
            raise WorldBug("SnapshotStore(when_full=...) takes 'evict' or 'refuse'")
        self.max_count = max_count
        """The most snapshots kept at once."""
        self.max_bytes = max_bytes
        """The most bytes (the sum of the snapshots' ``nbytes``) kept at once."""
        self.max_age = float(max_age)
        """How many seconds a snapshot is kept after ``put``."""
        self.when_full: When = when_full
        """What a full store does with a new snapshot: ``evict`` the oldest, or ``refuse`` it."""
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        # Why a token is gone, for a clear answer; bounded, oldest forgotten first.
        self._gone: OrderedDict[str, str] = OrderedDict()

    def put(self, snapshot: Snapshot) -> str:
        """Keep ``snapshot``; answer its token. Raises ``SnapshotRefused`` when it cannot."""
        if not isinstance(snapshot, Snapshot):
            raise WorldBug(f"SnapshotStore.put takes a seahaven.Snapshot, not {snapshot!r}")
        with self._lock:
            now = self._clock()
            self._expire(now)
            if snapshot.token in self._entries:
                return snapshot.token
            if snapshot.nbytes > self.max_bytes:
                raise SnapshotRefused(
                    f"a snapshot of {snapshot.nbytes} bytes is larger than the limit of "
                    f"{self.max_bytes} bytes for all snapshots kept; raise max_bytes",
                    limit="bytes",
                    setting="max_bytes",
                )
            full = self._full_for(snapshot)
            if full is not None and self.when_full == "refuse":
                limit, setting, text = full
                raise SnapshotRefused(
                    f"{text}; discard a snapshot, or raise {setting}", limit=limit, setting=setting
                )
            while self._full_for(snapshot) is not None:
                token, _ = next(iter(self._entries.items()))
                self._drop(token, "evicted to make room for newer snapshots")
            self._entries[snapshot.token] = _Entry(snapshot, now)
            self._bytes += snapshot.nbytes
            self._gone.pop(snapshot.token, None)
            return snapshot.token

    def get(self, token: str) -> Snapshot:
        """The snapshot kept under ``token``; ``UnknownSnapshot`` says why when there is none."""
        with self._lock:
            self._expire(self._clock())
            entry = self._entries.get(token) if isinstance(token, str) else None
            if entry is None:
                why = self._gone.get(token) if isinstance(token, str) else None
                raise UnknownSnapshot(str(token), why or "no snapshot was kept under it")
            return entry.snapshot

    def discard(self, token: str) -> bool:
        """Stop keeping the snapshot under ``token``; whether one was kept."""
        with self._lock:
            if token not in self._entries:
                return False
            self._drop(token, "discarded")
            return True

    def clear(self) -> None:
        """Stop keeping every snapshot."""
        with self._lock:
            for token in list(self._entries):
                self._drop(token, "discarded")

    @property
    def nbytes(self) -> int:
        """The bytes the snapshots kept now hold, together."""
        with self._lock:
            self._expire(self._clock())
            return self._bytes

    def tokens(self) -> list[str]:
        """The tokens kept now, oldest first."""
        with self._lock:
            self._expire(self._clock())
            return list(self._entries)

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._entries)

    def __contains__(self, token: object) -> bool:
        with self._lock:
            self._expire(self._clock())
            return token in self._entries

    def _full_for(self, snapshot: Snapshot) -> tuple[str, str, str] | None:
        if len(self._entries) + 1 > self.max_count:
            return (
                "count",
                "max_count",
                f"{len(self._entries)} snapshots are kept, the limit of max_count={self.max_count}",
            )
        if self._bytes + snapshot.nbytes > self.max_bytes:
            return (
                "bytes",
                "max_bytes",
                f"the snapshots kept hold {self._bytes} bytes, and this one's {snapshot.nbytes} "
                f"would pass the limit of max_bytes={self.max_bytes}",
            )
        return None

    def _expire(self, now: float) -> None:
        while self._entries:
            token, entry = next(iter(self._entries.items()))
            if now - entry.kept_at < self.max_age:
                return
            self._drop(token, f"expired, being older than max_age={self.max_age:g} seconds")

    def _drop(self, token: str, why: str) -> None:
        entry = self._entries.pop(token)
        self._bytes -= entry.snapshot.nbytes
        self._gone[token] = why
        while len(self._gone) > 4 * self.max_count:
            self._gone.popitem(last=False)
