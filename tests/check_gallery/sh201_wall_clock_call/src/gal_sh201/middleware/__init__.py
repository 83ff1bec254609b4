"""Middleware: a real clock timing a real call is exempt."""

import time
from typing import Any

from gal_sh201.world import world


@world.middleware
def stamp(ctx: Any, call: Any, next_: Any) -> Any:
    started = time.time()
    result = next_(ctx, call)
    del started
    return result
