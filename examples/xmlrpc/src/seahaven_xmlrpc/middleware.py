"""``render_faults``: the layer above the transaction that turns a fault into a document.

Register it after the world's own error handler (so inside it: middleware runs outermost
first), for the endpoint tools by name. A ``Fault`` the endpoint raised, after its transaction
rolled back, is answered as a ``<methodResponse><fault>`` document, and its call-log row is
written here, where it commits although the call's writes did not. An endpoint called with
arguments the framework refuses (no ``document``, or not a string) is answered the same way,
as an invalid request. Everything else passes on to the world's error handler, untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import seahaven
from seahaven_xmlrpc.call_log import write_entry
from seahaven_xmlrpc.faults import INVALID_REQUEST, Fault
from seahaven_xmlrpc.wire import fault_response

__all__ = ["render_faults"]


def render_faults(*, tools: Iterable[str]) -> Callable[..., Any]:
    """A middleware rendering the faults of the endpoint tools named in ``tools``."""
    endpoints = frozenset(tools)
    if not endpoints or any(not isinstance(name, str) for name in endpoints):
        raise seahaven.WorldBug(
            "render_faults(tools=...) names the endpoint tools, such as tools=['rpc']"
        )

    def middleware(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        # The tool's own name: a host adding this world under a prefix does not change it.
        if call.tool.name not in endpoints:
            return next_(ctx, call)
        try:
            return next_(ctx, call)
        except Fault as fault:
            if fault.call_log is not None:
                with ctx.db.transaction():
                    write_entry(
                        ctx,
                        fault.call_log,
                        fault_code=fault.fault_code,
                        fault_string=fault.fault_string,
                    )
            return fault_response(fault)
        except seahaven.ArgumentError as refused:
            problems = "; ".join(
                f"{item['field']}: {item['message']}" for item in refused.by_field()
            )
            return fault_response(
                Fault(INVALID_REQUEST, f"{call.name} needs a document: {problems}")
            )

    middleware.__name__ = middleware.__qualname__ = "render_faults"
    return middleware
