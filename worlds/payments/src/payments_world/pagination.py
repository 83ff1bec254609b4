"""Keyset pagination, newest first, shared by every list tool.

Rows are ordered by ``created_at`` descending and then by ``id`` descending:
many rows share an instant (every row one call writes does, and under a fixed
clock every row does), so the id is the tiebreak that makes the order total.
A page's cursor is the id of its last object; the next page starts strictly
after that object's ``(created_at, id)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

import seahaven
from payments_world.errors import InvalidInput
from payments_world.models import Page

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
    conditions = list(where)
    bound = list(params)
    if starting_after is not None:
        cursor = ctx.db.one(f"SELECT created_at FROM {table} WHERE id = ?", starting_after)
        if cursor is None:
            raise InvalidInput.on(
                "starting_after",
                f"{starting_after} is not an object of this list; pass the "
                "next_starting_after of the page before",
            )
        conditions.append("(created_at < ? OR (created_at = ? AND id < ?))")
        bound.extend([cursor["created_at"], cursor["created_at"], starting_after])
    sql = f"SELECT * FROM {table}"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
    rows = ctx.db.rows(sql, *bound, limit + 1)
    has_more = len(rows) > limit
    shown = rows[:limit]
    # Built as Page[<the concrete model>], so it serialises with that model's fields.
    page_type: type[Page[Item]] = Page[model]  # type: ignore[valid-type]
    return page_type(
        data=[to_model(row) for row in shown],
        has_more=has_more,
        next_starting_after=shown[-1]["id"] if has_more else None,
    )
