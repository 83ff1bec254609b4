"""Payments' outermost layer: the agent only ever reads an error this processor wrote.

The world registers this middleware before any other, so every layer and every
tool runs inside it. Whatever a call raises is sorted one of three ways:

* the framework's refusal of the arguments is restated as ``INVALID_INPUT``,
  listing each violation, so the agent can correct all of them at once;
* this processor's own errors, and any ``WorldBug``, go out exactly as raised:
  the first are written for the agent already, the second is the author's to
  see and is never disguised as a payments error;
* anything else is a defect here, SQL that SQLite refused included. It is
  logged with its traceback (the engine's wording goes to the log alone) and
  the agent is told ``INTERNAL``.
"""

from __future__ import annotations

import logging
from typing import Any

import seahaven
from payments_world.errors import Internal, InvalidInput
from payments_world.world import world
from seahaven.world import Handler

__all__ = ["error_handler"]

_log = logging.getLogger("payments_world")


@world.middleware
def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
    """Run the call, and swap whatever it raises for the error this processor publishes."""
    try:
        return next_(ctx, call)
    except Exception as raised:
        published = _published(ctx, call, raised)
        if published is raised:
            raise
        raise published from raised


def _published(ctx: seahaven.Ctx, call: seahaven.Call, raised: Exception) -> Exception:
    """What the agent gets in place of ``raised``; ``raised`` itself when it may pass."""
    if isinstance(raised, seahaven.ArgumentError):
        return InvalidInput.from_violations(raised.violations)
    if isinstance(raised, seahaven.DbError):
        # Our own SQL was refused. Nothing the agent sends can fix that, and the
        # engine's message names our tables, so it is kept for the log.
        _log.error(
            "%s: %s failed in SQLite (%s)",
            ctx.instance.id,
            call.name,
            raised.sqlite_message,
            exc_info=raised,
        )
        return Internal()
    if isinstance(raised, seahaven.ToolError | seahaven.WorldBug):
        return raised
    # A tool's own bug. Nothing after this layer will log it, so it is logged now.
    _log.error(
        "%s: %s raised a bug the agent cannot act on", ctx.instance.id, call.name, exc_info=raised
    )
    return Internal()
