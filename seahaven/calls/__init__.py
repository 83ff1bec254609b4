"""The call path: how an instance's stores are opened and a call runs on them.

``dispatch`` (``Calls``, routes and the tool's transaction), ``activation``
(the sessions and records of one stretch of work), ``runtime`` (one store's
file, connection and id stream; the parts an instance is made of),
``setup_sql``, ``control_tool``, ``concurrency`` (the process-wide call slots)
and ``tool_results`` (a call's result as MCP carries it). It sits on the
declaration and never names the instance, even for types: what it needs is
handed to it. (``concurrency`` here is the module, whose ``concurrency()``
is the size of the gate in force.)

This package's face re-exports what the other layers and plugins use; the
framework's own modules import each module by its path.
"""

from seahaven.calls.concurrency import (
    call_slots,
    default_concurrency,
    interrupt_all,
    set_concurrency,
)
from seahaven.calls.tool_results import error_result, value_result

__all__ = [
    "call_slots",
    "default_concurrency",
    "error_result",
    "interrupt_all",
    "set_concurrency",
    "value_result",
]
