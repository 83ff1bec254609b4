"""The error handler: nothing reaches the agent that this processor did not choose to say.

Registered before any other middleware, so it is the outermost layer and sees
every error a call raises.
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
    """Map everything that escapes a tool into one of this world's error shapes."""
    try:
        return next_(ctx, call)
    except seahaven.ArgumentError as error:
        # Every violation at once, so the agent can fix all of them in one turn.
        raise InvalidInput.from_violations(error.violations) from error
    except seahaven.DbError as error:
        # SQL this world wrote was refused: a bug of ours, not something the agent
        # can act on. The engine's text goes to the log, never to the agent.
        _log.error(
            "%s: database error under %s: %s",
            ctx.instance.id,
            call.name,
            error.sqlite_message,
            exc_info=error,
        )
        raise Internal() from error
    except seahaven.ToolError:
        raise  # this processor's own errors are written for the agent already
    except seahaven.WorldBug:
        raise  # the author's mistake: loud, unchanged, never dressed up as a product error
    except Exception as error:
        # A bug in a tool. It stops here, so it is logged here.
        _log.error("%s: unexpected error under %s", ctx.instance.id, call.name, exc_info=error)
        raise Internal() from error
