"""Instants and dates relative to the instance's clock, in the world's one text format."""

from __future__ import annotations

from datetime import datetime, timedelta

import seahaven

__all__ = ["canonical", "date_after", "today"]


def canonical(moment: datetime) -> str:
    """``moment`` in the format every timestamp in the world uses: UTC, milliseconds, a Z."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def date_after(ctx: seahaven.Ctx, days: int) -> str:
    """The UTC calendar date ``days`` days after the clock's current reading, as YYYY-MM-DD."""
    return (ctx.clock.now() + timedelta(days=days)).date().isoformat()


def today(ctx: seahaven.Ctx) -> str:
    """The clock's current UTC calendar date, as YYYY-MM-DD."""
    return date_after(ctx, 0)
