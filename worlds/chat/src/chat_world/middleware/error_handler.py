"""The chat world's outermost layer: it decides every error the agent can read.

It is registered ahead of every other middleware, so the rest of the chain runs
inside it. Three outcomes:

* argument errors from the framework become ``INVALID_INPUT``, one entry per
  violation, each explained with the argument's own description where it has one;
* the world's own errors and every ``WorldBug`` are re-raised untouched;
* a failed SQL statement or any other exception is a defect of this world: the
  traceback is logged here and the agent receives ``INTERNAL``.
"""

from __future__ import annotations

import logging
from typing import Any

import seahaven
from seahaven.world import Handler

from chat_world.errors import Internal, InvalidInput
from chat_world.world import world

__all__ = ["error_handler"]

_log = logging.getLogger("chat_world")


@world.middleware
def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
    """Let the call run; turn what it raises into something the agent may read."""
    try:
        return next_(ctx, call)
    except seahaven.ArgumentError as refused:
        raise InvalidInput.from_violations(refused.violations, _descriptions(call)) from refused
    except (seahaven.WorldBug, seahaven.ToolError) as raised:
        if not isinstance(raised, seahaven.DbError):
            raise
        # The engine refused SQL this world wrote; the agent cannot act on its text.
        raise _hidden(ctx, call, "database error", raised) from raised
    except Exception as raised:
        raise _hidden(ctx, call, "unexpected error", raised) from raised


def _hidden(ctx: seahaven.Ctx, call: seahaven.Call, kind: str, raised: Exception) -> Internal:
    """Keep a defect's traceback in the log, and hand back what the agent is told instead."""
    _log.error("%s: %s under %s", ctx.instance.id, kind, call.name, exc_info=raised)
    return Internal()


def _descriptions(call: seahaven.Call) -> dict[str, str]:
    """Each argument's description, from the JSON schema the agent was shown."""
    properties = call.tool.schema.get("properties", {})
    return {
        name: str(spec["description"])
        for name, spec in properties.items()
        if isinstance(spec, dict) and "description" in spec
    }
