"""The wire: reading a client's frame into a ``Frame``, its ``FrameError``, and the replies.

Frames are OpenEnv's: ``{"type": ..., "data": ...}`` text messages holding
JSON. ``read_frame`` is the one reader: it parses a message once into a typed
``Frame``. A frame that is not JSON, not an object, or of an unknown type is a
``FrameError`` with OpenEnv's code for it; so is a ``state`` or ``snapshot``
frame whose data such a frame cannot take (``state_data``, ``snapshot_data``).
Replies are encoded compactly, and a tool result that plain JSON cannot hold
(a pydantic model, a dataclass) is rendered the way pydantic renders it.

Any frame may carry an ``id`` (a number, or a string of at most
``MAX_FRAME_ID_CHARACTERS``): its answer, error frames included, carries the
same ``id`` beside ``type`` and ``data``, so a client can tell the answer to the
frame it waits for from a late answer to one it stopped waiting for. A frame
without one is answered without one, as OpenEnv's clients expect.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from seahaven.declaration.state_formats import encode_values
from seahaven_openenv.wire import strict_json
from seahaven_openenv.wire.echo import listed, shown

__all__ = [
    "ERROR_CODES",
    "FRAME_TYPES",
    "MAX_FRAME_DEPTH",
    "MAX_FRAME_ID_CHARACTERS",
    "Frame",
    "FrameError",
    "encode",
    "error_frame",
    "observation_frame",
    "parse",
    "parse_frame",
    "read_frame",
    "read_json",
    "snapshot_data",
    "state_data",
    "state_frame",
    "state_frame_text",
    "with_id",
]

# OpenEnv's WSErrorCode values.
ERROR_CODES = frozenset(
    {
        "INVALID_JSON",
        "UNKNOWN_TYPE",
        "VALIDATION_ERROR",
        "EXECUTION_ERROR",
        "CAPACITY_REACHED",
        "FACTORY_ERROR",
        "SESSION_ERROR",
    }
)
FRAME_TYPES = ("reset", "step", "state", "close", "mcp", "snapshot", "fork")

# The escape of a surrogate code point, in text and in bytes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")

#: The deepest nesting of arrays and objects a frame may have; a tool's arguments may nest
#: far less (the core refuses more than ``seahaven.arguments.MAX_ARGUMENT_DEPTH``).
MAX_FRAME_DEPTH = 512

_FRAME_KEYS: dict[str, frozenset[str]] = {
    "reset": frozenset({"type", "data", "id"}),
    "step": frozenset({"type", "data", "id"}),
    "state": frozenset({"type", "data", "id"}),
    "close": frozenset({"type", "id"}),
    "mcp": frozenset({"type", "data", "id"}),
    "snapshot": frozenset({"type", "data", "id"}),
    "fork": frozenset({"type", "data", "id"}),
}
# The longest string a frame's ``id`` may be.
MAX_FRAME_ID_CHARACTERS = 128


class FrameError(Exception):
    """A frame the session refuses: sent as ``{"type": "error", "data": {"code", "message"}}``.

    ``extra`` holds more keys of the error frame's data, such as the ``errors``
    of a malformed step.
    """

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra
        #: The ``id`` of the frame refused, echoed by the refusal; set where it is known.
        self.request_id: str | int | None = None


@dataclass(frozen=True, slots=True)
class Frame:
    """One client frame, read: its ``type``, its ``data`` and its ``id`` (``None`` if it has none).

    ``data`` is the frame's JSON value as sent (``{}`` when a frame of its type
    may leave it out); what a frame of each type may hold in it is checked by
    whoever answers that type.
    """

    type: str
    data: Any
    id: str | int | None = None


def read_frame(raw: str | bytes) -> Frame:
    """A client message read as a ``Frame``; ``FrameError`` for a message that is not one.

    Every byte is the client's: a frame nested too deeply to read, or holding a
    string that is not Unicode (half of a surrogate pair), is refused as
    ``INVALID_JSON`` like any other text that is not a frame, and the session
    goes on. A ``FrameError`` raised for a frame whose ``id`` was read carries it
    as ``request_id``, so the refusal echoes it too.
    """
    frame = read_json(raw)
    if not isinstance(frame, dict):
        raise FrameError("VALIDATION_ERROR", 'a frame is a JSON object, {"type": ..., "data": ...}')
    request_id = _frame_id(frame.get("id"))
    try:
        kind, data = _parse_object(frame)
    except FrameError as error:
        error.request_id = request_id
        raise
    return Frame(kind, data, request_id)


def state_data(data: Any) -> bool:
    """A ``state`` frame's data, checked: whether it allows a connection holding no episode."""
    if not isinstance(data, dict) or any(key != "allow_no_episode" for key in data):
        raise FrameError(
            "VALIDATION_ERROR",
            'a state frame\'s data is {} or {"allow_no_episode": true}, nothing else',
        )
    allowed = data.get("allow_no_episode", False)
    if not isinstance(allowed, bool):
        raise FrameError("VALIDATION_ERROR", "a state frame's allow_no_episode is true or false")
    return allowed


def snapshot_data(data: Any) -> None:
    """A ``snapshot`` frame's data, checked: ``{}``, nothing else."""
    if not isinstance(data, dict) or data:
        raise FrameError("VALIDATION_ERROR", "a snapshot frame's data is {}, nothing else")


def parse(text: str | bytes) -> tuple[str, Any]:
    """A client frame's type and data; ``FrameError`` for a frame that is not one.

    Every byte is the client's: a frame nested too deeply to read, or holding a
    string that is not Unicode (half of a surrogate pair), is refused as
    ``INVALID_JSON`` like any other text that is not a frame, and the session
    goes on. ``read_frame``'s ``Frame`` as a pair.
    """
    frame = read_frame(text)
    return frame.type, frame.data


def parse_frame(text: str | bytes) -> tuple[str, Any, str | int | None]:
    """``read_frame``'s ``Frame`` as a triple: type, data and ``id`` (``None`` when it has none)."""
    frame = read_frame(text)
    return frame.type, frame.data, frame.id


def _frame_id(value: Any) -> str | int | None:
    """A frame's ``id``, checked: ``None``, a whole number, or a short string."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value
    if isinstance(value, str) and len(value) <= MAX_FRAME_ID_CHARACTERS:
        return value
    raise FrameError(
        "VALIDATION_ERROR",
        f"a frame's id is a whole number or a string of at most {MAX_FRAME_ID_CHARACTERS} "
        f"characters, not {shown(value)}",
    )


def _parse_object(frame: dict[str, Any]) -> tuple[str, Any]:
    kind = frame.get("type")
    allowed = _FRAME_KEYS.get(kind) if isinstance(kind, str) else None
    if allowed is None or not isinstance(kind, str):
        raise FrameError(
            "UNKNOWN_TYPE",
            f"Unknown message type: {shown(kind)}; the types are {', '.join(FRAME_TYPES)}",
        )
    stray = sorted(key for key in frame if key not in allowed)
    if stray:
        raise FrameError(
            "VALIDATION_ERROR",
            f"a {kind} frame does not take {listed(stray)}",
        )
    if kind == "step" and "data" not in frame:
        raise FrameError("VALIDATION_ERROR", "a step frame needs data: the action")
    data = frame.get("data", {})
    return kind, data


def read_json(text: str | bytes) -> Any:
    """``text`` parsed as JSON, or ``FrameError("INVALID_JSON")`` saying why it cannot be.

    Only what JSON can carry back is read: ``NaN`` and ``Infinity`` (which Python's
    parser takes) and a number too large for a double (``1e999``) are refused, as
    are an integer of more digits than Python reads, a lone surrogate and nesting
    deeper than ``MAX_FRAME_DEPTH``.
    """
    too_deep = FrameError(
        "INVALID_JSON",
        "Invalid JSON: the text nests arrays and objects more deeply than the server reads; "
        f"a frame of up to {MAX_FRAME_DEPTH} levels is read",
    )
    try:
        value = strict_json.loads(text)
    except strict_json.TooDeep:
        raise too_deep from None
    except strict_json.NotJson as error:
        raise FrameError("INVALID_JSON", f"Invalid JSON: {error}") from None
    # How deep the parser itself goes depends on the interpreter (3.13 reads thousands of
    # levels, 3.11 under a thousand), so the limit is the server's own, the same everywhere.
    openings = (
        text.count("[") + text.count("{")
        if isinstance(text, str)
        else (text.count(b"[") + text.count(b"{"))
    )
    if openings > MAX_FRAME_DEPTH and _deeper_than(value, MAX_FRAME_DEPTH):
        raise too_deep
    # A JSON escape of half a surrogate pair reads as a string no encoder can write, so it
    # would fail the reply instead of the request. Such an escape must be in the text to
    # be in a value: only then are the strings looked through.
    pattern = _SURROGATE_ESCAPE if isinstance(text, str) else _SURROGATE_ESCAPE_BYTES
    if pattern.search(text):  # type: ignore[arg-type]
        where = _lone_surrogate(value)
        if where is not None:
            raise FrameError(
                "INVALID_JSON",
                f"Invalid JSON: {where} holds half of a surrogate pair (a \\uD800-\\uDFFF "
                "escape with no partner), which is not Unicode text; escape a character "
                "outside the Basic Multilingual Plane as a pair, or send it as it is",
            )
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels; iterative."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            members = item.values() if isinstance(item, dict) else item
            pending.extend(
                (member, depth + 1) for member in members if isinstance(member, dict | list)
            )
    return False


def _lone_surrogate(value: Any) -> str | None:
    """Where in ``value`` a string holds an unpaired surrogate (``a key``, ``a string``), or None.

    Iterative, so a deeply nested value cannot exhaust the stack.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return "a string"
        elif isinstance(item, dict):
            for key, member in item.items():
                if _SURROGATE.search(key):
                    return "a key"
                pending.append(member)
        elif isinstance(item, list):
            pending.extend(item)
    return None


def encode(frame: dict[str, Any]) -> str:
    """A reply as compact JSON text."""
    return encode_values(frame)


def observation_frame(data: dict[str, Any]) -> dict[str, Any]:
    """The reply to a reset or a step."""
    return {"type": "observation", "data": data}


def state_frame(data: dict[str, Any]) -> dict[str, Any]:
    """The reply to a state frame."""
    return {"type": "state", "data": data}


def state_frame_text(data: str) -> str:
    """The reply to a state frame, as text, around a document already encoded as ``encode`` would.

    ``state_frame_text(encode(data)) == encode(state_frame(data))``.
    """
    return '{"type":"state","data":' + data + "}"


def with_id(reply: str, request_id: str | int | None) -> str:
    """An encoded reply carrying the ``id`` of the frame it answers (as it is when ``None``)."""
    if request_id is None or not reply.endswith("}"):
        return reply
    return reply[:-1] + ',"id":' + json.dumps(request_id, ensure_ascii=False) + "}"


def error_frame(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """A protocol failure: OpenEnv's error frame."""
    return {"type": "error", "data": {"message": message, "code": code, **extra}}
