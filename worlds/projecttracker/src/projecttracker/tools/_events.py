"""The audit trail: one ``issue_events`` row for each thing worth knowing about an issue.

Four kinds: ``created``, ``status`` and ``assignee`` (each with ``from`` and ``to``), and
``comment`` (with the comment's id). The payload is JSON text, which the table's ``CHECK``
insists on. Rows one call writes share its instant, so read the trail in the order things
happened with ``ORDER BY created_at, rowid``.
"""

from __future__ import annotations

import json
from typing import Literal

import seahaven

__all__ = ["EventKind", "record"]

EventKind = Literal["created", "status", "assignee", "comment"]


def record(
    ctx: seahaven.Ctx,
    issue_id: str,
    actor_id: str,
    kind: EventKind,
    payload: dict[str, object],
    *,
    at: str | None = None,
) -> str:
    """Append one event to the trail and return its id.

    ``at`` defaults to the instance clock; the fixture generator passes the instant of the
    history it replays.
    """
    event_id = ctx.ids.uuid()
    ctx.db.execute(
        "INSERT INTO issue_events (id, issue_id, actor_id, kind, payload, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        event_id,
        issue_id,
        actor_id,
        kind,
        json.dumps(payload, sort_keys=True, separators=(",", ":")),
        ctx.clock.iso() if at is None else at,
    )
    return event_id
