"""Items: every parameter described but one, each in a way the framework reads."""

from typing import Annotated

from pydantic import Field

import seahaven
from gal_sh211.world import world

Title = Annotated[str, Field(min_length=1, description="The item's title, as a list shows it.")]


@world.tool
def create_item(ctx: seahaven.Ctx, title: Title) -> dict[str, str]:
    """Create an item with this title and return it."""
    item = {"id": ctx.ids.uuid(), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item


@world.tool
def rename_item(ctx: seahaven.Ctx, item_id: str, title: Title | None = None) -> int:
    """Give an item a new title, or clear it back to its id.

    Args:
        item_id: The id create_item returned.
    """
    cursor = ctx.db.execute(
        "UPDATE items SET title = ? WHERE id = ?", title if title is not None else item_id, item_id
    )
    return cursor.rowcount


@world.tool
def find_items(
    ctx: seahaven.Ctx,
    prefix: str,
    limit: int = 10,
) -> list[str]:
    """Titles that start with a prefix; the prefix is described, the limit is not.

    Args:
        prefix: The first letters of the titles to find.
    """
    rows = ctx.db.rows("SELECT title FROM items WHERE title LIKE ? || '%' LIMIT ?", prefix, limit)
    return [row["title"] for row in rows]
