"""Instants and calendar dates read from the instance clock, in the world's one text format."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import seahaven

__all__ = ["date_after", "today"]


def date_after(ctx: seahaven.Ctx[Any], days: int) -> str:
    """The UTC calendar date ``days`` days after the clock's reading, as YYYY-MM-DD."""
    return (ctx.clock.now() + timedelta(days=days)).date().isoformat()


def today(ctx: seahaven.Ctx[Any]) -> str:
    """The clock's current UTC calendar date, as YYYY-MM-DD."""
    return date_after(ctx, 0)
