"""What one line from an MCP client is: a JSON-RPC 2.0 message for the SDK, or a refusal.

The SDK's session trusts what its transport hands it: a line that is not a
message reaches it as an exception it answers with a log notification, and a
method it does not know is answered as a bad parameter. So every line is read
here first, and ``read_line`` returns the message, ``None`` (nothing to do), or
a ``Refusal`` whose ``answer`` is the JSON-RPC error object to send back:

- ``-32700`` (parse error, id ``null``): the line is not UTF-8, not JSON (a NUL
  byte, ``NaN``, text after the value), or nested deeper than ``MAX_DEPTH``.
- ``-32600`` (invalid request): a value that is not an object; an array (a batch:
  MCP sends one message per line, and this server takes no batches); ``jsonrpc``
  that is not ``"2.0"``; a method that is not a string; params that are neither
  an object nor an array; an object that is neither a request, a notification
  nor a response; a line longer than ``MAX_LINE_BYTES``. An id that is not a
  string or an integer (``null``, an object, a list, a fraction, ``true``) or
  holds a lone surrogate cannot be answered to, so the answer's id is ``null``.
- ``-32601`` (method not found): a method the SDK's session does not take.
- ``-32602`` (invalid params): params given as an array (MCP's are an object),
  or holding text that is not Unicode (a lone surrogate such as ``\\ud800``),
  which could not be written back or stored.

A well-formed notification is never answered, so one with a method the session
does not take, or with params refused as above, is dropped. No refusal repeats
the client's text beyond a short method name, so an answer stays small.
"""

from __future__ import annotations

import json
import math
import typing
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import BaseModel, ValidationError

__all__ = [
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "NOTIFICATION_METHODS",
    "REQUEST_METHODS",
    "Refusal",
    "error_answer",
    "read_line",
    "too_long",
]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line read, newline aside; the serving plugin's frame limit too."""

MAX_DEPTH = 100
"""The deepest nesting of arrays and objects a message may have, the message itself counted."""

# How much of an unknown method's name an answer repeats.
_ECHO_CHARS = 256


def _methods(root: type[BaseModel]) -> frozenset[str]:
    """The ``method`` literals of every model in an SDK union (``ClientRequest``...)."""
    found: set[str] = set()
    for model in typing.get_args(root.model_fields["root"].annotation):
        field = getattr(model, "model_fields", {}).get("method")
        if field is not None:
            found.update(arg for arg in typing.get_args(field.annotation) if isinstance(arg, str))
    return frozenset(found)


REQUEST_METHODS: frozenset[str] = _methods(types.ClientRequest)
"""The request methods the SDK's server session reads; any other is ``-32601``."""

NOTIFICATION_METHODS: frozenset[str] = _methods(types.ClientNotification)
"""The notification methods the SDK's server session reads; any other is dropped."""


@dataclass(frozen=True)
class Refusal:
    """A line that is not a message the session can take, and the answer to send (or none)."""

    answer: dict[str, Any] | None


def error_answer(code: int, message: str, id: str | int | None = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response; ``id`` is ``None`` when the request's cannot be read."""
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def too_long() -> Refusal:
    """The refusal of a line longer than ``MAX_LINE_BYTES``, whose content is never read."""
    return Refusal(
        error_answer(
            types.INVALID_REQUEST,
            f"Invalid Request: a message is at most {MAX_LINE_BYTES} bytes on one line; this "
            "line is longer and was skipped",
        )
    )


def _parse_error(reason: str) -> Refusal:
    return Refusal(error_answer(types.PARSE_ERROR, f"Parse error: {reason}"))


def _invalid(reason: str, id: str | int | None = None) -> Refusal:
    return Refusal(error_answer(types.INVALID_REQUEST, f"Invalid Request: {reason}", id))


def _is_unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    # 1e999 is JSON's syntax but reads as infinity, which no answer could carry back.
    number = float(text)
    if math.isinf(number):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise ValueError(f"the number {shown} is too large for a double")
    return number


def _scan(value: Any) -> tuple[bool, set[str]]:
    """Whether ``value`` nests deeper than ``MAX_DEPTH``, and where it holds non-Unicode text.

    The places are the top-level members holding such text (``""`` for the value
    itself when it is not an object). The walk keeps its own stack: a message
    nested as deep as the JSON reader allows cannot exhaust Python's.
    """
    unencodable: set[str] = set()
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, level, top = stack.pop()
        if isinstance(item, str):
            if top not in unencodable and not _is_unicode(item):
                unencodable.add(top)
        elif isinstance(item, dict):
            if level > MAX_DEPTH:
                return True, unencodable
            for key, member in item.items():
                place = key if level == 1 else top
                if not _is_unicode(key):
                    unencodable.add(place if level > 1 else "")
                stack.append((member, level + 1, place))
        elif isinstance(item, list):
            if level > MAX_DEPTH:
                return True, unencodable
            stack.extend((member, level + 1, top) for member in item)
    return False, unencodable


def _usable_id(message: dict[str, Any], unencodable: set[str]) -> str | int | None:
    """The message's id if an answer can carry it back (a string or an integer), else ``None``."""
    found = message.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int) or "id" in unencodable:
        return None
    return found


def read_line(line: bytes) -> types.JSONRPCMessage | Refusal | None:
    """One line from the client, its newline removed, as a message, a ``Refusal`` or ``None``.

    ``None`` is a blank line, or a notification that is dropped unanswered.
    """
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return _parse_error(f"the line is not UTF-8 text (byte {error.start + 1} is not)")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except RecursionError:
        return _parse_error(f"the JSON is nested deeper than {MAX_DEPTH} levels")
    except json.JSONDecodeError as error:
        return _parse_error(f"the line is not JSON ({error.msg} at column {error.colno})")
    except ValueError as error:
        # NaN and Infinity, a number too large for a double, or an integer longer than
        # Python reads.
        return _parse_error(f"the line is not JSON ({' '.join(str(error).split())[:120]})")
    too_deep, unencodable = _scan(value)
    if too_deep:
        return _parse_error(f"the JSON is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return _invalid(
            "an empty batch"
            if not value
            else "batches (JSON arrays) are not taken; send one message per line"
        )
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        return _invalid(f"a message is a JSON object, not {kind}")
    if "" in unencodable:
        return _invalid("a member's name is not Unicode text (a lone surrogate)")
    return _read_object(value, unencodable)


def _read_object(
    value: dict[str, Any], unencodable: set[str]
) -> types.JSONRPCMessage | Refusal | None:
    answer_id = _usable_id(value, unencodable)
    is_request = "id" in value
    if value.get("jsonrpc") != "2.0":
        return _invalid('"jsonrpc" must be "2.0"', answer_id)
    if "method" not in value:
        return _read_response(value, unencodable, answer_id)
    method = value["method"]
    if not isinstance(method, str) or "method" in unencodable:
        return _invalid("the method must be a string of Unicode text", answer_id)
    if is_request and answer_id is None:
        return _invalid("a request's id is an integer or a string of Unicode text")
    params = value.get("params")
    if params is not None and not isinstance(params, dict | list):
        return _invalid("params must be an object", answer_id)
    if not is_request:
        # A notification is never answered, whatever is wrong with it.
        if method not in NOTIFICATION_METHODS or isinstance(params, list):
            return None
        if unencodable:
            return None
        read = _validated(value, None)
        return None if isinstance(read, Refusal) else read
    if method not in REQUEST_METHODS:
        shown = method if len(method) <= _ECHO_CHARS else method[:_ECHO_CHARS] + "..."
        return Refusal(
            error_answer(types.METHOD_NOT_FOUND, f"Method not found: {shown}", answer_id)
        )
    if isinstance(params, list):
        return Refusal(
            error_answer(
                types.INVALID_PARAMS, "Invalid params: MCP takes params as an object", answer_id
            )
        )
    if unencodable:
        return Refusal(
            error_answer(
                types.INVALID_PARAMS,
                "Invalid params: they hold text that is not Unicode (a lone surrogate such "
                "as \\ud800)",
                answer_id,
            )
        )
    return _validated(value, answer_id)


def _read_response(
    value: dict[str, Any], unencodable: set[str], answer_id: str | int | None
) -> types.JSONRPCMessage | Refusal:
    """An object without a method: a response to a request of the server's, or nothing valid."""
    if ("result" in value) == ("error" in value):
        return _invalid(
            "a message has a method (a request or a notification), or a result or an error "
            "(a response)",
            answer_id,
        )
    if unencodable or answer_id is None:
        return _invalid("a response needs a string or integer id and Unicode text", answer_id)
    return _validated(value, answer_id)


def _validated(
    value: dict[str, Any], answer_id: str | int | None
) -> types.JSONRPCMessage | Refusal:
    try:
        return types.JSONRPCMessage.model_validate(value)
    except ValidationError:
        return _invalid("the message is not JSON-RPC 2.0 as MCP sends it", answer_id)
