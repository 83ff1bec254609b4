"""``xmlrpc_call``: the one tool an XML-RPC endpoint is, with its methods inside it.

The world passes a mapping of method names (``issue.get``) to ordinary functions that take
``ctx`` first and the document's parameters after, in order. The factory builds one
``seahaven.Tool`` that reads a ``<methodCall>``, validates the parameters against the
method's own signature (strictly, as Seahaven validates a tool's arguments), runs the method
inside the call's transaction, and answers a ``<methodResponse>``.

Every failure is raised as a ``Fault``, never returned, so that whatever the method wrote
before it failed rolls back with the call. ``render_faults`` turns the fault into a document
above the transaction. Two introspection methods are always served: ``system.listMethods``
and ``system.methodHelp``.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import Field

import seahaven
from seahaven_xmlrpc.call_log import CALL_LOG_TABLE, CLIENT_KEY, write_entry
from seahaven_xmlrpc.faults import (
    APPLICATION_ERROR,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CallLogEntry,
    Fault,
)
from seahaven_xmlrpc.wire import MAX_DOCUMENT_CHARS, method_response, parse_call

__all__ = ["xmlrpc_call"]

_log = logging.getLogger("seahaven_xmlrpc")
_SYSTEM = ("system.listMethods", "system.methodHelp")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_-]")

Document = Annotated[
    str,
    Field(
        max_length=MAX_DOCUMENT_CHARS,
        description="One XML-RPC <methodCall> document: <methodName> and its <params>, in "
        "order. Answers a <methodResponse>, with a <fault> when the call fails.",
    ),
]


class _Method:
    """One method: the function, the names its parameters take in order, and its validator."""

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise seahaven.WorldBug(f"xmlrpc method {name!r} is not callable")
        self.name = name
        self.fn = fn
        # The same strict argument model a tool gets, built once from the signature; a
        # signature Seahaven would refuse for a tool is refused here, at import.
        # A tool name cannot hold the dots a method namespace uses; this one is never listed.
        self.validator = seahaven.Tool.from_function(fn, name=_NOT_A_NAME.sub("_", name)[:128])
        parameters = list(inspect.signature(fn).parameters.values())[1:]
        self.parameters = [parameter.name for parameter in parameters]
        self.help = inspect.getdoc(fn) or ""

    def bind(self, params: tuple[Any, ...]) -> dict[str, Any]:
        """The positional ``params`` as the function's keyword arguments, validated."""
        if len(params) > len(self.parameters):
            raise Fault(
                INVALID_PARAMS,
                f"{self.name} takes at most {len(self.parameters)} parameters "
                f"({', '.join(self.parameters) or 'none'}), not {len(params)}",
            )
        try:
            return self.validator.validate(dict(zip(self.parameters, params, strict=False)))
        except seahaven.ArgumentError as refused:
            problems = "; ".join(
                f"{item['field']}: {item['message']}" for item in refused.by_field()
            )
            raise Fault(
                INVALID_PARAMS,
                f"{self.name}({', '.join(self.parameters)}) was given parameters it cannot "
                f"take: {problems}",
            ) from None


def _describe(methods: Mapping[str, _Method]) -> str:
    """The endpoint's description: how to call it, and every method with its first line."""
    summaries = []
    for method in methods.values():
        first = method.help.splitlines()[0] if method.help else ""
        signature = f"{method.name}({', '.join(method.parameters)})"
        summaries.append(f"{signature}: {first}" if first else signature)
    summaries.append("system.listMethods(), system.methodHelp(name)")
    return (
        "An XML-RPC endpoint: send one <methodCall> document as `document` and read the "
        "<methodResponse>; parameters go in order. Methods: " + "; ".join(summaries) + "."
    )


def xmlrpc_call(
    *,
    methods: Mapping[str, Callable[..., Any]],
    name: str = "rpc",
    description: str | None = None,
    log_calls: bool = False,
    call_log_table: str = CALL_LOG_TABLE,
    fault_codes: Mapping[str, int] | None = None,
) -> seahaven.Tool:
    """Build the endpoint tool serving ``methods``; register it with ``world.tool(...)``.

    ``log_calls`` writes a row per call to ``call_log_table``, which the world's schema must
    declare (``call_log_ddl``). ``fault_codes`` maps the world's error codes (``NOT_FOUND``)
    to the fault codes its product answers with; an error it does not name is an
    application error (-32500). The fault string is always ``"<code>: <message>"``.
    """
    if not methods:
        raise seahaven.WorldBug("xmlrpc_call needs at least one method")
    for method_name in methods:
        if not isinstance(method_name, str) or not method_name or method_name in _SYSTEM:
            raise seahaven.WorldBug(
                f"xmlrpc method name {method_name!r} must be a non-empty string other than "
                f"{' and '.join(_SYSTEM)}, which the endpoint serves itself"
            )
    served = {method_name: _Method(method_name, fn) for method_name, fn in methods.items()}
    codes = dict(fault_codes or {})

    def endpoint(ctx: seahaven.Ctx, document: Document) -> str:
        client = ctx.state.get(CLIENT_KEY)
        entry = CallLogEntry(call_log_table, None, client) if log_calls else None
        try:
            method_name, params = parse_call(document)
            if entry is not None:
                entry = CallLogEntry(call_log_table, method_name, client)
            result = _dispatch(ctx, served, codes, method_name, params)
            response = method_response(result)
        except Fault as fault:
            raise Fault(fault.fault_code, fault.fault_string, call_log=entry) from None
        if entry is not None:
            write_entry(ctx, entry)
        return response

    return seahaven.Tool.from_function(
        endpoint, name=name, description=description or _describe(served)
    )


def _dispatch(
    ctx: seahaven.Ctx,
    served: Mapping[str, _Method],
    codes: Mapping[str, int],
    method_name: str,
    params: tuple[Any, ...],
) -> Any:
    """Run one method (or an introspection call) and return what it returned."""
    if method_name == "system.listMethods":
        return sorted([*served, *_SYSTEM])
    if method_name == "system.methodHelp":
        if len(params) != 1 or not isinstance(params[0], str):
            raise Fault(INVALID_PARAMS, "system.methodHelp takes one parameter: a method's name")
        wanted = served.get(params[0])
        if wanted is None:
            raise Fault(METHOD_NOT_FOUND, f"no method {params[0]!r}; system.listMethods lists them")
        return wanted.help
    method = served.get(method_name)
    if method is None:
        raise Fault(
            METHOD_NOT_FOUND,
            f"no method {method_name!r}; this endpoint serves {', '.join(sorted(served))}",
        )
    arguments = method.bind(params)
    try:
        return method.fn(ctx, **arguments)
    except (Fault, seahaven.WorldBug):
        raise
    except seahaven.DbError as error:
        # SQL the method wrote was refused: the engine's words go to the log, not the caller.
        _log.error(
            "%s: database error in %s: %s",
            ctx.instance.id,
            method_name,
            error.sqlite_message,
            exc_info=error,
        )
        raise Fault(INTERNAL_ERROR, f"{method_name} failed inside the server") from None
    except seahaven.ToolError as error:
        raise Fault(
            codes.get(error.code, APPLICATION_ERROR), f"{error.code}: {error.message}"
        ) from None
    except Exception as error:
        _log.error(
            "%s: %s raised %s", ctx.instance.id, method_name, type(error).__name__, exc_info=error
        )
        raise Fault(INTERNAL_ERROR, f"{method_name} failed inside the server") from None
