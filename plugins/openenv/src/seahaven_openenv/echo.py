"""Naming a client's input in a reply, bounded.

An error that repeats what the client sent (an unknown type, a stray key, a
name) must not grow with it: a frame of 16 MiB would otherwise come back
several times over. Everything here shortens the text it is given, so a
message says which value was wrong without carrying all of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# A value's JSON type in words is the options model's, so every door names it alike.
from seahaven.instance_options import json_type

__all__ = ["ECHO_CHARACTERS", "MAX_LISTED", "clip", "json_type", "listed", "shown"]

# The most characters of one client value a reply repeats.
ECHO_CHARACTERS = 120
# The most client values (stray keys, say) one message lists.
MAX_LISTED = 10


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
