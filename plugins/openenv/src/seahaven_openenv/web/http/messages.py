"""The values of ``seahaven.http``: ``HttpRequest``, ``HttpResponse`` and the ``HttpHandler`` type.

Plain values, checked where they are made: a request built in a tool and one
the test server received compare equal, and a response HTTP cannot carry is
refused where the handler makes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from seahaven.declaration.context import Ctx
from seahaven_openenv.wire import strict_json

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_INSTANCES",
    "HttpHandler",
    "HttpRequest",
    "HttpResponse",
]

DEFAULT_MAX_INSTANCES = 100
"""How many instances the test server holds at once unless told otherwise."""

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body the test server reads unless told otherwise (16 MiB)."""

# RFC 9110's token: what a method and a header name are made of.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\r\n\x00]")


def _headers(
    pairs: Iterable[tuple[str, str]], *, what: str, lower: bool
) -> tuple[tuple[str, str], ...]:
    """``pairs`` checked as HTTP header fields, names lower-cased when ``lower``."""
    if isinstance(pairs, Mapping | str | bytes):
        raise TypeError(f"{what} headers are (name, value) pairs, such as [('x-id', '7')]")
    checked = []
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise TypeError(f"{what} header {pair!r} is not a (name, value) pair")
        name, value = pair
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"{what} header name {name!r} is not an HTTP token")
        if not isinstance(value, str):
            raise TypeError(f"{what} header {name!r} has the value {value!r}; values are strings")
        if _BAD_VALUE.search(value):
            raise ValueError(
                f"{what} header {name!r} has a line break or NUL in its value, which HTTP "
                "cannot carry"
            )
        if not value.isascii() and not _is_latin1(value):
            raise ValueError(f"{what} header {name!r} has characters HTTP cannot carry")
        checked.append((name.lower() if lower else name, value))
    return tuple(checked)


def _is_latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _body(body: bytes | str, *, what: str) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise TypeError(f"{what} body is {type(body).__name__}; give bytes or str")


@dataclass(frozen=True, slots=True, init=False)
class HttpRequest:
    """One HTTP request to a world: its method, path, raw query, headers and body.

    ``path`` is relative to the instance (``/v1/contacts``) and percent-decoded;
    ``query`` is the raw query string without the ``?``. The method is normalised
    to upper case and header names to lower case, which makes a request built in
    a tool and one received by the server compare equal.
    """

    method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def __init__(
        self,
        method: str,
        path: str,
        query: str = "",
        headers: Iterable[tuple[str, str]] = (),
        body: bytes | str = b"",
    ) -> None:
        if not isinstance(method, str) or not _TOKEN.fullmatch(method):
            raise ValueError(f"the request method {method!r} is not an HTTP method, such as 'GET'")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"the request path {path!r} must start with '/', such as '/v1/items'")
        if not isinstance(query, str):
            raise TypeError(f"the request query is {type(query).__name__}; give the raw string")
        object.__setattr__(self, "method", method.upper())
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "headers", _headers(headers, what="request", lower=True))
        object.__setattr__(self, "body", _body(body, what="request"))

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or ``None`` when it is absent."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    def json(self) -> Any:
        """The body parsed as JSON; ``ValueError`` when it is not JSON.

        Strict JSON: ``NaN``, ``Infinity``, a number too large for a double
        (``1e999``) and nesting deeper than the parser reaches are refused with the
        same ``ValueError``, so a handler never meets a value it cannot answer with.
        """
        return strict_json.loads(self.body)


@dataclass(frozen=True, slots=True, init=False)
class HttpResponse:
    """One HTTP response from a world's handler: a status, header pairs and a body.

    Headers are ``(name, value)`` pairs, and a name may repeat (``set-cookie``).
    A ``str`` body is sent UTF-8 encoded; ``body_bytes`` is the body as sent. A
    response HTTP cannot carry (a header value with a line break, a status
    outside 100-599) is refused here, where the handler makes it.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes | str

    def __init__(
        self,
        status: int = 200,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes | str = b"",
    ) -> None:
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise ValueError(f"the response status {status!r} is not an HTTP status (100-599)")
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "headers", _headers(headers, what="response", lower=False))
        object.__setattr__(
            self, "body", body if isinstance(body, str) else _body(body, what="response")
        )

    @property
    def body_bytes(self) -> bytes:
        """The body as it is sent: a ``str`` body UTF-8 encoded."""
        return _body(self.body, what="response")

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or ``None`` when it is absent."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    @classmethod
    def json(
        cls, data: Any, *, status: int = 200, headers: Iterable[tuple[str, str]] = ()
    ) -> HttpResponse:
        """A JSON response; ``content-type: application/json`` unless ``headers`` sets one."""
        pairs = list(headers)
        if not any(
            isinstance(p, tuple | list) and str(p[0]).lower() == "content-type" for p in pairs
        ):
            pairs.append(("content-type", "application/json"))
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return cls(status, pairs, text.encode("utf-8"))


HttpHandler = Callable[[Ctx[Any], HttpRequest], HttpResponse]
"""A world's REST API: ``handle(ctx, request) -> response``, run inside one transaction."""
