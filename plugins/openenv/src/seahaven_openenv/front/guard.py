"""Which hosts and origins a server answers: the guard against other web pages and DNS rebinding.

A web page the operator happens to visit can make the browser talk to a server
on the operator's machine in two ways. It can ask for the server's address
directly: the request then carries the page's own ``Origin``. Or it can use DNS
rebinding, a name the page's author controls resolved to the server's address:
the request then carries that name in ``Host``. The guard refuses both, for
HTTP routes and WebSocket handshakes alike, before the application sees them.

A request is answered when

- its ``Host`` (the port aside) is ``localhost``, ``127.0.0.1`` or ``::1``; the
  address the connection arrived at (so ``http://<the server's address>:port``
  works however the server is bound); the name or address the server was told to
  bind, unless that is every interface; or a name in the allowed hosts (an
  exact name, ``*.example.org`` for every name under it, or ``*`` for any). A
  request with no ``Host`` at all comes from no browser and is let through;
- and it has no ``Origin`` (every client that is not a browser: OpenEnv's, a
  harness's), or its ``Origin`` is the same host and port as its ``Host`` (the
  server's own pages, such as the console), or its ``Origin`` is among the
  allowed origins (``scheme://host[:port]`` exactly, or ``*``).

A server bound to every interface (``0.0.0.0``, ``::``) learns no name from its
bind: a client that reaches it by a DNS name needs that name allowed. That is the
safe side: a name nobody listed is what rebinding uses.

``SEAHAVEN_ALLOW_HOSTS`` and ``SEAHAVEN_ALLOW_ORIGINS`` (comma- or
space-separated) add to the lists, for an app that a command line of someone
else's starts, such as ``uvicorn pkg.openenv_app:app`` in a hub image.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from seahaven.errors import WorldBug

__all__ = [
    "ALLOW_HOSTS_VARIABLE",
    "ALLOW_ORIGINS_VARIABLE",
    "LOOPBACK_HOSTS",
    "AllowHostOption",
    "AllowOriginOption",
    "Guard",
    "GuardMiddleware",
    "Refusal",
    "bound_hosts",
    "header",
    "send_refusal",
]

_log = logging.getLogger("seahaven.openenv")

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
"""The names every server answers for, whatever it was told."""

ALLOW_HOSTS_VARIABLE = "SEAHAVEN_ALLOW_HOSTS"
ALLOW_ORIGINS_VARIABLE = "SEAHAVEN_ALLOW_ORIGINS"
_EVERY_INTERFACE = {"", "0.0.0.0", "::"}
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}

AllowHostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="NAME",
        help="Also answer requests whose Host is NAME (*.example.org for every name under it, "
        "* for any); repeat it for more. localhost, 127.0.0.1, ::1 and the bound address "
        "are always answered.",
        show_default=False,
    ),
]
AllowOriginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-origin",
        metavar="ORIGIN",
        help="Also answer browsers on pages of ORIGIN (scheme://host[:port], or * for any); "
        "repeat it for more. Requests without an Origin, and the server's own pages, are "
        "always answered.",
        show_default=False,
    ),
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: ``kind`` is ``host`` or ``origin``, ``message`` names the fix."""

    kind: str
    value: str
    message: str

    @property
    def code(self) -> str:
        """A short code for the refusal: ``host_not_allowed`` or ``origin_not_allowed``."""
        return f"{self.kind}_not_allowed"


def _entries(
    values: Iterable[str] | str | None, variable: str, environ: Mapping[str, str]
) -> list[str]:
    if isinstance(values, str):
        raise WorldBug(f"give the allowed hosts and origins as a list of strings, not {values!r}")
    given = [value for value in (values or ())]
    for value in given:
        if not isinstance(value, str):
            raise WorldBug(f"an allowed host or origin is a string, not {value!r}")
    extra = environ.get(variable, "")
    return given + [part for part in extra.replace(",", " ").split() if part]


def _normal_host(text: str) -> str:
    """A host name or address as compared: lower case, no brackets, no trailing dot."""
    host = text.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".")


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``Host``'s name and port, or ``None`` when it is not a host."""
    text = value.strip()
    if not text or any(ch.isspace() or ch in "/?#@\\" for ch in text):
        return None
    port: int | None = None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        host, rest = text[1:end], text[end + 1 :]
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                return None
            port = int(rest[1:])
        return _normal_host(host), port
    if text.count(":") == 1:
        host, _, digits = text.partition(":")
        if not digits.isdigit():
            return None
        return _normal_host(host), int(digits)
    if ":" in text:
        # A bare IPv6 address, which a Host header should bracket; take it as it is.
        return _normal_host(text), None
    return _normal_host(text), None


def _normal_origin(text: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an origin, or ``None`` when it is not one (``null``)."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return (
        scheme,
        _normal_host(parts.hostname),
        port if port is not None else _DEFAULT_PORTS[scheme],
    )


def bound_hosts(host: str) -> list[str]:
    """The host a server bound to ``host`` answers for besides the loopback names.

    None for every interface (``0.0.0.0``, ``::``): such a bind names no host.
    """
    return [] if _normal_host(host) in _EVERY_INTERFACE else [host]


def _shown(text: str) -> str:
    """``text`` short enough to echo in a refusal."""
    return text if len(text) <= 200 else text[:200] + "..."


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Guard:
    """The hosts and origins one server answers; ``refusal(scope)`` checks one request."""

    hosts: frozenset[str]
    host_suffixes: tuple[str, ...]
    any_host: bool
    origins: frozenset[tuple[str, str, int]]
    any_origin: bool

    @classmethod
    def build(
        cls,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> Guard:
        """The guard answering the loopback names and these, or a ``WorldBug`` naming a bad one.

        The environment's ``SEAHAVEN_ALLOW_HOSTS`` and ``SEAHAVEN_ALLOW_ORIGINS`` are added.
        """
        env = os.environ if environ is None else environ
        hosts = {*LOOPBACK_HOSTS}
        suffixes: list[str] = []
        any_host = False
        for entry in _entries(allowed_hosts, ALLOW_HOSTS_VARIABLE, env):
            host = _normal_host(entry)
            if host == "*":
                any_host = True
            elif host.startswith("*.") and len(host) > 2 and "*" not in host[2:]:
                suffixes.append(host[1:])
            elif _split_host(host) is None or "*" in host or "://" in entry:
                raise WorldBug(
                    f"{entry!r} is not a host name: allow a name such as example.org, "
                    "*.example.org or *; an origin (scheme://host:port) is --allow-origin's"
                )
            else:
                hosts.add(host)
        origins: set[tuple[str, str, int]] = set()
        any_origin = False
        for entry in _entries(allowed_origins, ALLOW_ORIGINS_VARIABLE, env):
            if entry.strip() == "*":
                any_origin = True
                continue
            origin = _normal_origin(entry)
            if origin is None:
                raise WorldBug(
                    f"{entry!r} is not an origin: allow one as scheme://host[:port], such as "
                    "http://localhost:3000, or * for any"
                )
            origins.add(origin)
        return cls(frozenset(hosts), tuple(suffixes), any_host, frozenset(origins), any_origin)

    def host_allowed(self, host: str, local: str | None = None) -> bool:
        """Whether a request for ``host`` is answered; ``local`` is the address it arrived at."""
        if self.any_host or host in self.hosts:
            return True
        if local is not None and _is_address(host) and host == _normal_host(local):
            return True
        return any(host.endswith(suffix) for suffix in self.host_suffixes)

    def refusal(self, scope: Mapping[str, Any]) -> Refusal | None:
        """Why the request of ASGI ``scope`` is refused, or ``None`` when it is answered."""
        host_value = header(scope, b"host")
        request_host: tuple[str, int | None] | None = None
        if host_value is not None:
            request_host = _split_host(host_value)
            server = scope.get("server")
            local = str(server[0]) if server else None
            if request_host is None or not self.host_allowed(request_host[0], local):
                shown = _shown(host_value if request_host is None else request_host[0])
                return Refusal(
                    "host",
                    shown,
                    f"this server does not answer for the host {shown!r}, a name it was not "
                    "told to serve (a guard against DNS rebinding); start it with "
                    f"--allow-host {shown} (or allowed_hosts=[...]) to serve that name",
                )
        origin_value = header(scope, b"origin")
        if origin_value is None or self.any_origin:
            return None
        origin = _normal_origin(origin_value)
        if origin is not None:
            if origin in self.origins:
                return None
            if request_host is not None and _same_place(origin, request_host):
                return None
        origin_value = _shown(origin_value)
        return Refusal(
            "origin",
            origin_value,
            f"requests from web pages at {origin_value!r} are refused: only this server's own "
            "pages and clients that send no Origin may use it; start it with "
            f"--allow-origin {origin_value} (or allowed_origins=[...]) to let that page in",
        )


def _same_place(origin: tuple[str, str, int], host: tuple[str, int | None]) -> bool:
    """Whether an origin names the request's own host and port.

    The scheme is left out: behind a proxy that ends TLS, the page is ``https`` and the
    request that reaches the server plain ``http``; one port cannot serve both.
    """
    scheme, origin_host, origin_port = origin
    request_host, request_port = host
    return origin_host == request_host and origin_port == (
        request_port if request_port is not None else _DEFAULT_PORTS[scheme]
    )


def header(scope: Mapping[str, Any], name: bytes) -> str | None:
    """The first value of header ``name`` (lower case) of ASGI ``scope``, or ``None``."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def send_refusal(
    scope: Mapping[str, Any], send: Any, status: int, body: bytes, content_type: str
) -> None:
    """Refuse an HTTP request with ``status`` and ``body``, or a WebSocket handshake with 403.

    A handshake is closed before it is accepted, which uvicorn answers ``403`` with no
    body: its own protocol logs an error for a refusal sent with a body of its own.
    """
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = [
        (b"content-type", content_type.encode("latin-1")),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """ASGI middleware answering 403 to every request ``guard`` refuses, before ``app`` sees it."""

    def __init__(self, app: Any, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on, or refuse it with a JSON ``detail`` naming the fix."""
        if scope["type"] in ("http", "websocket"):
            refused = self.guard.refusal(scope)
            if refused is not None:
                _log.info("refused a request: %s", refused.message)
                detail = {
                    "code": refused.code,
                    "message": refused.message,
                    "details": {refused.kind: refused.value},
                }
                body = json.dumps({"detail": detail}).encode("utf-8")
                await send_refusal(scope, send, 403, body, "application/json")
                return
        await self.app(scope, receive, send)
