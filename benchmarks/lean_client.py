"""A lean WebSocket client for load generation: text frames over asyncio streams.

When the clients share the server's CPUs, every microsecond a client spends on
a frame is taken from the server, and the ``websockets`` library's client spends
about 0.2 ms a frame. This one writes and reads RFC 6455 frames itself (masking
through ``websockets.speedups``, in C), which is all a load of short JSON frames
needs: no extensions, no fragmented sends, pings answered, a close frame to end.
It is a load generator, not a client for users: the tests drive servers with
the clients users have.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from websockets.speedups import apply_mask

_TEXT, _CLOSE, _PING, _PONG = 0x1, 0x8, 0x9, 0xA


class LeanSocket:
    """One WebSocket connection: ``send`` a text frame, ``recv`` the next text message."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    def _frame(self, opcode: int, payload: bytes) -> bytes:
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        mask = os.urandom(4)
        return head + mask + apply_mask(payload, mask)

    async def send(self, text: str) -> None:
        """Send one text frame."""
        self._writer.write(self._frame(_TEXT, text.encode()))
        await self._writer.drain()

    async def recv(self) -> str:
        """The next text message, its fragments joined; pings are answered on the way."""
        parts: list[bytes] = []
        while True:
            first, second = await self._reader.readexactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self._reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self._reader.readexactly(8))
            payload = await self._reader.readexactly(length) if length else b""
            if opcode == _PING:
                self._writer.write(self._frame(_PONG, payload))
                continue
            if opcode == _CLOSE:
                raise ConnectionError(f"the server closed the connection: {payload!r}")
            parts.append(payload)
            if first & 0x80:
                return b"".join(parts).decode()

    async def close(self) -> None:
        """Send a close frame and close the stream."""
        try:
            self._writer.write(self._frame(_CLOSE, struct.pack("!H", 1000)))
            await self._writer.drain()
        finally:
            self._writer.close()


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[LeanSocket]:
    """Open ``ws://host:port/path`` with the opening handshake; close it on leaving."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        writer.close()
        raise ConnectionError(f"the server refused the upgrade: {head.splitlines()[0]!r}")
    socket = LeanSocket(reader, writer)
    try:
        yield socket
    finally:
        await socket.close()
