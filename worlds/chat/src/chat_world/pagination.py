"""Opaque cursors for paged listings.

A cursor carries the position after the last item of a page (the sort key and
the id that breaks ties) and a digest of the listing it belongs to, so a cursor
handed to another listing, or to the same listing with other filters, is
refused rather than silently skipping or repeating rows. The cursors are
``seahaven.toolkit``'s; what the agent reads when one is refused is this
product's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seahaven import toolkit
from seahaven.toolkit import encode_cursor, split_page

from chat_world.errors import InvalidInput

__all__ = ["decode_cursor", "encode_cursor", "split_page"]

_NOT_ISSUED = "not a cursor this product issued; pass a next_cursor back unchanged"
_WRONG_LISTING = (
    "this cursor belongs to another listing; repeat the call that returned it with the same "
    "arguments, or leave cursor out to start from the first page"
)


def decode_cursor(cursor: str, scope: Sequence[object], shape: Sequence[type]) -> list[Any]:
    """The position a cursor carries, checked against its listing and the key's types."""
    try:
        return toolkit.decode_cursor(cursor, scope, shape)
    except toolkit.CursorError as refused:
        problem = _NOT_ISSUED if refused.reason == "malformed" else _WRONG_LISTING
        raise InvalidInput.field("cursor", problem) from None
