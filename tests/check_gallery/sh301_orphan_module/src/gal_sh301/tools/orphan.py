"""A tool module nobody imports, so its tool is never registered."""

import seahaven
from gal_sh301.world import world


@world.tool
def delete_item(ctx: seahaven.Ctx, item_id: str) -> None:
    """Delete one item."""
    ctx.db.execute("DELETE FROM items WHERE id = ?", item_id)
