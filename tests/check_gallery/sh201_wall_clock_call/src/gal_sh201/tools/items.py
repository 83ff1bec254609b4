"""Items, dated by the machine's clock rather than the instance's."""

import datetime
from datetime import datetime as dt

import seahaven
from gal_sh201.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    item = {"id": ctx.ids.uuid(), "title": title}
    item["at"] = dt.now().isoformat()
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item


@world.tool
def today(ctx: seahaven.Ctx) -> str:
    """Today's date."""
    return datetime.datetime.now(datetime.UTC).date().isoformat()
