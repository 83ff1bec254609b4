"""Which worker of ``--workers`` a connection goes to, read from its request's first bytes.

The front peeks at a request without consuming it. A request naming a session
goes to the worker the session's id (or token) says by its prefix
(``seahaven_openenv.sessions.pool``): ``/ws?session_id=<id>`` (and a ``resume=``
token beside it), ``/ws?snapshot=<token>``, and ``POST /mcp`` whose JSON
``params.session_id`` names one. Any other request goes to any worker.
"""

from __future__ import annotations

import json
import urllib.parse

from seahaven_openenv.front import runner
from seahaven_openenv.sessions import pool
from seahaven_openenv.sessions.mcp_sessions import MAX_MCP_BODY_BYTES

__all__ = ["PEEK_LIMIT", "route_of"]

# The most bytes peeked: a request head and the largest body /mcp reads.
PEEK_LIMIT = runner.HEAD_LIMIT_BYTES + MAX_MCP_BODY_BYTES
_ROUTE_PARAMETERS = ("session_id", "resume", "snapshot")


def route_of(data: bytes) -> tuple[bool, str | None]:
    """Whether ``data`` (a request's first bytes) is enough to route it, and the token named.

    The token is a ``/ws`` query's ``session_id``, ``resume`` or ``snapshot``
    carrying a worker prefix, or a ``POST /mcp`` body's ``params.session_id``;
    ``None`` routes the request to any worker.
    """
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return len(data) >= PEEK_LIMIT, None
    lines = data[:end].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3:
        return True, None
    method, target = parts[0], parts[1]
    path, _, query = target.partition(b"?")
    if path.endswith(b"/ws"):
        values = urllib.parse.parse_qs(query.decode("latin-1"))
        for key in _ROUTE_PARAMETERS:
            for value in values.get(key, ()):
                if pool.owner_of(value) is not None:
                    return True, value
        return True, None
    if method != b"POST" or not path.endswith(b"/mcp"):
        return True, None
    length = None
    for line in lines[1:]:
        name, _, given = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = given.strip()
    if length is None or not length.isdigit() or int(length) > MAX_MCP_BODY_BYTES:
        return True, None
    body = data[end + 4 : end + 4 + int(length)]
    if len(body) < int(length):
        return False, None
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        # Not JSON the route would read (too deep for the parser, say): the worker that
        # answers it refuses it, whichever that is.
        return True, None
    params = request.get("params") if isinstance(request, dict) else None
    token = params.get("session_id") if isinstance(params, dict) else None
    return True, token if isinstance(token, str) and pool.owner_of(token) else None
