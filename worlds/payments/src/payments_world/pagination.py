"""Keyset pagination, newest first, shared by every list tool.

Rows are ordered by ``created_at`` descending and then by ``id`` descending:
many rows share an instant (every row one call writes does, and under a fixed
clock every row does), so the id is the tiebreak that makes the order total.
A page's cursor is the id of its last object, as the product publishes it
(``starting_after``); the next page starts strictly after that object's
``(created_at, id)``, read with ``seahaven.toolkit.keyset_page``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

import seahaven
from payments_world.errors import InvalidInput
from payments_world.models import Page
from seahaven.toolkit import keyset_page

__all__ = ["list_page"]

Item = TypeVar("Item", bound=BaseModel)


def list_page(
    ctx: seahaven.Ctx,
    *,
    table: str,
    where: Sequence[str],
    params: Sequence[Any],
    limit: int,
    starting_after: str | None,
    model: type[Item],
    to_model: Callable[[dict[str, Any]], Item],
) -> Page[Item]:
    """One page of ``table``, filtered by the ``where`` conditions (joined with AND).

    ``table`` and the SQL in ``where`` come from the tools, never from an
    argument; the values an agent chose are bound, as ``params``.
    """
    after = None
    if starting_after is not None:
        cursor = ctx.db.one(f"SELECT created_at FROM {table} WHERE id = ?", starting_after)
        if cursor is None:
            raise InvalidInput.on(
                "starting_after",
                f"{starting_after} is not an object of this list; pass the "
                "next_starting_after of the page before",
            )
        after = (cursor["created_at"], starting_after)
    shown, has_more = keyset_page(
        ctx.db,
        table=table,
        where=where,
        params=params,
        order_by="created_at",
        descending=True,
        limit=limit,
        after=after,
    )
    # Built as Page[<the concrete model>], so it serialises with that model's fields.
    page_type: type[Page[Item]] = Page[model]  # type: ignore[valid-type]
    return page_type(
        data=[to_model(row) for row in shown],
        has_more=has_more,
        next_starting_after=shown[-1]["id"] if has_more else None,
    )
