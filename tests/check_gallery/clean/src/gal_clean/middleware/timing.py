"""Times every call with the machine's clock, which is what middleware may do."""

import time
from typing import Any

from gal_clean.world import world

TIMINGS: list[float] = []


@world.middleware
def timing(ctx: Any, call: Any, next_: Any) -> Any:
    started = time.perf_counter()
    try:
        return next_(ctx, call)
    finally:
        TIMINGS.append(time.perf_counter() - started)
