"""The wire: reading a client's frame, and writing the server's.

Frames are OpenEnv's: ``{"type": ..., "data": ...}`` text messages holding
JSON. A frame that is not JSON, not an object, or of an unknown type is a
``FrameError`` with OpenEnv's code for it. Replies are encoded compactly, and a
tool result that plain JSON cannot hold (a pydantic model, a dataclass) is
rendered the way pydantic renders it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_jsonable_python

from seahaven_openenv.session import FrameError

__all__ = [
    "ERROR_CODES",
    "FRAME_TYPES",
    "encode",
    "error_frame",
    "observation_frame",
    "parse",
    "state_frame",
    "state_frame_text",
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
FRAME_TYPES = ("reset", "step", "state", "close", "mcp")

_FRAME_KEYS: dict[str, frozenset[str]] = {
    "reset": frozenset({"type", "data"}),
    "step": frozenset({"type", "data"}),
    "state": frozenset({"type"}),
    "close": frozenset({"type"}),
    "mcp": frozenset({"type", "data"}),
}


def parse(text: str | bytes) -> tuple[str, Any]:
    """A client frame's type and data; ``FrameError`` for a frame that is not one."""
    try:
        frame = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise FrameError("INVALID_JSON", f"Invalid JSON: {error}") from None
    if not isinstance(frame, dict):
        raise FrameError("VALIDATION_ERROR", 'a frame is a JSON object, {"type": ..., "data": ...}')
    kind = frame.get("type")
    allowed = _FRAME_KEYS.get(kind) if isinstance(kind, str) else None
    if allowed is None or not isinstance(kind, str):
        raise FrameError(
            "UNKNOWN_TYPE",
            f"Unknown message type: {kind!r}; the types are {', '.join(FRAME_TYPES)}",
        )
    stray = sorted(key for key in frame if key not in allowed)
    if stray:
        raise FrameError(
            "VALIDATION_ERROR",
            f"a {kind} frame does not take {', '.join(repr(key) for key in stray)}",
        )
    if kind == "step" and "data" not in frame:
        raise FrameError("VALIDATION_ERROR", "a step frame needs data: the action")
    data = frame.get("data", {})
    return kind, data


def encode(frame: dict[str, Any]) -> str:
    """A reply as compact JSON text."""
    return json.dumps(
        frame, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_render
    )


def _render(value: Any) -> Any:
    return to_jsonable_python(value)


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


def error_frame(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """A protocol failure: OpenEnv's error frame."""
    return {"type": "error", "data": {"message": message, "code": code, **extra}}
