"""The telecom world's outermost layer: the agent only ever reads a refusal this world wrote.

It is ``seahaven.toolkit.error_handler``: the framework's refusal of arguments
becomes ``INVALID_INPUT`` listing each violation, the world's own refusals and
every ``WorldBug`` pass as raised, and anything else is a defect, logged with
its traceback and answered as ``INTERNAL``. It wraps the phone's tools too,
since their calls descend through this world.
"""

from __future__ import annotations

import logging

import seahaven.toolkit
from telecom_world.errors import Internal, InvalidInput
from telecom_world.world import world

__all__ = ["error_handler"]

error_handler = world.middleware(
    seahaven.toolkit.error_handler(
        logger=logging.getLogger("telecom_world"),
        invalid_arguments=lambda refused, call: InvalidInput(refused.by_field()),
        internal=Internal,
    )
)
