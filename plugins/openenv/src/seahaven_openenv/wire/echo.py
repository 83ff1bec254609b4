"""Naming a client's input in a reply, bounded.

An error that repeats what the client sent (an unknown type, a stray key, a
name) must not grow with it: a frame of 16 MiB would otherwise come back
several times over. Everything here shortens the text it is given, so a
message says which value was wrong without carrying all of it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

# A value's JSON type in words is the options model's, so every door names it alike.
from seahaven.declaration.instance_options import json_type

__all__ = [
    "ECHO_CHARACTERS",
    "MAX_ECHO_DEPTH",
    "MAX_LISTED",
    "bounded",
    "clip",
    "json_type",
    "listed",
    "shown",
]

# The most characters of one client value a reply repeats: long enough that no name a client
# sends in earnest (a tool's, a key's, an id) is ever cut, short enough that an error never
# grows with a hostile frame.
ECHO_CHARACTERS = 256
# The most client values (stray keys, say) one message lists.
MAX_LISTED = 10
# How many levels of a client's object or array an echo of it repeats.
MAX_ECHO_DEPTH = 3


def clip(text: str, limit: int = ECHO_CHARACTERS) -> str:
    """``text`` as it is, or its first ``limit`` characters and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def shown(value: Any, limit: int = ECHO_CHARACTERS) -> str:
    """A client's JSON value as a message names it: a short repr, or its JSON type."""
    if isinstance(value, str):
        return repr(clip(value, limit))
    if value is None or isinstance(value, int | float):
        # JSON's numbers are bounded (a parsed int has at most 4300 digits): repr is cheap.
        return clip(repr(value), limit)
    return json_type(value)


def listed(values: Iterable[Any]) -> str:
    """Client values (stray keys, say) as a message lists them: at most ``MAX_LISTED``."""
    items = list(values)
    named = ", ".join(shown(value) for value in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        named += f" and {len(items) - MAX_LISTED} more"
    return named


def bounded(value: Any, depth: int = 0) -> Any:
    """A client's JSON value as a reply may repeat it: the same shape, never much of it.

    Strings are clipped, an integer too long to read at a glance is shown as
    clipped text, and an object or an array keeps its first ``MAX_LISTED``
    members (then ``"... and N more"``) for ``MAX_ECHO_DEPTH`` levels, below which
    it is named by its JSON type. So a frame of 16 MiB, or one nested 500 levels
    deep, is echoed in a few kilobytes at most, whatever it holds.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        # NaN and the infinities (which Python's parser reads) are named: JSON cannot carry them.
        return (
            value
            if math.isfinite(value)
            else {"nan": "NaN", "inf": "Infinity"}.get(str(value), "-Infinity")
        )
    if isinstance(value, int):
        text = str(value) if value.bit_length() < 4 * ECHO_CHARACTERS else None
        return value if text is not None and len(text) <= ECHO_CHARACTERS else shown(value)
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, dict | list):
        if depth >= MAX_ECHO_DEPTH:
            return f"({json_type(value)} of {len(value)})"
        if isinstance(value, dict):
            items = list(itertools.islice(value.items(), MAX_LISTED))
            echoed: Any = {clip(str(key)): bounded(member, depth + 1) for key, member in items}
            if len(value) > MAX_LISTED:
                echoed["..."] = f"and {len(value) - MAX_LISTED} more"
            return echoed
        echoed = [bounded(member, depth + 1) for member in value[:MAX_LISTED]]
        if len(value) > MAX_LISTED:
            echoed.append(f"... and {len(value) - MAX_LISTED} more")
        return echoed
    # Not a JSON value (a context pydantic made): its text, clipped.
    return clip(str(value))
