"""The back office's outermost layer: an agent only ever reads errors the company wrote.

Registered first, so it wraps every call on the surface, the added worlds'
tools included. A declined card or an archived channel arrives here already
phrased by payments or chat, and the gate's ``FORBIDDEN`` by this world; those
go out untouched, and so does every ``WorldBug``, which is the author's to read.
Two kinds of failure are restated: arguments the framework refused become
``INVALID_INPUT`` with every violation listed, and anything unplanned (SQL the
engine refused included) is logged with its traceback and becomes ``INTERNAL``.
``seahaven.toolkit.error_handler`` does the sorting; the words are the company's.
"""

from __future__ import annotations

import logging

import seahaven.toolkit
from company_world.errors import Internal, InvalidInput
from company_world.world import world

__all__ = ["error_handler"]

error_handler = world.middleware(
    seahaven.toolkit.error_handler(
        logger=logging.getLogger("company_world"),
        invalid_arguments=lambda refused, call: InvalidInput(refused.by_field()),
        internal=Internal,
    )
)
