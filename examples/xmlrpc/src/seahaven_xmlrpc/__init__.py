"""seahaven-xmlrpc: an XML-RPC surface for a Seahaven world, built on the public API alone.

A world whose product speaks XML-RPC registers one tool carrying ``<methodCall>`` documents,
with a namespace of methods inside it::

    world.middleware(error_handler)  # registered before the renderer: it wraps it
    world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
    world.tool(seahaven_xmlrpc.xmlrpc_call(methods=rpc_methods, log_calls=True))
    world.instance_startup(seahaven_xmlrpc.remember_client)

and, for the call log, adds ``seahaven_xmlrpc.CALL_LOG_DDL`` to its schema (which changes the
schema hash: regenerate the fixtures). Nothing here registers itself.
"""

from seahaven_xmlrpc.call_log import CALL_LOG_DDL, CALL_LOG_TABLE, call_log_ddl, remember_client
from seahaven_xmlrpc.faults import (
    APPLICATION_ERROR,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Fault,
)
from seahaven_xmlrpc.middleware import render_faults
from seahaven_xmlrpc.tool import xmlrpc_call

__all__ = [
    "APPLICATION_ERROR",
    "CALL_LOG_DDL",
    "CALL_LOG_TABLE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Fault",
    "call_log_ddl",
    "remember_client",
    "render_faults",
    "xmlrpc_call",
]
