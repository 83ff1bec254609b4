"""Opaque cursors for paged listings.

A cursor carries the position after the last item of a page (the sort key and
the id that breaks ties) and a digest of the listing it belongs to, so a cursor
handed to another listing, or to the same listing with other filters, is
refused rather than silently skipping or repeating rows.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from typing import Any, TypeVar

from chat_world.errors import InvalidInput

__all__ = ["decode_cursor", "encode_cursor", "split_page"]

T = TypeVar("T")

_WRONG_LISTING = (
    "this cursor belongs to another listing; repeat the call that returned it with the same "
    "arguments, or leave cursor out to start from the first page"
)


def _digest(scope: Sequence[object]) -> str:
    text = json.dumps(list(scope), separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def encode_cursor(scope: Sequence[object], position: Sequence[str | int]) -> str:
    """A cursor for the page after ``position`` in the listing ``scope`` names."""
    payload = json.dumps({"s": _digest(scope), "p": list(position)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, scope: Sequence[object], shape: Sequence[type]) -> list[Any]:
    """The position a cursor carries, checked against its listing and the key's types."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidInput.field(
            "cursor", "not a cursor this product issued; pass a next_cursor back unchanged"
        ) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("p"), list):
        raise InvalidInput.field(
            "cursor", "not a cursor this product issued; pass a next_cursor back unchanged"
        )
    if payload.get("s") != _digest(scope):
        raise InvalidInput.field("cursor", _WRONG_LISTING)
    position: list[Any] = payload["p"]
    if len(position) != len(shape) or not all(
        type(value) is kind for value, kind in zip(position, shape, strict=True)
    ):
        raise InvalidInput.field("cursor", _WRONG_LISTING)
    return position


def split_page(rows: list[T], limit: int) -> tuple[list[T], bool]:
    """The first ``limit`` rows, and whether more followed (the query fetched one extra)."""
    return rows[:limit], len(rows) > limit
