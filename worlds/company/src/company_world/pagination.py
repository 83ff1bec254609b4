"""Keyset pagination with opaque cursors, shared by every list tool.

A listing is ordered by one column and then by id, which is unique, so the
order is total even when many rows share an instant (under a fixed clock they
all do). A cursor carries the last row's (column, id) and a fingerprint of the
listing and its filters: handed to another listing, or to the same one with
other filters, it is refused rather than silently skipping or repeating rows.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from typing import Any

import seahaven
from company_world.errors import InvalidInput

__all__ = ["keyset_page"]

_NOT_OURS = "not a cursor this listing issued; pass a next_cursor back unchanged"
_OTHER_LISTING = (
    "this cursor belongs to another listing or other filters; repeat the call that returned it "
    "with the same arguments, or leave cursor out to start again"
)


def _fingerprint(scope: Sequence[object]) -> str:
    text = json.dumps(list(scope), separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _encode(scope: Sequence[object], after: list[Any]) -> str:
    payload = json.dumps({"l": _fingerprint(scope), "a": after}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def _decode(cursor: str, scope: Sequence[object]) -> tuple[str, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidInput.on("cursor", _NOT_OURS) from None
    after = payload.get("a") if isinstance(payload, dict) else None
    if (
        not isinstance(after, list)
        or len(after) != 2
        or not all(isinstance(part, str) for part in after)
    ):
        raise InvalidInput.on("cursor", _NOT_OURS)
    if payload.get("l") != _fingerprint(scope):
        raise InvalidInput.on("cursor", _OTHER_LISTING)
    return after[0], after[1]


def keyset_page(
    ctx: seahaven.Ctx[Any],
    *,
    scope: Sequence[object],
    table: str,
    where: Sequence[str],
    params: Sequence[Any],
    order_by: str,
    descending: bool,
    limit: int,
    cursor: str | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of ``table`` and the cursor of the next (None on the last page).

    ``table``, ``order_by`` and the SQL in ``where`` come from the tools, never
    from an argument; what the agent chose is bound, as ``params``. ``scope``
    names the listing and its filters, and is what a cursor is checked against.
    """
    conditions = list(where)
    bound = list(params)
    if cursor is not None:
        after_key, after_id = _decode(cursor, scope)
        conditions.append(f"({order_by}, id) {'<' if descending else '>'} (?, ?)")
        bound.extend([after_key, after_id])
    direction = "DESC" if descending else "ASC"
    sql = f"SELECT * FROM {table}"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    sql += f" ORDER BY {order_by} {direction}, id {direction} LIMIT ?"
    rows = ctx.db.rows(sql, *bound, limit + 1)
    shown = rows[:limit]
    more = len(rows) > limit
    next_cursor = _encode(scope, [shown[-1][order_by], shown[-1]["id"]]) if more else None
    return shown, next_cursor
