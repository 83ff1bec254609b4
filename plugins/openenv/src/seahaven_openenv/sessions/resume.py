"""Resume: a ``/ws`` session that outlives a dropped connection for the server's grace period.

A session on ``/ws`` gets an id and a secret token; a reset's answer carries
both under ``resume`` (with the grace in seconds). When the connection drops,
the session is detached, not ended: it keeps its instance, its ``step_count``
and the answer to the last frame it ran (a frame in flight when the connection
dropped still runs to its end, and its answer is kept). A new connection to
``/ws?session_id=<id>&resume=<token>`` within the grace attaches to it; its
first frame, if it carries the ``id`` of the kept answer, is answered with that
answer instead of running again. A detached session counts against capacity,
and the idle reaper may still end it. When the grace passes, its instance is
removed, and a later resume is told so; so is one naming a session the server
never held (it restarted, say) or presenting a token that is not the session's.
The id is what routes a connection to its session, the token what proves it is
the session's own client; it is compared in constant time.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import seahaven
from seahaven.errors import WorldBug
from seahaven_openenv.sessions.session import Session
from seahaven_openenv.wire.echo import clip
from seahaven_openenv.wire.frames import FrameError

__all__ = [
    "DEFAULT_RESUME_GRACE_SECONDS",
    "MAX_REMEMBERED_GONE",
    "RESUME_PARAMETER",
    "Kept",
    "Resumable",
    "Resumables",
    "SessionHost",
    "check_grace",
]

#: How long a session waits for its client after its connection dropped, by default.
DEFAULT_RESUME_GRACE_SECONDS = 30.0
#: The query parameter of ``/ws?session_id=<id>`` that carries the token.
RESUME_PARAMETER = "resume"
# How many ended sessions are remembered, so a resume naming one says what happened to it.
MAX_REMEMBERED_GONE = 1000
# Bytes of randomness in a token (43 characters of URL-safe text).
TOKEN_BYTES = 32

T = TypeVar("T")


class SessionHost(Protocol):
    """What the resume table needs of the pool that holds it: ``SessionPool`` is one.

    Declared here, beneath the pool, because the pool imports this module: the
    table names the pool's type without importing it back.
    """

    @property
    def started_at(self) -> float:
        """When the server started (seconds since the epoch)."""
        ...

    @property
    def sessions(self) -> MutableMapping[Session, Any]:
        """Every session counted against capacity, with what it lives on."""
        ...

    def new_session_id(self) -> str:
        """A new session's id."""
        ...

    async def execute(self, work: str | None, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` as the pool runs a frame's work of kind ``work``."""
        ...

    def ended(self, instance: weakref.ref[seahaven.Instance] | None) -> None:
        """A session ended, holding ``instance``."""
        ...


def check_grace(grace: Any) -> float:
    """``grace`` as seconds: a number, 0 (resume off) or more; ``WorldBug`` otherwise."""
    if isinstance(grace, bool) or not isinstance(grace, int | float) or not grace >= 0:
        raise WorldBug("resume_grace is a number of seconds, 0 (resume off) or more")
    return float(grace)


@dataclass(frozen=True, slots=True)
class Kept:
    """The answer to the last frame a session ran, kept in case its connection lost it."""

    request_id: str | int
    reply: str


@dataclass(eq=False)
class Resumable:
    """A ``/ws`` session that may be resumed: its id, its token, and what it keeps meanwhile."""

    session_id: str
    token: str
    session: Session
    #: The connection serving it now (any object standing for one), or ``None`` while detached.
    connection: object | None = None
    #: The answer to the last frame run that carried an id.
    kept: Kept | None = None
    #: The next frame is the first on a resumed connection: it may be the one in flight.
    replay_next: bool = False
    #: The client asked to close: the session ends with its connection.
    closing: bool = False
    # One frame at a time, whichever connection it came on: a resumed connection's first
    # frame waits for the dropped one's frame in flight, so its answer is kept by then.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _timer: asyncio.TimerHandle | None = None

    def owned_by(self, connection: object) -> bool:
        """Whether ``connection`` is the one serving this session (not one it was resumed from)."""
        return self.connection is connection

    def answer_kept(self, request_id: str | int | None) -> str | None:
        """The kept answer, if this frame is the resumed connection's first and re-sends its id."""
        replay, self.replay_next = self.replay_next, False
        kept = self.kept
        if replay and kept is not None and request_id is not None and request_id == kept.request_id:
            return kept.reply
        return None

    def keep(self, request_id: str | int | None, reply: str | None) -> None:
        """Keep the answer to the frame just run (only a frame with an id can be re-sent)."""
        if request_id is None or reply is None:
            self.kept = None
        else:
            self.kept = Kept(request_id, reply)

    def credentials(self, grace: float) -> dict[str, Any]:
        """What a reset's answer carries under ``resume``."""
        return {"session_id": self.session_id, "token": self.token, "grace_s": grace}


class Resumables:
    """Every resumable ``/ws`` session of one server, attached or waiting for its client."""

    def __init__(self, hub: SessionHost, grace: float) -> None:
        self.hub = hub
        self.grace = check_grace(grace)
        self._live: dict[str, Resumable] = {}
        # Sessions ended while detached or closed, oldest first: id -> what happened.
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._endings: set[asyncio.Task[None]] = set()
        self._stopping = False

    @property
    def enabled(self) -> bool:
        """Whether sessions survive a dropped connection at all (``--resume-grace`` above 0)."""
        return self.grace > 0

    @property
    def detached(self) -> int:
        """How many sessions wait for their client now."""
        return sum(1 for record in self._live.values() if record.connection is None)

    def open(self, session: Session, connection: object) -> Resumable:
        """A new connection's session, made resumable and served by ``connection``."""
        session_id = self.hub.new_session_id()
        record = Resumable(session_id, secrets.token_urlsafe(TOKEN_BYTES), session, connection)
        self._live[session_id] = record
        return record

    def attach(self, session_id: str, token: str, connection: object, service: object) -> Resumable:
        """The session a connection presenting ``token`` resumes; ``FrameError`` saying why not.

        A session still served by an earlier connection (the client saw it drop
        before the server did) is taken over: that connection runs no more frames.
        """
        shown = clip(session_id)
        if not self.enabled:
            raise _refused(
                session_id,
                "this server keeps no session for resume: it runs with a resume grace of 0 "
                "(seahaven serve --resume-grace 0)",
            )
        record = self._live.get(session_id)
        if record is not None and record.session.service is not service:
            record = None
        if record is None:
            gone = self._gone.get(session_id)
            if gone is not None:
                raise _refused(session_id, f"session {shown!r} cannot be resumed: {gone}")
            started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.hub.started_at))
            raise _refused(
                session_id,
                f"unknown session {shown!r}: this server (running since {started}) holds no "
                "such session, so it was made on another server or before this one restarted, "
                "and its episode went with it",
            )
        if not hmac.compare_digest(token.encode("utf-8", "surrogatepass"), record.token.encode()):
            raise _refused(
                session_id,
                f"the resume token presented is not session {shown!r}'s; nothing was attached",
            )
        lost = record.session.lost
        if lost is not None or record.session.closed:
            self._forget(record, lost or "it was closed")
            raise _refused(session_id, f"session {shown!r} cannot be resumed: its {lost}")
        if record._timer is not None:
            record._timer.cancel()
            record._timer = None
        record.connection = connection
        record.replay_next = True
        record.closing = False
        return record

    def open_detached(self, session: Session) -> Resumable:
        """A session made with no connection (a fork's branch), waiting for its client.

        It counts against capacity and ends when the grace passes with no
        connection presenting its token, as a session whose connection dropped.
        """
        record = self.open(session, None)
        self.hub.sessions[session] = None
        record._timer = asyncio.get_running_loop().call_later(self.grace, self._expire, record)
        return record

    async def release(self, record: Resumable, connection: object) -> None:
        """``connection`` ended: detach its session for the grace, or end it now.

        A session ends at once when its client asked to close it, when it has no
        episode to resume, or when the reaper ended its episode.
        """
        if not record.owned_by(connection):
            # Resumed on another connection, which serves it now.
            return
        record.connection = None
        session = record.session
        if session.lost is not None:
            await self._end(record, f"its {session.lost}")
            return
        if record.closing or session.closed or self._stopping:
            await self._end(record, "its client closed it")
            return
        if session.instance is None or not self.enabled:
            await self._end(record, "it held no episode when its connection ended")
            return
        # Still counted against capacity while it waits.
        self.hub.sessions[session] = None
        loop = asyncio.get_running_loop()
        record._timer = loop.call_later(self.grace, self._expire, record)

    def _expire(self, record: Resumable) -> None:
        record._timer = None
        if record.connection is not None or self._live.get(record.session_id) is not record:
            return
        lost = record.session.lost
        reason = (
            f"its {lost}"
            if lost is not None
            else f"its resume grace of {self.grace:g} s passed with no connection presenting "
            "its token, and its instance was removed"
        )
        task = asyncio.ensure_future(self._end(record, reason))
        self._endings.add(task)
        task.add_done_callback(self._endings.discard)

    async def _end(self, record: Resumable, reason: str) -> None:
        self._forget(record, reason)
        session = record.session
        self.hub.sessions.pop(session, None)
        instance = weakref.ref(session.instance) if session.instance is not None else None
        await self.hub.execute("close", session.close)
        self.hub.ended(instance)

    def _forget(self, record: Resumable, reason: str) -> None:
        if self._live.get(record.session_id) is record:
            del self._live[record.session_id]
        if record._timer is not None:
            record._timer.cancel()
            record._timer = None
        self._gone[record.session_id] = reason
        while len(self._gone) > MAX_REMEMBERED_GONE:
            self._gone.popitem(last=False)

    async def shutdown(self) -> None:
        """The server is stopping: no timer left, no ending left running, nothing kept.

        A connection ending from now on ends its session with it.
        """
        self._stopping = True
        for record in self._live.values():
            if record._timer is not None:
                record._timer.cancel()
                record._timer = None
        for task in list(self._endings):
            await asyncio.gather(task, return_exceptions=True)
        self._live.clear()
        self._gone.clear()


def _refused(session_id: str, message: str) -> FrameError:
    return FrameError("SESSION_ERROR", message, session_id=clip(session_id), resume_refused=message)
