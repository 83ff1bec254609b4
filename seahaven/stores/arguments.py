"""Limits on a call's arguments: how deep they may nest, and how much of them the call log keeps.

Arguments arrive from a harness or a socket, so nothing bounds them but what is
here. ``check_depth`` refuses a value nested more than ``MAX_ARGUMENT_DEPTH``
containers deep (an ``ArgumentError``, before any middleware or tool sees it),
since walking such a value is what every layer after it does, and Python's
stack would give out first. ``kept_arguments`` is the copy the call log keeps:
each argument whole, until the copy would pass its budget
(``CALL_LOG_ARGUMENT_BYTES``, or ``REFUSED_ARGUMENT_BYTES`` once the arguments
were refused); an argument past it is kept as a marker, ``{"seahaven_cut":
"<what was there>"}``, so the log of a long episode, or of an agent sending
huge refused frames, stays small.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seahaven.errors import ArgumentError

__all__ = [
    "CALL_LOG_ARGUMENT_BYTES",
    "CUT_KEY",
    "MAX_ARGUMENT_DEPTH",
    "MAX_KEPT_ERROR_CHARACTERS",
    "REFUSED_ARGUMENT_BYTES",
    "check_depth",
    "kept_arguments",
    "kept_error",
]

# How many containers (objects, arrays) one argument may nest, counting its own.
MAX_ARGUMENT_DEPTH = 64

# About how much of one call's arguments, as JSON text, the call log keeps.
CALL_LOG_ARGUMENT_BYTES = 65_536

# The same for a call refused for its arguments: enough to see what was sent.
REFUSED_ARGUMENT_BYTES = 4_096

# The longest error message the call log keeps for one call.
MAX_KEPT_ERROR_CHARACTERS = 4_096

# The key of the marker that stands in for what the call log did not keep.
CUT_KEY = "seahaven_cut"

_CONTAINERS = frozenset({dict, list, tuple})


def _too_deep(value: Any, room: int) -> bool:
    """Whether ``value`` nests more than ``room`` containers, counting itself."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return False
    if room == 0:
        return True
    room -= 1
    for item in items:
        inner = type(item)
        if (inner is dict or inner is list or inner is tuple) and _too_deep(item, room):
            return True
    return False


def check_depth(tool: str, arguments: Mapping[str, Any]) -> None:
    """Refuse, as ``ArgumentError``, an argument nested deeper than ``MAX_ARGUMENT_DEPTH``.

    A value nested in itself is refused the same way, since it never ends.
    """
    deep = [
        name
        for name, value in arguments.items()
        if type(value) in _CONTAINERS and _too_deep(value, MAX_ARGUMENT_DEPTH)
    ]
    if deep:
        raise ArgumentError(
            tool,
            [
                {
                    "loc": [name],
                    "msg": f"the value nests more than {MAX_ARGUMENT_DEPTH} objects or arrays "
                    "deep; send a flatter value",
                    "type": "too_deep",
                }
                for name in deep
            ],
        )


class _Cut(Exception):
    """Raised inside a copy: the value does not fit, and why."""


def _size(value: Any) -> int:
    """About how long ``value`` is as JSON text, for a value that is not a container."""
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value) + 2
    if kind is int:
        return int(value.bit_length()) // 3 + 2
    return 8


def _what(value: Any) -> str:
    """The marker's words for a value the call log does not keep."""
    kind = type(value)
    if kind is str:
        return f"a string of {len(value)} characters"
    if kind is bytes:
        return f"{len(value)} bytes"
    if kind is dict:
        return f"an object of {_count(len(value), 'key')}"
    if kind is list or kind is tuple:
        return f"an array of {_count(len(value), 'item')}"
    return f"a {kind.__name__}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _copy(value: Any, depth: int, room: list[int]) -> Any:
    """A copy of ``value`` charged to ``room[0]``; ``_Cut`` when it does not fit."""
    kind = type(value)
    if kind is dict:
        if depth == MAX_ARGUMENT_DEPTH:
            raise _Cut(f"nested more than {MAX_ARGUMENT_DEPTH} deep")
        copied = {}
        _charge(room, 2)
        for key, item in value.items():
            _charge(room, _size(key) + 1)
            copied[key] = _copy(item, depth + 1, room)
        return copied
    if kind is list or kind is tuple:
        if depth == MAX_ARGUMENT_DEPTH:
            raise _Cut(f"nested more than {MAX_ARGUMENT_DEPTH} deep")
        _charge(room, 2)
        items = [_copy(item, depth + 1, room) for item in value]
        return items if kind is list else tuple(items)
    _charge(room, _size(value) + 1)
    return value


def _charge(room: list[int], size: int) -> None:
    room[0] -= size
    if room[0] < 0:
        raise _Cut("")


def kept_arguments(arguments: Mapping[str, Any], budget: int) -> tuple[dict[str, Any], bool]:
    """What the call log keeps of ``arguments``, and whether anything was cut.

    Lists and dicts are copied, so a tool that changes what it was handed does
    not change the record; other values are kept as they are. Each argument is
    kept whole while about ``budget`` bytes of JSON text hold it; one that does
    not fit becomes ``{CUT_KEY: "<what it was>"}``, and once even the names no
    longer fit, the rest are counted under ``CUT_KEY``.
    """
    # The common case first: scalars that fit whole, kept as they are without a copy.
    charged = 0
    for name, value in arguments.items():
        kind = type(value)
        if kind is str:
            charged += len(value) + 3
        elif kind is int:
            charged += int(value.bit_length()) // 3 + 3
        elif kind in _CONTAINERS or kind is bytes:
            break
        else:
            charged += 9
        charged += (len(name) + 3) if type(name) is str else 9
    else:
        if charged <= budget:
            return dict(arguments), False
    room = [budget]
    kept: dict[str, Any] = {}
    cut = False
    for position, (name, value) in enumerate(arguments.items()):
        room[0] -= _size(name) + 1
        if room[0] < 0:
            kept[CUT_KEY] = f"{len(arguments) - position} more arguments"
            return kept, True
        if type(value) not in _CONTAINERS:
            # A scalar that fits is the common case, and needs no copy.
            size = _size(value) + 1
            if size <= room[0]:
                room[0] -= size
                kept[name] = value
                continue
        before = room[0]
        try:
            kept[name] = _copy(value, 0, room)
        except _Cut as why:
            room[0] = before - 40
            reason = str(why)
            kept[name] = {CUT_KEY: _what(value) + (f", {reason}" if reason else "")}
            cut = True
        except RecursionError:
            room[0] = before - 40
            kept[name] = {CUT_KEY: _what(value) + ", nested too deep to copy"}
            cut = True
    return kept, cut


def kept_error(message: str) -> str:
    """What the call log keeps of an error's message: at most ``MAX_KEPT_ERROR_CHARACTERS``."""
    if len(message) <= MAX_KEPT_ERROR_CHARACTERS:
        return message
    return (
        message[: MAX_KEPT_ERROR_CHARACTERS - 60]
        + f"... [{CUT_KEY}: {len(message) - MAX_KEPT_ERROR_CHARACTERS + 60} more characters]"
    )
