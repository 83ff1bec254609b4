"""The benchmark's EST wall time and the UTC instants the store keeps.

tau2-bench writes every instant as an EST wall time without a zone
(``2024-05-15T15:00:00``). The store keeps canonical UTC instants, as every
Seahaven world does, and the tools show the agent the benchmark's form. EST is
taken as the benchmark labels it: a fixed five hours behind UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache

__all__ = ["EST_OFFSET", "est_from_instant", "instant_from_est"]

EST_OFFSET = timedelta(hours=-5)
"""EST's offset from UTC, fixed: the benchmark never moves to daylight time."""

_EST = "%Y-%m-%dT%H:%M:%S"
_UTC = "%Y-%m-%dT%H:%M:%S.000Z"


def instant_from_est(text: str) -> str:
    """``2024-05-15T15:00:00`` (EST) as the canonical UTC instant ``2024-05-15T20:00:00.000Z``.

    Raises ``ValueError`` for text that is not an EST wall time in whole seconds.
    """
    wall = datetime.strptime(text, _EST)
    if wall.strftime(_EST) != text:
        raise ValueError(f"{text!r} is not written as YYYY-MM-DDTHH:MM:SS")
    return (wall - EST_OFFSET).strftime(_UTC)


# Every reservation shown renders its creation time, and strftime imports a module on each
# call; the function is pure, so each instant is worked out once per process.
@lru_cache(maxsize=4096)
def est_from_instant(instant: str) -> str:
    """A canonical UTC instant as the benchmark writes it: EST wall time, whole seconds."""
    moment = datetime.fromisoformat(instant).astimezone(UTC)
    return (moment + EST_OFFSET).strftime(_EST)
