"""The audit trail: every change a company tool makes is one row, in order, naming who made it."""

from __future__ import annotations

import json
from typing import Any

import seahaven

__all__ = ["record"]


def record(
    ctx: seahaven.Ctx[Any], *, actor_id: str | None, action: str, subject_id: str, **detail: object
) -> None:
    """Append one audit row. ``detail`` holds JSON-ready facts about the change."""
    ctx.db.execute(
        "INSERT INTO audit_log (seq, occurred_at, actor_id, action, subject_id, detail)"
        " VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM audit_log), ?, ?, ?, ?, ?)",
        ctx.clock.iso(),
        actor_id,
        action,
        subject_id,
        json.dumps(detail, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
    )
