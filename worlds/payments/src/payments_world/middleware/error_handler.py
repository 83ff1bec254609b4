"""Payments' outermost layer: the agent only ever reads an error this processor wrote.

The world registers this middleware before any other, so every layer and every
tool runs inside it. It is ``seahaven.toolkit.error_handler``, which sorts
whatever a call raises one of three ways:

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

import seahaven.toolkit
from payments_world.errors import Internal, InvalidInput
from payments_world.world import world

__all__ = ["error_handler"]

error_handler = world.middleware(
    seahaven.toolkit.error_handler(
        logger=logging.getLogger("payments_world"),
        invalid_arguments=lambda refused, call: InvalidInput(refused.by_field()),
        internal=Internal,
    )
)
