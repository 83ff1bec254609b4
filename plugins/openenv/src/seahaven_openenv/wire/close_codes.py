"""The WebSocket close codes the server ends a ``/ws`` connection with, and what each means."""

from __future__ import annotations

__all__ = [
    "CLOSE_AT_CAPACITY",
    "CLOSE_NORMAL",
    "CLOSE_NO_SESSION_HERE",
    "CLOSE_REAPED",
    "CLOSE_RESUMED_ELSEWHERE",
    "ENDS_THE_SESSION",
]

# WebSocket close codes: 1013 is "try again later"; 4408 marks a session reaped for idleness.
CLOSE_NORMAL = 1000
CLOSE_AT_CAPACITY = 1013
CLOSE_REAPED = 4408
# 1008 is "policy violation": the root of a server of several worlds holds no session.
CLOSE_NO_SESSION_HERE = 1008
# A session resumed on a new connection closes the one it was served on with 4409.
CLOSE_RESUMED_ELSEWHERE = 4409
#: The ends of a connection that end a resumable session at once, abandoning its frame in
#: flight: a client that meant to leave (1000, 1001) and a server that is stopping (1012, as
#: uvicorn reports it). Any other end (1006, the TCP connection lost; a ping time-out) detaches
#: the session for resume, and its frame in flight runs to its end.
ENDS_THE_SESSION = frozenset({1000, 1001, 1012})
