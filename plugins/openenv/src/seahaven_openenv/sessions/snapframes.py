"""Snapshots over the wire: the server's one bounded store, and the tokens it hands out.

A ``{"type": "snapshot"}`` frame keeps ``Instance.snapshot()`` of its session's
instance here and answers a token; ``reset`` with ``from_snapshot`` and
``fork`` find it again. The store is ``seahaven.SnapshotStore``, its limits
set by ``seahaven serve`` (``--snapshot-limit``, ``--snapshot-memory``,
``--snapshot-age``); a refusal names the serve option that raises the limit.
Refusals use OpenEnv's error codes (``EXECUTION_ERROR``), with ``reason``
(``snapshot_refused``, ``unknown_snapshot``) saying which, so a stock OpenEnv
client reads every frame.
Each token remembers the ``step_count`` of the session it was taken on, so a
session reset from it counts on from there, as the original would have.
"""

from __future__ import annotations

import threading
from typing import Any

from seahaven import Snapshot, SnapshotRefused, SnapshotStore, UnknownSnapshot
from seahaven.errors import WorldBug
from seahaven_openenv.wire.echo import clip
from seahaven_openenv.wire.frames import FrameError

__all__ = [
    "DEFAULT_SNAPSHOT_AGE_SECONDS",
    "DEFAULT_SNAPSHOT_LIMIT",
    "DEFAULT_SNAPSHOT_MEMORY_MB",
    "MAX_FORK",
    "OPTIONS",
    "WireSnapshots",
]

#: The most snapshots a server keeps at once, by default (``--snapshot-limit``).
DEFAULT_SNAPSHOT_LIMIT = 64
#: The most memory, in MiB, the kept snapshots hold together, by default (``--snapshot-memory``).
DEFAULT_SNAPSHOT_MEMORY_MB = 1024
#: How many seconds a snapshot is kept, by default (``--snapshot-age``).
DEFAULT_SNAPSHOT_AGE_SECONDS = 3600.0
#: The most sessions one ``fork`` frame makes.
MAX_FORK = 64
#: The serve option that sets each of ``SnapshotStore``'s limits, for a refusal to name.
OPTIONS = {"max_count": "--snapshot-limit", "max_bytes": "--snapshot-memory"}


class WireSnapshots:
    """The snapshots one server keeps for its clients, by token, with their step counts.

    ``prefix`` is put before every token handed out (a worker's prefix under
    ``seahaven serve --workers``, so the front routes a token as it routes a
    session id) and taken off again when one is presented.
    """

    def __init__(
        self,
        *,
        max_count: int = DEFAULT_SNAPSHOT_LIMIT,
        max_mb: float = DEFAULT_SNAPSHOT_MEMORY_MB,
        max_age: float = DEFAULT_SNAPSHOT_AGE_SECONDS,
    ) -> None:
        if isinstance(max_mb, bool) or not isinstance(max_mb, int | float) or max_mb <= 0:
            raise WorldBug("the snapshot memory limit is a number of MiB above 0")
        # Evicting the oldest keeps a long run going; a token evicted is answered as such.
        self.store = SnapshotStore(
            max_count=max_count,
            max_bytes=max(1, int(max_mb * (1 << 20))),
            max_age=max_age,
            when_full="evict",
        )
        self.prefix = ""
        self._lock = threading.Lock()
        self._steps: dict[str, int] = {}

    def keep(self, snapshot: Snapshot, step_count: int) -> dict[str, Any]:
        """Keep ``snapshot``; the ``snapshot`` frame's answer data. ``FrameError`` when refused."""
        try:
            token = self.store.put(snapshot)
        except SnapshotRefused as error:
            option = OPTIONS.get(error.setting, error.setting)
            raise FrameError(
                "EXECUTION_ERROR",
                f"the snapshot was not kept: {error}. This server sets {error.setting} with "
                f"`seahaven serve {option}`",
                reason="snapshot_refused",
                limit=error.limit,
                option=option,
            ) from None
        with self._lock:
            self._steps[token] = step_count
            kept = set(self.store.tokens())
            for gone in [known for known in self._steps if known not in kept]:
                del self._steps[gone]
        return {
            "token": self.prefix + token,
            "nbytes": snapshot.nbytes,
            "call_count": snapshot.call_count,
            "step_count": step_count,
            "expires_in_s": self.store.max_age,
        }

    def find(self, token: Any) -> tuple[Snapshot, int]:
        """The snapshot and step count kept under a token handed out; ``FrameError`` if none."""
        if not isinstance(token, str) or not token:
            raise FrameError("VALIDATION_ERROR", "a snapshot token is a non-empty string")
        inner = token[len(self.prefix) :] if token.startswith(self.prefix) else token
        try:
            snapshot = self.store.get(inner)
        except UnknownSnapshot as error:
            why = str(error).split(": ", 1)[-1]
            raise FrameError(
                "EXECUTION_ERROR",
                f"no snapshot {clip(token)!r} is kept on this server: {why}. Snapshots live in "
                "the memory of the server (the worker, under --workers) that took them, until "
                "--snapshot-age passes, --snapshot-limit or --snapshot-memory evicts them, or "
                "the server stops",
                reason="unknown_snapshot",
                token=clip(token),
            ) from None
        with self._lock:
            step_count = self._steps.get(inner, 0)
        return snapshot, step_count

    def clear(self) -> None:
        """Drop every snapshot: the server is stopping."""
        self.store.clear()
        with self._lock:
            self._steps.clear()

    def __len__(self) -> int:
        return len(self.store)
