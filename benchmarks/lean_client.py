"""Lean WebSocket clients for load generation: text frames over asyncio streams, or callbacks.

When the clients share the server's CPUs, every microsecond a client spends on
a frame is taken from the server, and the ``websockets`` library's client spends
about 0.2 ms a frame. These write and read RFC 6455 frames themselves (masking
through ``websockets.speedups``, in C), which is all a load of short JSON frames
needs: no extensions, no fragmented sends, pings answered, a close frame to end.

``connect`` gives a stream-based socket to ``await`` on. ``play`` is leaner
still: an ``asyncio.Protocol`` that drives a session's script (a generator that
yields frames and is sent the parsed replies) from ``data_received``, with no
task, future or stream per frame. They are load generators, not clients for
users: the tests drive servers with the clients users have.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import time
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from typing import Any, cast
from urllib.parse import urlsplit

from websockets.speedups import apply_mask

#: The WebSocket opcodes a client of these benchmarks sends or reads.
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes) -> bytes:
    """One masked, unfragmented client frame."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
    mask = os.urandom(4)
    return head + mask + apply_mask(payload, mask)


def take_frame(buffer: bytearray) -> tuple[int, bytes] | None:
    """The first whole frame in ``buffer``, removed from it: its first byte and its payload.

    ``None`` while the frame has not all arrived; the buffer is then left as it was.
    """
    if len(buffer) < 2:
        return None
    length, offset = buffer[1] & 0x7F, 2
    if length == 126:
        if len(buffer) < 4:
            return None
        (length,), offset = struct.unpack_from("!H", buffer, 2), 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        (length,), offset = struct.unpack_from("!Q", buffer, 2), 10
    if len(buffer) < offset + length:
        return None
    first, payload = buffer[0], bytes(buffer[offset : offset + length])
    del buffer[: offset + length]
    return first, payload


def opening(host: str, port: int, path: str) -> bytes:
    """The opening handshake of a WebSocket to ``path`` on ``host:port``, with a new key."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET {path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def read_upgrade(buffer: bytearray) -> bool:
    """Take the answer to the opening handshake out of ``buffer``: whether it has all arrived.

    ``False`` while its head is still on its way (the buffer is left as it was);
    ``True`` once it has come and is ``101``, with the head removed and the
    frames after it left; a ``ConnectionError`` naming the status line for any
    other answer (a ``408``, a ``503``, ...).
    """
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = bytes(buffer[:end])
    del buffer[: end + 4]
    if not head.startswith(b"HTTP/1.1 101"):
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        raise ConnectionError(f"the server refused the upgrade: {status}")
    return True


def _address(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return parts.hostname or "127.0.0.1", parts.port or 80, path


class LeanSocket:
    """One WebSocket connection: ``send`` a text frame, ``recv`` the next text message."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, text: str) -> None:
        """Send one text frame."""
        self._writer.write(frame(TEXT, text.encode()))
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
            if opcode == PING:
                self._writer.write(frame(PONG, payload))
                continue
            if opcode == CLOSE:
                raise ConnectionError(f"the server closed the connection: {payload!r}")
            parts.append(payload)
            if first & 0x80:
                return b"".join(parts).decode()

    async def close(self) -> None:
        """Send a close frame and close the stream."""
        try:
            self._writer.write(frame(CLOSE, struct.pack("!H", 1000)))
            await self._writer.drain()
        finally:
            self._writer.close()


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[LeanSocket]:
    """Open ``ws://host:port/path`` with the opening handshake; close it on leaving."""
    host, port, path = _address(url)
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(opening(host, port, path))
    try:
        read_upgrade(bytearray(await reader.readuntil(b"\r\n\r\n")))
    except ConnectionError:
        writer.close()
        raise
    socket = LeanSocket(reader, writer)
    try:
        yield socket
    finally:
        await socket.close()


# A session's script: yields frames to send, is sent each reply parsed, returns its problems.
Script = Generator[dict[str, Any], dict[str, Any], list[str]]
CLOSE_FRAME = frame(CLOSE, struct.pack("!H", 1000))


class _Played(asyncio.Protocol):
    """One connection playing one script, entirely from the event loop's callbacks."""

    def __init__(
        self, opening: bytes, script: Script, close_text: bytes, done: asyncio.Future[Any]
    ):
        self.opening = opening
        self.script = script
        self.close_text = close_text
        self.done = done
        self.buffer = bytearray()
        self.upgraded = False
        self.parts: list[bytes] = []
        self.sent_at = 0.0
        self.kind = ""
        self.latencies: list[float] = []
        self.kinds: list[str] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.opening)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            if not self.upgraded:
                if not read_upgrade(self.buffer):
                    return
                self.upgraded = True
                self._send(next(self.script))
            self._read_frames()
        except StopIteration as finished:
            self._finish(finished.value)
        except BaseException as error:  # the session's failure is its result
            self._fail(error)

    def _read_frames(self) -> None:
        buffer = self.buffer
        while (taken := take_frame(buffer)) is not None:
            first, payload = taken
            opcode = first & 0x0F
            if opcode == PING:
                assert self.transport is not None
                self.transport.write(frame(PONG, payload))
                continue
            if opcode == CLOSE:
                raise ConnectionError(f"the server closed the connection: {payload!r}")
            self.parts.append(payload)
            if first & 0x80:
                message = b"".join(self.parts)
                self.parts.clear()
                self.latencies.append(time.perf_counter() - self.sent_at)
                self.kinds.append(self.kind)
                self._send(self.script.send(json.loads(message)))

    def _send(self, outgoing: dict[str, Any]) -> None:
        assert self.transport is not None
        self.kind = outgoing["type"]
        self.sent_at = time.perf_counter()
        self.transport.write(frame(TEXT, json.dumps(outgoing).encode()))

    def _finish(self, problems: list[str]) -> None:
        assert self.transport is not None
        self.transport.write(frame(TEXT, self.close_text) + CLOSE_FRAME)
        self.transport.close()
        if not self.done.done():
            self.done.set_result((self.latencies, self.kinds, problems))

    def _fail(self, error: BaseException) -> None:
        if self.transport is not None:
            self.transport.abort()
        if not self.done.done():
            self.done.set_exception(error)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(exc or ConnectionError("the connection closed mid-session"))


async def play(
    url: str, script: Script, close_text: str
) -> tuple[list[float], list[str], list[str]]:
    """Play ``script`` over a new connection to ``url``; send ``close_text`` and close after it.

    Answers every reply's round trip in seconds, the kind of each frame sent, and
    the problems the script returned.
    """
    host, port, path = _address(url)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[list[float], list[str], list[str]]] = loop.create_future()
    await loop.create_connection(
        lambda: _Played(opening(host, port, path), script, close_text.encode(), done), host, port
    )
    return await done
