"""The chat world's outermost layer: it decides every error the agent can read.

It is registered ahead of every other middleware, so the rest of the chain runs
inside it. It is ``seahaven.toolkit.error_handler``, with three outcomes:

* argument errors from the framework become ``INVALID_INPUT``, one entry per
  violation, each explained with the argument's own description where it has one;
* the world's own errors and every ``WorldBug`` are re-raised untouched;
* a failed SQL statement or any other exception is a defect of this world: the
  traceback is logged here and the agent receives ``INTERNAL``.
"""

from __future__ import annotations

import logging

import seahaven
import seahaven.toolkit

from chat_world.errors import Internal, InvalidInput
from chat_world.world import world

__all__ = ["error_handler"]


def _restated(refused: seahaven.ArgumentError, call: seahaven.Call) -> InvalidInput:
    """The framework's argument violations in this product's shape, with each description."""
    return InvalidInput.from_violations(refused.violations, _descriptions(call))


def _descriptions(call: seahaven.Call) -> dict[str, str]:
    """Each argument's description, from the JSON schema the agent was shown."""
    properties = call.tool.schema.get("properties", {})
    return {
        name: str(spec["description"])
        for name, spec in properties.items()
        if isinstance(spec, dict) and "description" in spec
    }


error_handler = world.middleware(
    seahaven.toolkit.error_handler(
        logger=logging.getLogger("chat_world"),
        invalid_arguments=_restated,
        internal=Internal,
    )
)
