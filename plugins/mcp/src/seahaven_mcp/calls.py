"""One tool call as a ``CallToolResult``: a value, a refusal, or a bug kept from the client.

Both servers (a world's instance, ``seahaven_mcp.server``, and an episode bound
to a scenario, ``seahaven_mcp.bound``) answer every call through ``run_call``:
a result is the value's JSON text (and structured content for an object); a
``ToolError`` is a result with ``isError`` carrying the error's ``{code,
message, details}``; anything else is the world author's bug, logged on stderr
with an id and sent to the client as ``internal``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from mcp import types

from seahaven.calls.tool_results import error_result, value_result
from seahaven.errors import ToolError, WorldBug

__all__ = ["call_result", "error_call_result", "run_call"]

_log = logging.getLogger("seahaven.mcp")


def call_result(value: Any) -> types.CallToolResult:
    """A tool's result as MCP carries it: JSON text, and structured content for an object."""
    return types.CallToolResult.model_validate(value_result(value))


def error_call_result(triple: Mapping[str, Any]) -> types.CallToolResult:
    """A refusal as MCP carries it: ``isError`` and the ``{code, message, details}`` triple."""
    return types.CallToolResult.model_validate(error_result(triple))


def run_call(
    call: Callable[..., Any], name: str, arguments: Mapping[str, Any]
) -> types.CallToolResult:
    """``call(name, **arguments)`` answered as MCP carries it; every outcome is a result."""
    try:
        return call_result(call(name, **arguments))
    except ToolError as error:
        return error_call_result(error.to_dict())
    except Exception as error:
        # A WorldBug or a bug in world code: the author's, never the agent's to read.
        correlation = secrets.token_hex(4)
        what = "world bug" if isinstance(error, WorldBug) else "internal error"
        _log.error(
            "%s (%s) in tool %s: %s: %s",
            what,
            correlation,
            name,
            type(error).__name__,
            error,
            exc_info=error,
        )
        return error_call_result(
            {"code": "internal", "message": "internal error", "details": {"id": correlation}}
        )
