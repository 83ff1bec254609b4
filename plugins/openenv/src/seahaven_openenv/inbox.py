"""A connection's incoming messages, read one ahead while a frame's work runs on a worker.

Reading ahead is how the server notices, while a frame's work is on a worker
thread, that its client is gone, so the work can be abandoned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from fastapi import WebSocket

from seahaven_openenv.close_codes import CLOSE_NORMAL

__all__ = ["Inbox"]


class Inbox:
    """A connection's incoming messages, read one ahead while a frame's work is on a worker."""

    __slots__ = ("_ahead", "_ends", "websocket")

    def __init__(self, websocket: WebSocket, ends: frozenset[int] | None = None) -> None:
        """``ends``: the only disconnect codes that end the connection's work, when not all do."""
        self.websocket = websocket
        self._ahead: asyncio.Future[Any] | None = None
        self._ends = ends

    async def next(self) -> Mapping[str, Any]:
        """The next message: the one read ahead, or a fresh one."""
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
