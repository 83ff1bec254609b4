"""Opening hours: no lending before eight, matched on the surface name by mistake."""

from typing import Any

import seahaven
from gal_sh210.world import world


@world.middleware
def opening_hours(ctx: seahaven.Ctx, call: Any, next_: Any) -> Any:
    """Refuse a loan before eight in the morning."""
    if call.name == "lend_book" and ctx.clock.now().hour < 8:
        raise seahaven.ToolError("closed", "the library opens at eight")
    return next_(ctx, call)
