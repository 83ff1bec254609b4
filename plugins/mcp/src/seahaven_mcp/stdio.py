"""The stdio transport of ``seahaven mcp``: one JSON-RPC message per line, in and out.

It stands where the SDK's ``mcp.server.stdio.stdio_server`` would, and gives the
SDK's session the same two streams, but reads the client's bytes itself: lines
are split from raw reads, none is held past ``MAX_LINE_BYTES`` (the rest of a
longer one is skipped as it arrives), and each is checked by
``seahaven_mcp.jsonrpc.read_line`` before the session sees it. A line that is
not a message is answered here with JSON-RPC's error and the session goes on;
the SDK's transport would end the process on one that is not UTF-8.

Writing, an answer that cannot be written as UTF-8 JSON (a lone surrogate in a
tool's result) is replaced by a ``-32603`` internal error to the same id, and
logged; a client that stops reading stdout is written to no more. A response
from the client reaches the session only when it answers a request the server
sent; any other is dropped, since JSON-RPC answers no response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from seahaven_mcp.jsonrpc import MAX_LINE_BYTES, Refusal, error_answer, read_line, too_long

__all__ = ["read_lines", "stdio_transport"]

_log = logging.getLogger("seahaven.mcp")

# How much one read of stdin asks for.
_CHUNK = 1 << 16

_Outgoing = SessionMessage | dict[str, Any]


async def read_lines(source: BinaryIO, limit: int = MAX_LINE_BYTES) -> AsyncIterator[bytes | None]:
    """The lines of ``source``, newlines removed, until it ends; ``None`` for one over ``limit``.

    A line over the limit is reported as soon as it passes it, and what follows
    of it up to its newline is read and dropped, so no more than ``limit`` bytes
    (and one read) are ever held. A last line without a newline is a line.
    """
    buffer = bytearray()
    skipping = False
    while chunk := await anyio.to_thread.run_sync(source.read, _CHUNK):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not skipping:
                    buffer += chunk[start:]
                    if len(buffer) > limit:
                        buffer.clear()
                        skipping = True
                        yield None
                break
            if skipping:
                skipping = False
            else:
                buffer += chunk[start:end]
                yield None if len(buffer) > limit else bytes(buffer)
                buffer.clear()
            start = end + 1
    if buffer and not skipping:
        yield bytes(buffer)


@asynccontextmanager
async def stdio_transport(
    source: BinaryIO, sink: BinaryIO
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage],
        MemoryObjectSendStream[_Outgoing],
        anyio.Event,
    ]
]:
    """The session's read and write streams over ``source`` and ``sink``, and an end event.

    The event is set when ``source`` ends: the client has closed stdin, which is
    how an MCP client over stdio shuts a server down.
    """
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[_Outgoing](0)
    ended = anyio.Event()
    answers = outgoing.clone()
    # The ids of the server's own requests still unanswered: the only responses the
    # session is handed (it takes any other for a fault of its own, and says so).
    asked: set[str] = set()

    async def reader() -> None:
        try:
            async with incoming_send, answers:
                async for line in read_lines(source):
                    read = too_long() if line is None else read_line(line)
                    if isinstance(read, Refusal):
                        if read.answer is not None:
                            await answers.send(read.answer)
                    elif read is not None and _expected(read, asked):
                        await incoming_send.send(SessionMessage(read))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the session has ended; nothing more is read
        finally:
            ended.set()

    async def writer() -> None:
        broken = False
        async with outgoing_receive:
            async for item in outgoing_receive:
                if broken:
                    continue  # drained, so the session never waits on a reader who left
                if isinstance(item, SessionMessage) and isinstance(
                    item.message.root, types.JSONRPCRequest
                ):
                    asked.add(str(item.message.root.id))
                try:
                    await anyio.to_thread.run_sync(_write, sink, _encode(item))
                except OSError as error:
                    _log.warning("the client stopped reading stdout (%s); no more is sent", error)
                    broken = True

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        yield incoming, outgoing, ended


def _expected(read: types.JSONRPCMessage, asked: set[str]) -> bool:
    """Whether the session takes ``read``: a request, a notification, or an awaited response."""
    root = read.root
    if not isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
        return True
    if str(root.id) not in asked:
        return False  # JSON-RPC answers no response, not even a stray one
    asked.discard(str(root.id))
    return True


def _write(sink: BinaryIO, data: bytes) -> None:
    sink.write(data)
    sink.flush()


def _encode(item: _Outgoing) -> bytes:
    """One line of UTF-8 JSON; an answer that cannot be one becomes an internal error."""
    if isinstance(item, dict):
        return json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    root = item.message.root
    try:
        text = item.message.model_dump_json(by_alias=True, exclude_none=True)
        return text.encode("utf-8") + b"\n"
    except (ValueError, UnicodeError) as error:
        # PydanticSerializationError is a ValueError: text that is not Unicode, usually.
        _log.error(
            "an answer could not be written as JSON (%s: %s); the client is sent an internal "
            "error instead",
            type(error).__name__,
            " ".join(str(error).split())[:300],
        )
        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
            replaced = error_answer(
                types.INTERNAL_ERROR, "Internal error: the answer could not be written", root.id
            )
            return _encode(replaced)
        return b""
