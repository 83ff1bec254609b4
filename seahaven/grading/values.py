"""Comparing values the way a grader means them, not the way Python stores them.

A row read from SQLite, a value in a change-log record, and a value written in a
scenario's YAML may spell one number three ways (``25``, ``25.0``, ``true`` for
``1``), and a JSON column holds text whose spacing says nothing. ``canonical``
turns each into one hashable form, so equality, multiset comparison and
hashing agree with what a person reading the values would say.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["as_number", "canonical", "same", "show"]

# How deep a JSON column's text is parsed before it is compared as text.
_MAX_JSON_DEPTH = 64


def canonical(value: Any, *, _depth: int = 0) -> Any:
    """One hashable form per meaning: numbers by value, JSON text by its content.

    ``True`` is ``1`` (SQLite has no booleans), a float with no fraction is that
    integer, a string holding a JSON object or array is that object or array, a
    mapping is its sorted items and a list a tuple. NaN compares equal to NaN,
    since a grader asking for one means it.
    """
    # A plain integer is the commonest value, and ``bool`` is a subclass of ``int``.
    if type(value) is int or value is None:
        return value
    if isinstance(value, str) and value[:1] not in ("{", "["):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return ("nan",)
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if _depth >= _MAX_JSON_DEPTH:
        return ("deep", repr(value))
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        if not isinstance(parsed, dict | list):
            return value
        return canonical(parsed, _depth=_depth + 1)
    if isinstance(value, Mapping):
        return (
            "{}",
            tuple(
                sorted(
                    ((str(key), canonical(item, _depth=_depth + 1)) for key, item in value.items()),
                    key=lambda pair: pair[0],
                )
            ),
        )
    if isinstance(value, list | tuple):
        return ("[]", tuple(canonical(item, _depth=_depth + 1) for item in value))
    if isinstance(value, bytes):
        return ("bytes", value)
    return ("other", repr(value))


def same(left: Any, right: Any) -> bool:
    """Whether two values mean the same to a grader (``25 == 25.0``, JSON text by content)."""
    return bool(canonical(left) == canonical(right))


def show(value: Any, limit: int = 60) -> str:
    """A value as a check's sentence quotes it: JSON, cut short when long."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_NUMBER_NOISE = re.compile(r"[\s,_$€£¥]")
# A currency code written before or after an amount: "USD 1,600.00", "1600 eur".
_CURRENCY_CODE = re.compile(r"^\s*[A-Za-z]{3}(?![A-Za-z])|(?<![A-Za-z])[A-Za-z]{3}\s*$")


def as_number(value: Any) -> float | None:
    """A number, or text that spells one (``"$1,250.00"``, ``"1250 USD"``); else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = _NUMBER_NOISE.sub("", _CURRENCY_CODE.sub("", value, count=2))
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None
