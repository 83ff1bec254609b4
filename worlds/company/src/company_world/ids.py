"""Identifiers for the back office's records (``emp_...``, ``inv_...``), from the seeded stream."""

from __future__ import annotations

from typing import Any

import seahaven

__all__ = ["new_id"]


def new_id(ctx: seahaven.Ctx[Any], prefix: str) -> str:
    """A fresh id such as ``inv_3f9a0c1b2d4e5f60``: 64 bits of the instance's id stream."""
    return f"{prefix}_{ctx.ids.uuid().replace('-', '')[:16]}"
