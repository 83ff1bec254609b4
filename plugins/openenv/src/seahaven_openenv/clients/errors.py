"""What a client hears went wrong: the server's refusal, a lost session, and why a socket closed.

``ServerError`` is OpenEnv's error frame raised (``AtCapacity`` the one a
server at capacity kept answering); ``SessionLost`` an episode gone with its
session. ``why_closed`` reads a closed connection's close frame into the words
``SessionLost`` carries, and ``credentials`` the resume id and token a reset's
answer offers.
"""

from __future__ import annotations

from typing import Any

from websockets.asyncio.client import ClientConnection

__all__ = [
    "CLOSED_BY",
    "REAPED",
    "AtCapacity",
    "ServerError",
    "SessionLost",
    "credentials",
    "why_closed",
]

# The close codes a server sends, and what each says happened to the session.
REAPED = 4408
CLOSED_BY = {
    1001: "the server went away",
    1012: "the server stopped or restarted",
    1013: "the server was at capacity",
}


class SessionLost(RuntimeError):
    """The episode is gone: its session was reaped, or its connection ended; ``reason`` says how.

    Raised by the first step or ``state()`` after it, and by every one after that
    until a ``reset()`` starts a new episode.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the session's episode is gone: {reason}. Its instance and everything the episode "
            "changed went with it; reset() starts a new episode"
        )
        self.reason = reason


class ServerError(RuntimeError):
    """The server refused a frame with OpenEnv's error frame: ``code`` and ``message`` are its.

    A ``RuntimeError``, as OpenEnv's own client raises for an error frame, with the
    same text; ``data`` is the error frame's whole ``data``.
    """

    def __init__(self, code: str, message: str, data: dict[str, Any]) -> None:
        super().__init__(f"Server error: {message} (code: {code})")
        self.code = code
        self.message = message
        self.data = data


class AtCapacity(ServerError):
    """The server stayed at capacity through every retry; ``attempts`` and ``waited`` say how long.

    A ``ServerError`` with ``code`` ``CAPACITY_REACHED``; ``data`` is the last refusal's.
    """

    def __init__(self, refusal: ServerError, attempts: int, waited: float) -> None:
        message = (
            f"the server stayed at capacity: it refused the session {attempts} time(s), and this "
            f"client waited {waited:.1f} s in all between them as the server asked "
            f"({refusal.message}). Allow more with SeahavenClient(capacity_retries=..., "
            "capacity_wait_s=...), or serve more sessions (seahaven serve --max_concurrent_envs)"
        )
        super().__init__(refusal.code, message, refusal.data)
        self.attempts = attempts
        self.waited = waited


def credentials(response: dict[str, Any]) -> tuple[str, str] | None:
    """The session id and resume token a reset's answer carries, if its server offers resume."""
    data = response.get("data")
    offered = data.get("resume") if isinstance(data, dict) else None
    if not isinstance(offered, dict):
        return None
    session_id, token = offered.get("session_id"), offered.get("token")
    if isinstance(session_id, str) and isinstance(token, str):
        return session_id, token
    return None


def why_closed(connection: ClientConnection) -> str:
    """What a closed connection's close frame (or its absence) says happened to the session."""
    received = connection.protocol.close_rcvd
    if received is None:
        return (
            "the connection was lost with no word from the server (the network failed, the "
            "server died, or pings went unanswered)"
        )
    if received.code == REAPED:
        return f"the server reaped the session ({received.reason or 'it was idle too long'})"
    said = CLOSED_BY.get(received.code, f"the server closed the connection (code {received.code})")
    return f"{said}{f': {received.reason}' if received.reason else ''}"
