"""Items: create one, and pick one at random from the instance's own stream."""

import uuid
from datetime import datetime

import seahaven
from gal_clean.handles import CleanWorlds
from gal_clean.world import world


@world.tool
def create_item(ctx: seahaven.Ctx[CleanWorlds], title: str) -> dict[str, str]:
    """Create an item with this title, open a vendor account for it, and return it.

    Args:
        title: The item's title, also the note on its vendor account.
    """
    item = {"id": str(uuid.UUID(ctx.ids.uuid())), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    ctx.worlds.vendor.call("open_account", note=title)
    return item


@world.tool
def pick_item(ctx: seahaven.Ctx, titles: list[str]) -> str:
    """Pick one of the titles, drawing from the instance's seeded stream.

    Args:
        titles: The titles to choose among; give at least one.
    """
    return ctx.ids.random.choice(titles)


@world.tool
def parse_when(ctx: seahaven.Ctx, when: str) -> str:
    """Read an ISO timestamp and return it in the world's canonical format.

    Args:
        when: An ISO 8601 timestamp, such as 2031-03-14T08:30:00+00:00.
    """
    return datetime.fromisoformat(when).isoformat()
