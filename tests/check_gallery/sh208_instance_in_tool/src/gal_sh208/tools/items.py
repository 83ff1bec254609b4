"""Items, and a tool that makes an instance of its own world mid-call."""

import seahaven
from gal_sh208.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    item = {"id": ctx.ids.uuid(), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item


@world.tool
def copy_items(ctx: seahaven.Ctx) -> int:
    """Copy every item into a scratch instance."""
    with world.instance() as scratch:
        return len(scratch.tools())
