"""Items: one tool documented, one not."""

import seahaven
from gal_sh205.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    item = {"id": ctx.ids.uuid(), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item


@world.tool(description="   ")
def count_items(ctx: seahaven.Ctx) -> int:
    row = ctx.db.one("SELECT count(*) AS n FROM items")
    return int(row["n"]) if row is not None else 0
