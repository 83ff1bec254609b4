"""The back office's outermost layer: an agent only ever reads errors the company wrote.

Registered first, so it wraps every call on the surface, the added worlds'
tools included. A declined card or an archived channel arrives here already
phrased by payments or chat, and the gate's ``FORBIDDEN`` by this world; those
go out untouched, and so does every ``WorldBug``, which is the author's to read.
Two kinds of failure are restated: arguments the framework refused become
``INVALID_INPUT`` with every violation listed, and anything unplanned (SQL the
engine refused included) is logged with its traceback and becomes ``INTERNAL``.
"""

from __future__ import annotations

import logging
from typing import Any

import seahaven
from company_world.errors import Internal, InvalidInput
from company_world.world import world
from seahaven.world import Handler

__all__ = ["error_handler"]

_log = logging.getLogger("company_world")


def _restated(ctx: seahaven.Ctx, call: seahaven.Call, failure: Exception) -> Exception | None:
    """The company's own error in place of ``failure``, or ``None`` to let it through."""
    if isinstance(failure, seahaven.ArgumentError):
        return InvalidInput.from_violations(failure.violations)
    if isinstance(failure, seahaven.DbError):
        detail = f"SQLite refused our SQL: {failure.sqlite_message}"
    elif isinstance(failure, seahaven.ToolError | seahaven.WorldBug):
        # Phrased for the agent already, or the author's to read: never restated.
        return None
    else:
        detail = f"unplanned {type(failure).__name__}"
    # Nothing outside this layer logs a failure it turns into INTERNAL.
    _log.error(
        "%s: %s in %s (node=%s)", ctx.instance.id, detail, call.name, call.node, exc_info=failure
    )
    return Internal()


@world.middleware
def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
    """Pass the call on; on the way out, restate whatever the agent must not read raw."""
    try:
        return next_(ctx, call)
    except Exception as failure:
        replacement = _restated(ctx, call, failure)
        if replacement is None:
            raise
        raise replacement from failure
