"""A connection's incoming messages, read one ahead while a frame's work runs on a worker.

Reading ahead is how the server notices, while a frame's work is on a worker
thread, that its client is gone, so the work can be abandoned.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Mapping
from typing import Any

from fastapi import WebSocket

from seahaven_openenv.wire.close_codes import CLOSE_NORMAL

__all__ = ["MAX_HELD_BYTES", "MAX_HELD_MESSAGES", "Inbox"]

# What a connection waiting for a seat may send before the server stops reading it (its wait
# is bounded anyway): a client sends one frame and waits for its answer, so a few suffice.
MAX_HELD_MESSAGES = 16
MAX_HELD_BYTES = 1024 * 1024


class Inbox:
    """A connection's incoming messages, read one ahead while a frame's work is on a worker."""

    __slots__ = ("_ahead", "_ends", "_held", "websocket")

    def __init__(self, websocket: WebSocket, ends: frozenset[int] | None = None) -> None:
        """``ends``: the only disconnect codes that end the connection's work, when not all do."""
        self.websocket = websocket
        self._ahead: asyncio.Future[Any] | None = None
        self._ends = ends
        # Messages read while the connection waited for a seat, oldest first.
        self._held: collections.deque[Mapping[str, Any]] = collections.deque()

    async def hold_until_gone(self) -> None:
        """Read and hold messages until the client leaves (then return), or enough are held.

        For a connection waiting for a seat: its place is given up the moment it
        goes. Past ``MAX_HELD_MESSAGES`` or ``MAX_HELD_BYTES`` (the first message
        is always held) it stops reading and waits to be cancelled.
        """
        size = 0
        while len(self._held) < MAX_HELD_MESSAGES and (not self._held or size <= MAX_HELD_BYTES):
            try:
                # Shielded: a seat granted cancels this wait, and the read goes on for the session.
                message = await asyncio.shield(self.read_ahead())
            except Exception:
                # The connection failed under the read: the client is gone.
                self._ahead = None
                return
            self._ahead = None
            if message["type"] == "websocket.disconnect":
                return
            self._held.append(message)
            size += len(message.get("text") or message.get("bytes") or b"")
        await asyncio.Event().wait()

    async def next(self) -> Mapping[str, Any]:
        """The next message: one held while waiting for a seat, one read ahead, or a new one."""
        if self._held:
            return self._held.popleft()
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            message: Mapping[str, Any] = await ahead
            return message
        return await self.websocket.receive()

    def read_ahead(self) -> asyncio.Future[Any]:
        """Start reading the next message, if that has not begun."""
        if self._ahead is None:
            self._ahead = asyncio.ensure_future(self.websocket.receive())
        return self._ahead

    def discard(self) -> None:
        """Stop reading ahead: the connection is over."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        if ahead.done():
            if not ahead.cancelled():
                ahead.exception()  # retrieved, so it is never reported as lost
        else:
            ahead.cancel()

    def ended(self) -> bool:
        """Whether the message read ahead says the connection is over."""
        ahead = self._ahead
        if ahead is None or not ahead.done():
            return False
        if ahead.cancelled() or ahead.exception() is not None:
            return self._ends is None
        message = ahead.result()
        if message["type"] != "websocket.disconnect":
            return False
        return self._ends is None or message.get("code", CLOSE_NORMAL) in self._ends
