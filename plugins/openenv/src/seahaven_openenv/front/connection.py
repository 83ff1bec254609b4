"""One ``/ws`` connection: admitting it, the loop reading its frames, and answering each.

One connection is one ``Session``. Its frames are read in order; each frame's
work runs through the session pool (``seahaven_openenv.sessions.session_pool``), on the
event loop while its kind is quick and on a worker thread once it is not. Every
frame is the client's and is read as hostile: whatever it holds, it is answered
with a frame and the session goes on. A connection may attach to a session made
over ``POST /mcp``, or resume a ``/ws`` session whose connection dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import WebSocket
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed

from seahaven_openenv.sessions import fork, mcp_frames, mcp_sessions, resume
from seahaven_openenv.sessions.outcomes import internal_error_id
from seahaven_openenv.sessions.session import Session, WorldService
from seahaven_openenv.sessions.session_pool import Abandoned, SessionPool
from seahaven_openenv.sessions.work import mcp_work, reset_work, step_work
from seahaven_openenv.wire import frames
from seahaven_openenv.wire.close_codes import (
    CLOSE_AT_CAPACITY,
    CLOSE_NO_SESSION_HERE,
    CLOSE_NORMAL,
    CLOSE_RESUMED_ELSEWHERE,
    ENDS_THE_SESSION,
)
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.inbox import Inbox

__all__ = ["answer", "serve_connection"]

_log = logging.getLogger("seahaven.openenv")


async def serve_connection(
    websocket: WebSocket,
    service: WorldService,
    hub: SessionPool,
    http_sessions: mcp_sessions.HttpSessions | None = None,
) -> None:
    """One connection's whole life: admit it, answer its frames in order, end its session.

    A connection opened with ``?session_id=`` attaches to that session, made over
    ``POST /mcp`` (``http_sessions``), and leaves it standing when it closes; with
    ``&resume=<token>`` too, it resumes a ``/ws`` session whose connection dropped.
    """
    await websocket.accept()
    attach_to = websocket.query_params.get("session_id")
    token = websocket.query_params.get(resume.RESUME_PARAMETER)
    if attach_to is not None and (token is not None or http_sessions is not None):
        await _serve_attached(websocket, service, hub, http_sessions, attach_to, token)
        return
    inbox = Inbox(websocket, ENDS_THE_SESSION if hub.resumables.enabled else None)
    if not await _admitted(websocket, hub, inbox):
        return
    session = service.session()
    resumables = hub.resumables
    if resumables.enabled:
        record = resumables.open(session, websocket)
        await _connection(
            websocket, session, hub, lambda: resumables.release(record, websocket), record, inbox
        )
        return

    async def end() -> None:
        hub.sessions.pop(session, None)
        instance = weakref.ref(session.instance) if session.instance is not None else None
        await hub.execute("close", session.close)
        hub.ended(instance)

    await _connection(websocket, session, hub, end, inbox=inbox)


async def _admitted(websocket: WebSocket, hub: SessionPool, inbox: Inbox) -> bool:
    """Whether a new connection gets a seat: at once, or after its wait in the admission queue.

    While it waits, its messages are read and held for its session (so a client
    that leaves gives its place up at once); one refused is sent ``CAPACITY_REACHED``
    with ``retry_after`` and closed with 1013, its close reason saying the retry time.
    """
    admission = hub.admission
    if admission.admits_now():
        return True
    gone = asyncio.ensure_future(inbox.hold_until_gone())
    try:
        verdict = await admission.wait_for_seat(gone)
    finally:
        gone.cancel()
        # Waited for without raising its cancellation here, so this task's own still comes.
        await asyncio.wait({gone})
        if not gone.cancelled():
            gone.exception()
    if verdict == "admitted":
        return True
    if verdict == "gone":
        return False
    message, data = hub.capacity_refusal(waited=verdict == "waited")
    with contextlib.suppress(Exception):
        await websocket.send_text(
            frames.encode(frames.error_frame("CAPACITY_REACHED", message, **data))
        )
        reason = f"at capacity; retry after {admission.retry_after} s"
        await websocket.close(CLOSE_AT_CAPACITY, reason)
    return False


async def _serve_attached(
    websocket: WebSocket,
    service: WorldService,
    hub: SessionPool,
    http_sessions: mcp_sessions.HttpSessions | None,
    session_id: str,
    token: str | None,
) -> None:
    """A connection attached to a session: one made over ``POST /mcp``, or one it resumes.

    Its frames, then it detaches, leaving the session standing.
    """
    try:
        if token is None:
            assert http_sessions is not None
            entry = http_sessions.attach(session_id)
        else:
            record = hub.resumables.attach(session_id, token, websocket, service)
    except FrameError as error:
        with contextlib.suppress(Exception):
            refusal = frames.error_frame(error.code, error.message, **error.extra)
            await websocket.send_text(frames.encode(refusal))
            await websocket.close(CLOSE_NO_SESSION_HERE, "no such session")
        return
    if token is None:
        assert http_sessions is not None
        detach = http_sessions.detach
        await _connection(websocket, entry.session, hub, lambda: detach(entry))
        return
    previous = hub.sessions.get(record.session)
    hub.sessions[record.session] = websocket
    if previous is not None:
        # The client saw its connection drop before the server did: that one is done.
        with contextlib.suppress(Exception):
            await previous.close(CLOSE_RESUMED_ELSEWHERE, "resumed on another connection")
    # Said before any frame, so the client knows the session is back before it re-sends one.
    with contextlib.suppress(Exception):
        resumed = {"type": "resumed", "data": {"session_id": record.session_id}}
        await websocket.send_text(frames.encode(resumed))
    await _connection(
        websocket,
        record.session,
        hub,
        lambda: hub.resumables.release(record, websocket),
        record,
    )


async def _connection(
    websocket: WebSocket,
    session: Session,
    hub: SessionPool,
    end: Callable[[], Awaitable[None]],
    record: resume.Resumable | None = None,
    inbox: Inbox | None = None,
) -> None:
    """Serve ``session`` on ``websocket`` until the connection ends, then ``end`` and close.

    With ``record``, the session is resumable: see ``_frames_of``. ``inbox`` holds
    what the client sent while it waited for a seat.
    """
    hub.sessions[session] = websocket
    if inbox is None:
        inbox = Inbox(websocket, None if record is None else ENDS_THE_SESSION)
    close_code = CLOSE_NORMAL
    try:
        close_code = await _frames_of(websocket, session, hub, inbox, record)
    finally:
        inbox.discard()
        await end()
        with contextlib.suppress(Exception):
            await websocket.close(close_code)


async def _frames_of(
    websocket: WebSocket,
    session: Session,
    hub: SessionPool,
    inbox: Inbox,
    record: resume.Resumable | None = None,
) -> int:
    """Answer a connection's frames in order until it ends; the close code to end it with.

    A resumable session (``record``) runs a frame to its end even when the
    connection drops under it, and keeps its answer for the connection that
    resumes it; a client that leaves on purpose (a close frame, or closing the
    WebSocket normally) ends it.
    """
    try:
        while True:
            message = await inbox.next()
            if message["type"] == "websocket.disconnect":
                code = message.get("code", CLOSE_NORMAL)
                if record is not None and record.owned_by(websocket) and code in ENDS_THE_SESSION:
                    record.closing = True
                break
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            if record is None:
                reply, last = await answer(session, hub, text, inbox)
            else:
                reply, last = await _answer_resumable(record, websocket, session, hub, text, inbox)
            if reply is not None:
                await _send(websocket, reply)
            if last is not None:
                if record is not None and record.owned_by(websocket):
                    record.closing = True
                return last
    except Exception as error:
        # A peer that vanished mid-send is an ordinary end of a session, not an error.
        if not _is_disconnect(error):
            _log.error("session %s failed: %s", session.episode_id, error, exc_info=error)
    return CLOSE_NORMAL


async def _send(websocket: WebSocket, reply: str) -> None:
    """Send a reply; one no encoder can write as UTF-8 is the world's bug, sent as such."""
    try:
        await websocket.send_text(reply)
    except UnicodeEncodeError as error:
        await websocket.send_text(_not_json(error))


async def _answer_resumable(
    record: resume.Resumable,
    websocket: WebSocket,
    session: Session,
    hub: SessionPool,
    text: str | bytes,
    inbox: Inbox,
) -> tuple[str | None, int | None]:
    """``answer`` for a resumable session: one frame at a time, its answer kept.

    The work is abandoned only when the client left on purpose or the server
    stops (``inbox`` says so); when the connection drops it runs to its end,
    and its answer waits for the connection that resumes the session. A frame
    still arriving on a connection the session was resumed from is never run.
    """
    async with record.lock:
        if not record.owned_by(websocket):
            return None, CLOSE_RESUMED_ELSEWHERE
        try:
            frame = frames.read_frame(text)
        except FrameError as error:
            record.answer_kept(None)
            reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
            return frames.with_id(reply_text, error.request_id), None
        kept = record.answer_kept(frame.id)
        if kept is not None:
            return kept, None
        credentials = record.credentials(hub.resumables.grace) if frame.type == "reset" else None
        reply, last = await _answer_frame(session, hub, frame, inbox, credentials)
        if reply is not None:
            reply = frames.with_id(reply, frame.id)
        # A state changes nothing, so one re-sent simply runs again: its document (the
        # largest answer there is) is never held.
        record.keep(frame.id, None if frame.type == "state" else reply)
        return reply, last


async def answer(
    session: Session, hub: SessionPool, text: str | bytes, inbox: Inbox | None = None
) -> tuple[str | None, int | None]:
    """The reply to one frame, and the close code when the connection ends after it.

    The reply carries the frame's ``id`` when the frame had one.
    """
    try:
        frame = frames.read_frame(text)
    except FrameError as error:
        reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
        return frames.with_id(reply_text, error.request_id), None
    reply, last = await _answer_frame(session, hub, frame, inbox)
    return (None if reply is None else frames.with_id(reply, frame.id)), last


async def _answer_frame(
    session: Session,
    hub: SessionPool,
    frame: frames.Frame,
    inbox: Inbox | None,
    credentials: dict[str, Any] | None = None,
) -> tuple[str | None, int | None]:
    """``answer`` for a frame that was read: its reply, without the id.

    A reset's answer carries the session's resume ``credentials`` under ``resume``.
    """
    kind, data = frame.type, frame.data
    try:
        if kind == "close":
            return None, CLOSE_NORMAL
        if kind == "reset":
            answer = await hub.execute(
                reset_work(data), session.reset, data, hub.snapshots.find, inbox=inbox
            )
            if credentials is not None:
                answer = {**answer, "resume": credentials}
            reply = frames.observation_frame(answer)
        elif kind == "step":
            work, gated = step_work(data, hub, session)
            reply = frames.observation_frame(
                await hub.execute(work, session.step, data, gated=gated, inbox=inbox)
            )
        elif kind == "state":
            _check_state_frame(data, session, hub)
            # The document arrives as text: its change log is never re-encoded per frame.
            try:
                text = await hub.execute("state", session.state_text, inbox=inbox)
            except (TypeError, ValueError) as error:
                return _not_json(error), None
            return frames.state_frame_text(text), None
        elif kind == "snapshot":
            frames.snapshot_data(data)
            snapshot, step_count = await hub.run(session.snapshot, inbox=inbox)
            reply = {"type": "snapshot", "data": hub.snapshots.keep(snapshot, step_count)}
        elif kind == "fork":
            reply = {"type": "fork", "data": await fork.fork(session, hub, data, inbox)}
        elif kind == "mcp":
            work, gated = mcp_work(data, hub, session)
            response = await hub.execute(
                work, mcp_frames.answer, session, data, gated=gated, inbox=inbox
            )
            if response is None:
                return None, None
            reply = {"type": "mcp", "data": response}
        else:
            raise FrameError("UNKNOWN_TYPE", f"Unknown message type: {kind!r}")
    except FrameError as error:
        reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
        # Out of room for another instance: the connection goes too, freeing its socket.
        return reply_text, CLOSE_AT_CAPACITY if error.code == "CAPACITY_REACHED" else None
    except Abandoned:
        return None, None
    except Exception as error:
        # A frame must never end its session by surprise: the traceback goes to the log.
        correlation = _log_internal_error(error, "a frame")
        return frames.encode(
            frames.error_frame("EXECUTION_ERROR", f"internal error ({correlation})")
        ), None
    try:
        return frames.encode(reply), None
    except (TypeError, ValueError) as error:
        return _not_json(error), None


def _check_state_frame(data: Any, session: Session, hub: SessionPool) -> None:
    """Refuse a ``state`` on a connection holding no episode, unless it says it expects none.

    OpenEnv's client reconnects without a word when its socket closes (the reaper,
    a server restart, a dropped connection), so a ``state`` landing on a connection
    that never had an episode is most likely a lost episode's: answering the empty
    document would let a grader score it as a real one. ``{"allow_no_episode": true}``
    (what the web console sends) asks for that document anyway.
    """
    allowed = frames.state_data(data)
    if allowed or session.instance is not None or session.lost is not None:
        # A lost episode is refused by the session itself, naming what happened.
        return
    reaper = (
        f"the reaper ended it after {hub.session_timeout:g} s idle"
        if hub.session_timeout is not None
        else "the reaper is off on this server, so not the reaper"
    )
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(hub.started_at))
    raise FrameError(
        "SESSION_ERROR",
        "this connection holds no episode: no reset has started one on it (or its last reset "
        "failed). If this client had an episode, it was on an earlier connection, and it ended "
        f"with that connection ({reaper}; or the server restarted: this one has run since "
        f"{started}; or the connection dropped). OpenEnv's client reconnects without a word, "
        'so nothing else says so. Send a reset to start an episode, or {"type": "state", '
        '"data": {"allow_no_episode": true}} to read the document of no episode',
        no_episode=True,
    )


def _log_internal_error(error: BaseException, what: str) -> str:
    correlation = internal_error_id()
    _log.error("internal error (%s) in %s: %s", correlation, what, error, exc_info=error)
    return correlation


def _not_json(error: Exception) -> str:
    """A result JSON cannot carry (NaN, say) is the world's bug: fail the frame loudly."""
    correlation = internal_error_id()
    _log.error("internal error (%s): the reply is not JSON: %s", correlation, error)
    message = f"internal error ({correlation})"
    return frames.encode(frames.error_frame("EXECUTION_ERROR", message))


def _is_disconnect(error: BaseException) -> bool:
    if isinstance(error, WebSocketDisconnect | ConnectionClosed):
        return True
    # Starlette raises RuntimeError for a send after the peer's close frame arrived.
    return isinstance(error, RuntimeError) and "close" in str(error).lower()
