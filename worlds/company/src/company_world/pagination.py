"""Keyset pagination with opaque cursors, shared by every list tool.

A listing is ordered by one column and then by id, which is unique, so the
order is total even when many rows share an instant (under a fixed clock they
all do). A cursor carries the last row's (column, id) and a fingerprint of the
listing and its filters: handed to another listing, or to the same one with
other filters, it is refused rather than silently skipping or repeating rows.
The cursors and the query are ``seahaven.toolkit``'s; the refusals are the
company's own ``INVALID_INPUT``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import seahaven
from company_world.errors import InvalidInput
from seahaven import toolkit

__all__ = ["keyset_page"]

_NOT_OURS = "not a cursor this listing issued; pass a next_cursor back unchanged"
_OTHER_LISTING = (
    "this cursor belongs to another listing or other filters; repeat the call that returned it "
    "with the same arguments, or leave cursor out to start again"
)


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
    after = None
    if cursor is not None:
        try:
            after = toolkit.decode_cursor(cursor, scope, (str, str))
        except toolkit.CursorError as refused:
            problem = _OTHER_LISTING if refused.reason == "listing" else _NOT_OURS
            raise InvalidInput.on("cursor", problem) from None
    shown, more = toolkit.keyset_page(
        ctx.db,
        table=table,
        where=where,
        params=params,
        order_by=order_by,
        descending=descending,
        limit=limit,
        after=after,
    )
    if not more:
        return shown, None
    return shown, toolkit.encode_cursor(scope, [shown[-1][order_by], shown[-1]["id"]])
