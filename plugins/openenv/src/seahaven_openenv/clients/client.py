"""``SeahavenClient``: OpenEnv's WebSocket client with Seahaven's typed observation and state.

It is OpenEnv's ``EnvClient``, so it is awaitable in asynchronous code and
direct in synchronous code, exactly as the stock client is. It adds
``call(name, /, **arguments)`` and ``list_tools()``, parses a tool call's
answer into a ``SeahavenObservation`` and the state into a ``SeahavenState``,
and waits longer before calling a silent server dead: a lost connection loses
the episode, so its WebSocket ping timeout defaults to 120 s.

An episode outlives a dropped connection for the server's resume grace
(``seahaven serve --resume-grace``): the reset's answer carries the session's
id and resume token, and when the connection is lost with no word from the
server (the network failed, the TCP connection was cut, pings went unanswered)
this client opens ``/ws?session_id=<id>&resume=<token>`` by itself and sends
the frame it was waiting on again, with the same ``id``; the server answers it
with the answer it kept, so the call ran once and simply returns. ``resumes``
counts how often that happened.

Otherwise an episode ends with its connection. OpenEnv's client reconnects
without a word when its socket has closed, which would carry a harness on in a
fresh, empty session; this one instead raises ``SessionLost``, naming what
happened (the server reaped the session, the server stopped or restarted, the
connection was lost and resuming it failed, and why), on the next step or
``state()`` after an episode's connection ended (``clients.errors`` holds what it
raises). A ``reset()`` starts a new episode on a new connection.

Every frame it sends carries an ``id``, and it takes only the answer carrying
that ``id``: an answer to a frame whose caller stopped waiting (its
``message_timeout_s`` passed, or it was cancelled) is read and discarded when
it arrives. So, against a server that echoes ids, a time-out costs that one
call, not the connection: the episode goes on, and no later call can be handed
an earlier call's answer. Against a server that echoes none, a time-out drops
the connection as OpenEnv's client does, and the next step raises
``SessionLost``.

A server at capacity may refuse a new session with ``CAPACITY_REACHED`` and
``retry_after`` (after the new connection waited in its admission queue, or at
once when that queue is full). The session had not begun, so this client waits
the seconds the server asked for (and up to a tenth more, so many clients
refused together do not all return at once), opens a new connection and sends
the frame again: at most ``capacity_retries`` times and ``capacity_wait_s``
seconds of waiting in all, after which it raises ``AtCapacity`` naming both.
``capacity_retries=0`` raises at the first refusal. A refusal without
``retry_after`` (an older server) is raised at once, as before.

A ``408`` or ``503`` answer to the opening handshake is tried again too, after
its ``Retry-After`` or a backoff (``clients.handshake``), within the same
``capacity_retries`` and ``capacity_wait_s``; past them its ``ConnectionError`` is raised.
That holds for every connection the client opens: the first, one resuming a
session after a drop (a refused resume is tried again before the session is
given up as lost), and one opened for a snapshot.

Behind ``seahaven serve --workers N`` a snapshot lives in the worker that took
it, and its token names that worker. ``reset(from_snapshot=token)`` on a
connection that may be another worker's first opens ``/ws?snapshot=<token>``,
which the server's front hands to the worker holding it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from seahaven_openenv.clients.errors import (
    AtCapacity,
    ServerError,
    SessionLost,
    credentials,
    why_closed,
)
from seahaven_openenv.clients.handshake import connect_retrying
from seahaven_openenv.clients.lean_openenv import (
    CallToolAction,
    EnvClient,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    StepResult,
)
from seahaven_openenv.clients.models import SeahavenObservation, SeahavenState
from seahaven_openenv.sessions import pool

_T = TypeVar("_T")

__all__ = [
    "DEFAULT_CAPACITY_RETRIES",
    "DEFAULT_CAPACITY_WAIT_S",
    "DEFAULT_PING_TIMEOUT_S",
    "MAX_RESUMES_PER_CALL",
    "SeahavenClient",
]

#: How many times one call resumes its session before it gives up and raises ``SessionLost``.
MAX_RESUMES_PER_CALL = 3
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

DEFAULT_PING_TIMEOUT_S = 120.0
#: How many times a session refused at capacity is tried again, and the most seconds spent
#: waiting between the tries, by default.
DEFAULT_CAPACITY_RETRIES = 8
DEFAULT_CAPACITY_WAIT_S = 120.0
# The most a refusal's retry_after is taken to ask for: a larger one is a server's mistake.
_LONGEST_RETRY_AFTER_S = 3600.0


class SeahavenClient(EnvClient[Any, Any, SeahavenState]):
    """Drive one served Seahaven world: one client, one session, one instance at a time."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        websocket_ping_timeout_s: float | None = DEFAULT_PING_TIMEOUT_S,
        capacity_retries: int = DEFAULT_CAPACITY_RETRIES,
        capacity_wait_s: float = DEFAULT_CAPACITY_WAIT_S,
        **kwargs: Any,
    ) -> None:
        if isinstance(capacity_retries, bool) or not isinstance(capacity_retries, int):
            raise TypeError("capacity_retries is a whole number of retries, 0 or more")
        if capacity_retries < 0:
            raise ValueError("capacity_retries is a whole number of retries, 0 or more")
        if not isinstance(capacity_wait_s, int | float) or not capacity_wait_s >= 0:
            raise ValueError("capacity_wait_s is a number of seconds, 0 or more")
        super().__init__(base_url, websocket_ping_timeout_s=websocket_ping_timeout_s, **kwargs)
        self._capacity_retries = capacity_retries
        self._capacity_wait_s = float(capacity_wait_s)
        #: How many times this client tried a session again after a refusal at capacity.
        self.capacity_retries_made = 0
        #: How many times this client connected again after a ``408`` or ``503`` handshake.
        self.handshake_retries_made = 0
        # The connection the current episode lives on, and why it ended when it has.
        self._episode_socket: ClientConnection | None = None
        self._lost_reason: str | None = None
        # The last frame id sent; the connection whose server has echoed one; and how many
        # late answers (to frames no caller waits for any more) were read and discarded.
        self._last_frame_id = 0
        self._echoing_socket: ClientConnection | None = None
        self.discarded_answers = 0
        # The current episode's session id and resume token, when its server offers resume,
        # and what ended the connection last resumed from.
        self._resume_credentials: tuple[str, str] | None = None
        self._dropped_because: str | None = None
        #: How many times this client resumed its session on a new connection.
        self.resumes = 0
        # A forked session to attach to on the first connection, instead of a new one.
        self._attach_to: tuple[str, str] | None = None

    @classmethod
    def attach(
        cls, base_url: str, session_id: str, resume_token: str, **kwargs: Any
    ) -> SeahavenClient:
        """A client of the session ``session_id`` (a fork's branch), attached on first use.

        Its first frame opens ``/ws?session_id=<id>&resume=<token>``; its episode is
        the session's, so it steps and reads state with no reset.
        """
        client = cls(base_url, **kwargs)
        client._attach_to = (session_id, resume_token)
        return client

    def snapshot(self) -> Any:
        """Snapshot this episode on the server; answers the token (a string).

        ``reset(from_snapshot=token)`` on a connection to the same server starts
        an episode from it, and ``fork(n, token=token)`` branches it. The server
        keeps it within its ``--snapshot-*`` limits.
        """
        return self._dispatch(self._snapshot_async)

    def fork(self, n: int, *, token: str | None = None) -> Any:
        """``n`` new sessions from this episode (or the snapshot ``token``), as clients.

        Each is a ``SeahavenClient`` attached to its own session on first use,
        going on from where this episode (or the snapshot) stood. Close each when
        done; a branch nobody attaches to ends after the server's resume grace.
        """
        return self._dispatch(lambda: self._fork_async(n, token))

    async def _snapshot_async(self) -> str:
        response = await self._send_and_receive({"type": "snapshot", "data": {}})
        token = (response.get("data") or {}).get("token")
        if not isinstance(token, str):
            raise RuntimeError(f"the server answered a snapshot with {response!r}")
        return token

    async def _fork_async(self, n: int, token: str | None) -> list[SeahavenClient]:
        data: dict[str, Any] = {"n": n}
        if token is not None:
            data["token"] = token
        response = await self._send_and_receive({"type": "fork", "data": data})
        sessions = (response.get("data") or {}).get("sessions")
        base = self.base_url
        if not isinstance(sessions, list) or base is None:
            raise RuntimeError(f"the server answered a fork with {response!r}")
        return [
            SeahavenClient.attach(
                base,
                entry["session_id"],
                entry["token"],
                websocket_ping_timeout_s=self._websocket_ping_timeout_s,
                message_timeout_s=self._message_timeout,
                capacity_retries=self._capacity_retries,
                capacity_wait_s=self._capacity_wait_s,
            )
            for entry in sessions
        ]

    async def _connect_async(self) -> SeahavenClient:
        target, self._attach_to = self._attach_to, None
        if target is None:
            await self._connect_retrying(super()._connect_async)
            return self
        self._dropped_because = f"attaching to forked session {target[0]!r}"
        await self._open_session(*target)
        self._resume_credentials = target
        return self

    async def _connect_retrying(self, connect: Callable[[], Awaitable[_T]]) -> _T:
        """``connect()``, again after a ``408`` or ``503`` handshake, within the retry budget."""

        def retried() -> None:
            self.handshake_retries_made += 1

        return await connect_retrying(
            connect, self._capacity_retries, self._capacity_wait_s, retried
        )

    # --- the conveniences -----------------------------------------------------------------------

    def call(self, name: str, /, **arguments: Any) -> Any:
        """Call one tool; answers a ``SeahavenObservation`` (awaitable in async code).

        A tool error is data on the observation (``.error``, ``.seahaven_error``);
        only a protocol failure raises, as ``RuntimeError``.
        """
        action = CallToolAction(tool_name=name, arguments=arguments)
        return self._dispatch(lambda: self._observe(action))

    def list_tools(self) -> Any:
        """The world's tools as ``{name, description, input_schema}`` dicts; needs no reset.

        In an episode bound to a scenario, ``submit`` is last.
        """
        return self._dispatch(self._list_tools)

    def finish(self) -> Any:
        """End a scenario's episode where it stands and grade it; answers the ``StepResult``.

        Its ``reward`` is the grade's score when this step ended the episode, and
        ``observation.metadata["grade"]`` the whole grade. A session whose episode
        is bound to no scenario refuses it (``ServerError``).
        """
        return self.step({"type": "finish"})

    async def _observe(self, action: CallToolAction) -> SeahavenObservation:
        result = await self._step_async(action)
        observation = result.observation
        if not isinstance(observation, SeahavenObservation):
            raise RuntimeError(f"the server answered a tool call with {type(observation).__name__}")
        return observation

    async def _list_tools(self) -> list[dict[str, Any]]:
        result = await self._step_async(ListToolsAction())
        observation = result.observation
        if not isinstance(observation, ListToolsObservation):
            raise RuntimeError(f"the server answered list_tools with {type(observation).__name__}")
        return [tool.model_dump() for tool in observation.tools]

    # --- the connection an episode lives on ------------------------------------------------------

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        """One frame and its answer, tried again when the server is at capacity and says when.

        Only a frame that starts no episode's work is tried again: a reset, or any
        frame on a connection holding no episode (the server refused the session
        before it began). ``AtCapacity`` once the retries or the wait run out.
        """
        attempts = 0
        waited = 0.0
        while True:
            try:
                return await self._exchange(message)
            except ServerError as refusal:
                delay = self._capacity_delay(refusal, message)
                if delay is None:
                    raise
                attempts += 1
                if attempts > self._capacity_retries or waited + delay > self._capacity_wait_s:
                    raise AtCapacity(refusal, attempts, waited) from None
            ws, self._ws, self._ws_loop = self._ws, None, None
            if ws is not None:
                # The server closes a refused connection itself; this one is not waited for.
                self._schedule_socket_close(ws)
            await asyncio.sleep(delay)
            waited += delay
            self.capacity_retries_made += 1

    def _capacity_delay(self, refusal: ServerError, message: dict[str, Any]) -> float | None:
        """The seconds to wait before trying ``message`` again, or ``None`` not to."""
        retry_after = refusal.data.get("retry_after")
        if (
            refusal.code != "CAPACITY_REACHED"
            or isinstance(retry_after, bool)
            or not isinstance(retry_after, int | float)
            or not retry_after > 0
        ):
            return None
        if message.get("type") != "reset" and self._episode_socket is not None:
            return None
        asked = min(float(retry_after), _LONGEST_RETRY_AFTER_S)
        # Never before the server asked; spread a little so refused clients come back apart.
        return asked * (1.0 + 0.1 * random.random())

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """One frame and its answer; ``SessionLost`` instead of a silent new session.

        OpenEnv's ``_send`` opens a new connection when the socket has closed; a
        reset may (it starts an episode anyway), anything else after an episode
        whose connection ended raises.
        """
        resetting = message.get("type") == "reset"
        if resetting and (self._lost_reason is not None or not self._episode_alive()):
            # What was lost stays lost; this reset starts over, on a new connection.
            self._episode_socket = None
            self._lost_reason = None
            self._resume_credentials = None
        if resetting:
            data = message.get("data")
            token = data.get("from_snapshot") if isinstance(data, dict) else None
            if isinstance(token, str) and not self._on_worker_of(token):
                await self._open_for_snapshot(token)
        self._last_frame_id += 1
        frame_id = self._last_frame_id
        message = {**message, "id": frame_id}
        resumed = 0
        while True:
            if not resetting:
                if resumed < MAX_RESUMES_PER_CALL and self._resumable():
                    # Checked with no await before the send, so OpenEnv's _send never opens a
                    # fresh session in place of a dropped one. A frame re-sent with the same
                    # id is answered from the answer the server kept, if it ran it already.
                    resumed += 1
                    await self._resume()
                self._check_episode()
            # A refused session sends an error frame and closes: read the frame if it came.
            with contextlib.suppress(ConnectionClosed):
                await self._send(message)
            try:
                response: dict[str, Any] = await self._receive_answer(frame_id)
                break
            except ConnectionClosed:
                if not resetting and resumed < MAX_RESUMES_PER_CALL and self._resumable():
                    continue
                if not resetting:
                    self._check_episode()
                raise
        if response.get("type") == "error":
            data = response.get("data") or {}
            code = data.get("code")
            if not resetting and code == "SESSION_ERROR" and data.get("lost"):
                self._lost_reason = f"the server says: {data['lost']}"
                raise SessionLost(self._lost_reason)
            if resetting and code != "VALIDATION_ERROR":
                # A reset refused for its shape changed nothing; any other left no episode.
                self._episode_socket = None
                self._resume_credentials = None
            raise ServerError(
                str(data.get("code", "UNKNOWN")), str(data.get("message", "Unknown error")), data
            )
        if resetting:
            self._episode_socket = self._ws
            self._resume_credentials = credentials(response)
        return response

    def _resumable(self) -> bool:
        """Whether the episode's connection was lost with no word from a server offering resume.

        A close the server sent (it reaped the session, it is stopping) is not
        resumed: its session is gone.
        """
        episode = self._episode_socket
        return (
            self._resume_credentials is not None
            and self._lost_reason is None
            and episode is not None
            and self._ws is episode
            and episode.state is State.CLOSED
            and episode.protocol.close_rcvd is None
        )

    async def _resume(self) -> None:
        """Open ``/ws?session_id=&resume=`` for the episode's session; ``SessionLost`` if it fails.

        The server's first frame on it says whether it resumed the session
        (``resumed``) or why not (an error frame), before any frame is sent again.
        """
        episode = self._episode_socket
        assert episode is not None and self._resume_credentials is not None
        assert self._ws_url is not None
        self._dropped_because = why_closed(episode)
        await self._open_session(*self._resume_credentials)
        self.resumes += 1

    def _on_worker_of(self, token: str) -> bool:
        """Whether this client's connection is known to reach the worker a snapshot token names.

        A token with no worker prefix (a server of one process) is held by the
        server itself, so any connection reaches it.
        """
        owner = pool.owner_of(token)
        if owner is None:
            return True
        credentials = self._resume_credentials
        return (
            credentials is not None
            and self._ws is not None
            and self._ws is self._episode_socket
            and self._ws.state is State.OPEN
            and pool.owner_of(credentials[0]) == owner
        )

    async def _open_for_snapshot(self, token: str) -> None:
        """Replace the connection with ``/ws?snapshot=<token>``, on the worker holding it."""
        previous = self._ws
        if previous is not None:
            self._ws = None
            self._ws_loop = None
            self._episode_socket = None
            self._resume_credentials = None
            await asyncio.shield(self._schedule_socket_close(previous, notify_server=True))
        try:
            ws = await self._dial({"snapshot": token})
        except Exception as error:
            raise ConnectionError(
                f"could not open a connection for snapshot {token!r}: {error}"
            ) from error
        self._ws = ws
        self._ws_loop = asyncio.get_running_loop()

    async def _dial(self, query: dict[str, str]) -> ClientConnection:
        """Open ``/ws`` with ``query``, with the options this client connects with."""
        assert self._ws_url is not None
        loopback = urlsplit(self._ws_url).hostname in _LOOPBACK_HOSTS
        url = f"{self._ws_url}?{urlencode(query)}"

        def dial() -> Awaitable[ClientConnection]:
            return ws_connect(
                url,
                open_timeout=self._connect_timeout,
                max_size=self._max_message_size,
                ping_interval=self._websocket_ping_interval_s,
                ping_timeout=self._websocket_ping_timeout_s,
                additional_headers=self._headers,
                # As OpenEnv's client connects: no proxy for a loopback address.
                proxy=None if loopback else True,
            )

        return await self._connect_retrying(dial)

    async def _open_session(self, session_id: str, token: str) -> None:
        """Open ``/ws?session_id=&resume=`` and make it the episode's connection."""
        try:
            ws = await self._dial({"session_id": session_id, "resume": token})
        except Exception as error:
            self._resume_failed(
                f"the server could not be reached ({type(error).__name__}: {error})"
            )
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), self._message_timeout))
        except (ConnectionClosed, TimeoutError, ValueError) as error:
            self._schedule_socket_close(ws)
            if isinstance(error, ConnectionClosed):
                self._resume_failed(why_closed(ws))
            self._resume_failed(f"the server did not say it resumed it ({error!r})")
        if not isinstance(first, dict) or first.get("type") != "resumed":
            self._schedule_socket_close(ws)
            data = first.get("data") if isinstance(first, dict) else None
            said = data.get("message") if isinstance(data, dict) else None
            self._resume_failed(f"the server says: {said or first!r}")
        self._ws = ws
        self._ws_loop = asyncio.get_running_loop()
        self._episode_socket = ws
        # A server that resumes sessions echoes ids: a time-out keeps this connection.
        self._echoing_socket = ws

    def _resume_failed(self, why: str) -> NoReturn:
        self._resume_credentials = None
        self._lost_reason = (
            f"{self._dropped_because}; resuming the session on a new connection failed: {why}"
        )
        raise SessionLost(self._lost_reason)

    async def _receive_answer(self, frame_id: int) -> dict[str, Any]:
        """The answer to frame ``frame_id``, within ``message_timeout_s``; late answers discarded.

        An answer carrying another id answers a frame whose caller gave up on
        it: it is dropped, and the wait goes on. An answer with no id comes from
        a server that echoes none (or says something of the connection, such as
        being at capacity) and is taken as OpenEnv takes every answer. When the
        wait ends unanswered, a connection whose server echoes ids stays open,
        since its late answer will be recognised; any other is dropped, as
        OpenEnv's ``_receive`` does, so it can never be misread.
        """
        ws = self._ws
        assert ws is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._message_timeout
        while True:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=max(0.0, deadline - loop.time()))
            except (TimeoutError, asyncio.CancelledError):
                if self._echoing_socket is not ws:
                    self._ws = None
                    self._ws_loop = None
                    self._schedule_socket_close(ws)
                raise
            response: dict[str, Any] = json.loads(raw)
            answered = response.get("id")
            if answered == frame_id:
                self._echoing_socket = ws
                return response
            if answered is None:
                return response
            self.discarded_answers += 1

    def _episode_alive(self) -> bool:
        episode = self._episode_socket
        return (
            episode is not None
            and self._ws is episode
            and episode.state not in (State.CLOSING, State.CLOSED)
        )

    async def _disconnect_async(self) -> None:
        if self._episode_socket is not None and self._lost_reason is None:
            self._lost_reason = "the client closed the connection the episode lived on"
        self._resume_credentials = None
        await super()._disconnect_async()

    def _check_episode(self) -> None:
        """Raise ``SessionLost`` when the connection of the current episode has ended."""
        reason = self._lost_reason
        episode = self._episode_socket
        if reason is None and episode is not None:
            if self._ws is not episode:
                # OpenEnv drops a socket whose answer it stopped waiting for.
                reason = (
                    "the client dropped the connection the episode lived on (it stops waiting "
                    f"for an answer after message_timeout_s, {self._message_timeout:g} s)"
                )
            elif episode.state in (State.CLOSING, State.CLOSED):
                reason = why_closed(episode)
        if reason is not None:
            self._lost_reason = reason
            raise SessionLost(reason)

    # --- EnvClient's hooks ------------------------------------------------------------------------

    def _step_payload(self, action: Any) -> dict[str, Any]:
        if isinstance(action, BaseModel):
            return action.model_dump()
        if isinstance(action, dict):
            return action
        raise TypeError(
            "a step takes CallToolAction, ListToolsAction or their dict form, not "
            f"{type(action).__name__}"
        )

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Any]:
        body = payload.get("observation", {})
        fields = {**body, "done": payload.get("done", False), "reward": payload.get("reward")}
        observation: Observation
        if "tool_name" in body:
            observation = SeahavenObservation.model_validate(fields)
        elif "tools" in body:
            observation = ListToolsObservation.model_validate(fields)
        else:
            observation = Observation.model_validate(fields)
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=payload.get("done", False),
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> SeahavenState:
        return SeahavenState.model_validate(payload)
