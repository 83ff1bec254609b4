"""The benchmark's EST wall time and its "today", from the UTC instants the store keeps.

tau2-bench's telecom domain has a fixed "now", 2025-02-25 12:08:00, in EST (its
field descriptions say so): its tools stamp dates with that day. The store keeps
canonical UTC instants, as every Seahaven world does, and the clock stands at
the benchmark's "now"; EST is taken as a fixed five hours behind UTC. Instants
are shown to the agent as the benchmark's JSON shows a ``datetime``
(``2025-01-15 10:30:00``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import seahaven

__all__ = ["EST_OFFSET", "instant_from_est", "shown", "today"]

EST_OFFSET = timedelta(hours=-5)
"""EST's offset from UTC, fixed: the benchmark never moves to daylight time."""

_EST = "%Y-%m-%dT%H:%M:%S"
_UTC = "%Y-%m-%dT%H:%M:%S.000Z"


def instant_from_est(text: str) -> str:
    """``2025-01-15T10:30:00`` (EST) as the canonical UTC instant ``2025-01-15T15:30:00.000Z``."""
    wall = datetime.strptime(text, _EST)
    if wall.strftime(_EST) != text:
        raise ValueError(f"{text!r} is not written as YYYY-MM-DDTHH:MM:SS")
    return (wall - EST_OFFSET).strftime(_UTC)


def shown(instant: str | None) -> str | None:
    """A stored UTC instant as the benchmark shows its EST ``datetime``: ``2025-01-15 10:30:00``."""
    if instant is None:
        return None
    moment = datetime.fromisoformat(instant).astimezone(UTC) + EST_OFFSET
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def today(ctx: seahaven.Ctx) -> date:
    """The benchmark's "today": the clock's date in EST."""
    return (ctx.clock.now().astimezone(UTC) + EST_OFFSET).date()
