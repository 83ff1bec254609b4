"""Items: create one."""

import seahaven
from gal_sh301.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    item = {"id": ctx.ids.uuid(), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item
