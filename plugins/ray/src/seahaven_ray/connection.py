"""Reaching a Ray cluster: starting a local one, or checking an address answers before Ray tries.

Ray retries an address nothing answers at for minutes before it gives up, so
``connect`` first checks that a cluster's address accepts a connection and
answers the start of HTTP/2 as Ray's gRPC servers do, and says plainly when it
does not. Ray itself is passed in: this module does not import it.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from seahaven import SeahavenError

__all__ = ["connect", "first_line"]


def connect(ray: Any, address: str | None, init: dict[str, Any]) -> bool:
    """Initialise Ray unless it already is; whether this call started it."""
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING"}
    options.update(init)
    local = address is None or address == "local"
    if not local:
        options.pop("include_dashboard", None)  # a cluster's head decides its own dashboard
        # Ray retries an address nothing answers at for minutes before it gives up.
        reason = _unreachable(str(address))
        if reason is not None:
            raise SeahavenError(
                f"cannot reach the Ray cluster at {address!r}: {reason}; check the address "
                "(ray status shows a running cluster's), or run on a local one"
            )
    try:
        ray.init(address="local" if local else address, **options)
    except Exception as error:
        where = "a local Ray cluster" if local else f"the Ray cluster at {address!r}"
        raise SeahavenError(
            f"cannot start or reach {where}: {type(error).__name__}: {first_line(error)}; check "
            "the address (ray status shows a running cluster's), or run on a local one"
        ) from error
    return True


# How long a cluster's address has to accept a connection, and then to answer Ray's
# handshake, before it is called unreachable.
_PROBE_SECONDS = 5.0

# What a client sends first on an HTTP/2 connection, then an empty SETTINGS frame. Ray's
# head (its GCS) and its client server (ray://) are both gRPC, so HTTP/2 servers, whose
# first frame is always their own SETTINGS.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS_FRAME = 4
_FRAME_HEAD_BYTES = 9


def _unreachable(address: str) -> str | None:
    """Why no Ray cluster answers at a ``host:port`` or ``ray://host:port`` address, else ``None``.

    The address must accept a connection and answer the start of HTTP/2, as every
    gRPC server (so Ray's head and its client server) does, within
    ``_PROBE_SECONDS`` each; Ray itself would retry anything else for minutes. With
    ``RAY_USE_TLS`` set the handshake is TLS's and only the connection is tried. An
    address Ray resolves itself (``auto``, say) is left to Ray.
    """
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit():
        return None
    where = f"{host}:{port}"
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_SECONDS)
    except (OSError, OverflowError) as error:
        return f"nothing accepts a connection at {where} ({type(error).__name__}: {error})"
    with connection:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return None
        not_ray = f"something accepts connections at {where}, but it is not Ray:"
        try:
            connection.sendall(_HTTP2_PREFACE)
            head = _receive(connection, _FRAME_HEAD_BYTES, time.monotonic() + _PROBE_SECONDS)
        except TimeoutError:
            return (
                f"{not_ray} it sent nothing back within {_PROBE_SECONDS:g} s of being spoken to "
                "as Ray's gRPC servers are"
            )
        except OSError as error:
            return f"{not_ray} it broke off the connection ({type(error).__name__}: {error})"
    if not head:
        return f"{not_ray} it closed the connection without answering Ray's handshake"
    if len(head) < _FRAME_HEAD_BYTES or head[3] != _SETTINGS_FRAME:
        return f"{not_ray} it answered {head[:40]!r}, where a Ray (gRPC) server answers HTTP/2"
    return None


def _receive(connection: socket.socket, size: int, deadline: float) -> bytes:
    """Up to ``size`` bytes, fewer if the peer closes first; ``TimeoutError`` at ``deadline``."""
    received = b""
    while len(received) < size:
        connection.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = connection.recv(size - len(received))
        if not chunk:
            break
        received += chunk
    return received


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, its spaces folded, at most 300 characters."""
    text = str(error).strip().splitlines()
    return " ".join(text[0].split())[:300] if text else type(error).__name__
