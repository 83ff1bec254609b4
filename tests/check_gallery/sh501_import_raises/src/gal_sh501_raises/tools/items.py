"""Items, with a module-level computation that fails at import."""

import seahaven
from gal_sh501_raises.world import world

ITEMS_PER_PAGE = 0
PAGES = 100 // ITEMS_PER_PAGE


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    return {"id": ctx.ids.uuid(), "title": title}
