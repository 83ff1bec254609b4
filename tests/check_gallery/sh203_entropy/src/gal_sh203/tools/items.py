"""Items whose ids and picks come from outside the instance."""

import random
import uuid

import seahaven
from gal_sh203.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: The item's title, as a person would read it in a list.
    """
    item = {"id": str(uuid.uuid4()), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item


@world.tool
def pick(ctx: seahaven.Ctx, titles: list[str]) -> str:
    """Pick one of the titles.

    Args:
        titles: The titles to choose among; give at least one.
    """
    return random.choice(titles)
