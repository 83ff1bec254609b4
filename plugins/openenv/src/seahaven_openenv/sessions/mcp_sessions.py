"""OpenEnv 0.10's production MCP: sessions made over ``POST /mcp`` and shared with ``/ws``.

OpenEnv's ``MCPToolClient`` (its production mode, the only one it has) posts
``openenv/session/create`` to ``/mcp``, opens ``/ws?session_id=<id>`` to send
its resets, steps and states to that same session, and posts ``tools/list`` and
``tools/call`` with ``params.session_id``; ``openenv/session/close`` ends it.
``HttpSessions`` keeps one world's sessions made that way. A session made here
starts its episode at once (a reset with the create's ``params`` as its data:
the world's defaults when there are none), so tools can be called before any
``/ws`` reset, as they can on OpenEnv's own servers; a reset on the socket
starts a new one in the same session.

Such a session outlives its socket: a socket that closes detaches from it, and
another may attach. It ends with ``openenv/session/close`` (at once when no
socket is attached, when the socket detaches otherwise), with the server, or
with the idle reaper; a session the reaper ended is remembered (up to
``MAX_REMEMBERED_LOST``), so a request naming it says it was reaped rather than
that it never was.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seahaven_openenv.sessions import mcp_frames
from seahaven_openenv.sessions.session import Session, WorldService
from seahaven_openenv.wire.echo import clip
from seahaven_openenv.wire.frames import FrameError

if TYPE_CHECKING:
    from seahaven_openenv.sessions.session_pool import SessionPool

__all__ = [
    "CLOSE",
    "CREATE",
    "MAX_MCP_BODY_BYTES",
    "MAX_REMEMBERED_LOST",
    "HttpSession",
    "HttpSessions",
    "handles",
]

CREATE = "openenv/session/create"
CLOSE = "openenv/session/close"
# The methods that take a ``session_id`` and act on that session; a session bound to a
# scenario also answers the prompt and the report (``mcp_frames``), an unbound one refuses them.
_SESSION_METHODS = frozenset(
    {
        "tools/list",
        "tools/call",
        "initialize",
        "ping",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
    }
)
# The largest body ``POST /mcp`` reads (the routes and the front of ``--workers`` hold to it);
# a request past it is refused.
MAX_MCP_BODY_BYTES = 64 * 1024
# How many sessions ended by the reaper are remembered, so a request naming one is told so.
MAX_REMEMBERED_LOST = 1000


def handles(request: Any) -> bool:
    """Whether a ``POST /mcp`` request is production MCP's: a session method, or one naming one.

    Everything else keeps the route's refusal (``-32601``), as before.
    """
    if not isinstance(request, dict):
        return False
    method = request.get("method")
    if method in (CREATE, CLOSE):
        return True
    params = request.get("params")
    return method in _SESSION_METHODS and isinstance(params, dict) and "session_id" in params


@dataclass(eq=False)
class HttpSession:
    """One session made over HTTP: the ``Session``, and the socket attached to it, if any."""

    session_id: str
    session: Session
    attached: bool = False
    #: ``openenv/session/close`` came while a socket was attached: end it when the socket goes.
    closing: bool = False


class HttpSessions:
    """The sessions of one served world made with ``openenv/session/create``."""

    def __init__(
        self,
        service: WorldService,
        hub: SessionPool,
        call_work: Callable[[Any, SessionPool, Session], str | None],
    ) -> None:
        self.service = service
        self.hub = hub
        # The kind of work a tools/call is (the server's rule, so both routes count it alike).
        self._call_work = call_work
        self._live: dict[str, HttpSession] = {}
        # Sessions the reaper ended, oldest first: id -> what happened.
        self._lost: OrderedDict[str, str] = OrderedDict()
        self.started_at = time.time()

    # --- POST /mcp ---------------------------------------------------------------------------

    async def answer(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The JSON-RPC response to one production-MCP request (``None`` for a notification)."""
        request_id = request.get("id")
        if not mcp_frames.usable_id(request_id):
            return mcp_frames.rpc_error(
                None,
                mcp_frames.INVALID_REQUEST,
                "a request's id is a string of at most "
                f"{mcp_frames.MAX_ID_CHARACTERS} characters or a number",
            )
        params = request.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return mcp_frames.rpc_error(
                request_id, mcp_frames.INVALID_PARAMS, "params must be an object"
            )
        method = request["method"]
        if method == CREATE:
            return await self._create(request_id, params)
        if method == CLOSE:
            return await self._close(request_id, params)
        found = self._find(params.get("session_id"))
        if isinstance(found, str):
            return mcp_frames.rpc_error(
                request_id,
                mcp_frames.INVALID_PARAMS,
                found,
                _no_session(params.get("session_id")),
            )
        inner = {key: value for key, value in params.items() if key != "session_id"}
        message = {"jsonrpc": "2.0", "method": method, "params": inner}
        if "id" in request:
            message["id"] = request_id
        if method == "tools/call":
            work, gated = self._call_work(inner.get("name"), self.hub, found.session), True
        else:
            work, gated = "mcp", False
        response = await self.hub.execute(
            work, mcp_frames.answer, found.session, message, gated=gated
        )
        if response is not None and method == "tools/call":
            _add_data(response)
        return response

    async def _create(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        hub = self.hub
        if not hub.admission.admits_now():
            # Refused at once, never queued: an HTTP request holds no socket to wait on. With
            # ``retry_after`` (and ``Retry-After`` on the response), and never ahead of a queue.
            message, data = hub.capacity_refusal()
            return mcp_frames.rpc_error(
                request_id, mcp_frames.SERVER_ERROR, message, {"code": "CAPACITY_REACHED", **data}
            )
        session = self.service.session()
        # Counted from now: a second create cannot pass the check while this one resets.
        hub.sessions[session] = None
        try:
            await hub.execute(None, session.reset, params)
        except FrameError as error:
            hub.sessions.pop(session, None)
            await hub.execute("close", session.close)
            return mcp_frames.rpc_error(
                request_id,
                mcp_frames.INVALID_PARAMS,
                f"{CREATE} starts the session's episode with its params as a reset's data; "
                f"that reset was refused: {error.message}",
                {"code": error.code, **error.extra},
            )
        except BaseException:
            hub.sessions.pop(session, None)
            await hub.execute("close", session.close)
            raise
        session_id = hub.new_session_id()
        self._live[session_id] = HttpSession(session_id, session)
        return {"jsonrpc": "2.0", "id": request_id, "result": {"session_id": session_id}}

    async def _close(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return mcp_frames.rpc_error(
                request_id,
                mcp_frames.INVALID_PARAMS,
                "Invalid params - 'session_id' is required",
                _no_session(session_id),
            )
        entry = self._live.get(session_id)
        if entry is None:
            lost = self._lost.pop(session_id, None)
            if lost is not None:
                # Its instance is long gone; closing it forgets it.
                result = {"session_id": session_id, "closed": True, "lost": lost}
                return {"jsonrpc": "2.0", "id": request_id, "result": result}
            return mcp_frames.rpc_error(
                request_id,
                mcp_frames.INVALID_PARAMS,
                self._unknown(session_id),
                _no_session(session_id),
            )
        if entry.attached:
            entry.closing = True
            result = {"session_id": session_id, "closed": False, "closing": True}
            return {"jsonrpc": "2.0", "id": request_id, "result": result}
        await self._end(entry)
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"session_id": session_id, "closed": True},
        }

    # --- /ws?session_id= ---------------------------------------------------------------------

    def attach(self, session_id: str) -> HttpSession:
        """The session a socket opened with ``?session_id=`` joins; ``FrameError`` if none."""
        found = self._find(session_id)
        if isinstance(found, str):
            raise FrameError("SESSION_ERROR", found, session_id=clip(session_id))
        if found.attached:
            raise FrameError(
                "SESSION_ERROR",
                f"session {clip(session_id)!r} already has a WebSocket attached; a session "
                "takes one at a time",
                session_id=clip(session_id),
            )
        found.attached = True
        return found

    async def detach(self, entry: HttpSession) -> None:
        """The socket attached to ``entry`` closed: end the session if a close waits for it."""
        entry.attached = False
        if entry.closing or entry.session.closed:
            await self._end(entry)
        elif entry.session.lost is not None:
            self._forget(entry)
        else:
            self.hub.sessions[entry.session] = None

    # --- internals ---------------------------------------------------------------------------

    def _find(self, session_id: Any) -> HttpSession | str:
        """The live session of that id, or why there is none."""
        if not isinstance(session_id, str) or not session_id:
            return "params.session_id is required: the id openenv/session/create answered"
        entry = self._live.get(session_id)
        if entry is not None and entry.session.lost is not None and not entry.attached:
            # The reaper ended it while it had no socket.
            self._forget(entry)
            entry = None
        if entry is None:
            lost = self._lost.get(session_id)
            if lost is not None:
                return (
                    f"session {clip(session_id)!r} is gone: its {lost}. Create a new session "
                    f"with {CREATE}"
                )
            return self._unknown(session_id)
        return entry

    def _unknown(self, session_id: str) -> str:
        seat = self.hub.seat
        ended = seat.lost_owner(session_id) if seat is not None else None
        if ended is not None:
            return (
                f"Unknown session_id: {clip(session_id)!r}: {ended}. Create a new session "
                f"with {CREATE}"
            )
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.started_at))
        return (
            f"Unknown session_id: {clip(session_id)!r}. This server (running since {started}) "
            "holds no such session: it was closed, or it was made before the server restarted "
            f"and went with it. Create a new session with {CREATE}"
        )

    def _forget(self, entry: HttpSession) -> None:
        """Remember a reaped session's fate, and stop counting it."""
        self._live.pop(entry.session_id, None)
        self.hub.sessions.pop(entry.session, None)
        self._lost[entry.session_id] = entry.session.lost or "episode was lost"
        while len(self._lost) > MAX_REMEMBERED_LOST:
            self._lost.popitem(last=False)

    async def _end(self, entry: HttpSession) -> None:
        self._live.pop(entry.session_id, None)
        self.hub.sessions.pop(entry.session, None)
        await self.hub.execute("close", entry.session.close)


def _no_session(session_id: Any) -> dict[str, Any]:
    """The ``data`` of a refusal naming no session this server holds: which id, and what to do."""
    return {
        "code": "SESSION_ERROR",
        "session_id": clip(session_id) if isinstance(session_id, str) else None,
        "create_with": CREATE,
    }


def _add_data(response: dict[str, Any]) -> None:
    """Put a successful call's value under ``result.data``, where ``MCPToolClient`` takes it.

    Its ``call_tool`` answers ``result["data"]`` when there is one, and the whole
    ``CallToolResult`` otherwise; a tool error keeps the whole result, ``isError`` and all.
    """
    result = response.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        return
    if "structuredContent" in result:
        result["data"] = result["structuredContent"]
        return
    content = result.get("content")
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        try:
            result["data"] = json.loads(content[0]["text"])
        except ValueError:
            result["data"] = content[0]["text"]
