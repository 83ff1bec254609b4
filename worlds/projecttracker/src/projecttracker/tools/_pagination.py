"""The keyset cursor every list pages with. Never an ``OFFSET``.

An offset page re-reads every row before it and shifts when a row is inserted in front of it,
so an agent walking a list could see a row twice or miss one. A page here continues strictly
after a position, ``(sort column, id)``: the sort column alone is not unique (under a fixed
clock every row of a run shares one instant), and the id makes the order total.

The cursor is ``seahaven.toolkit``'s: base64 of JSON holding that position and a digest of the
listing (the resource, its ordering and every filter it was called with), so a cursor from one
list, or from the same list with other filters, is refused instead of silently misleading. It
is opaque to an agent but not secret. What the agent reads when one is refused is this
product's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from projecttracker.errors import InvalidInput
from seahaven import toolkit

__all__ = ["Listing", "page", "position"]

Listing = tuple[object, ...]
"""What a cursor is tied to: the resource, its ordering, and the filters of the call."""

_NOT_ISSUED = "not a cursor this tracker issued; pass a next_cursor back exactly as you got it"
_OTHER_LISTING = (
    "this cursor belongs to another list, or to this list with other filters; repeat the call "
    "that returned it with the same arguments, or leave cursor out to start again"
)


def position(cursor: str | None, listing: Listing, shape: Sequence[type]) -> list[Any] | None:
    """The position after which the page starts, or None for the first page."""
    if cursor is None:
        return None
    try:
        return toolkit.decode_cursor(cursor, listing, shape)
    except toolkit.CursorError as refused:
        problem = _NOT_ISSUED if refused.reason == "malformed" else _OTHER_LISTING
        raise InvalidInput.on("cursor", problem) from None


def page(
    name: str,
    items: list[Any],
    more: bool,
    listing: Listing,
    last: Callable[[], list[Any]],
) -> dict[str, Any]:
    """The three fields every list answers: the items under ``name``, has_next, next_cursor.

    ``last()`` is the position of the page's last row; it is called only when there is a next
    page, so an empty page never asks for it.
    """
    return {
        name: items,
        "has_next": more,
        "next_cursor": toolkit.encode_cursor(listing, last()) if more else None,
    }
