"""The error handler: nothing reaches the agent that this world did not choose.

Registered first, so it wraps every other layer. The framework's argument
errors become ``INVALID_INPUT`` with every violation; a database failure or an
unexpected exception is this world's bug, so it is logged here with its
traceback and the agent gets ``INTERNAL``. This world's own errors and every
``WorldBug`` pass through unchanged.
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
    """Map whatever escapes a tool onto one of this world's error shapes."""
    try:
        return next_(ctx, call)
    except seahaven.ArgumentError as error:
        raise InvalidInput.from_violations(error.violations, _descriptions(call)) from error
    except seahaven.DbError as error:
        # SQL this world wrote was refused: the agent can do nothing with the
        # engine's text, so it goes to the log and the agent gets INTERNAL.
        _log.error("%s: database error under %s", ctx.instance.id, call.name, exc_info=error)
        raise Internal() from error
    except seahaven.ToolError:
        raise
    except seahaven.WorldBug:
        raise
    except Exception as error:
        _log.error("%s: unexpected error under %s", ctx.instance.id, call.name, exc_info=error)
        raise Internal() from error


def _descriptions(call: seahaven.Call) -> dict[str, str]:
    """Each argument's description, from the JSON schema the agent was shown."""
    properties = call.tool.schema.get("properties", {})
    return {
        name: str(spec["description"])
        for name, spec in properties.items()
        if isinstance(spec, dict) and "description" in spec
    }
