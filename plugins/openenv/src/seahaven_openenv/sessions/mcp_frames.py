"""MCP on the session socket: ``{"type": "mcp", "data": <JSON-RPC>}`` frames on ``/ws``.

A harness that speaks MCP can drive a served world without a second transport:
each ``mcp`` frame carries one JSON-RPC 2.0 request and is answered by one
``mcp`` frame carrying the response, against the session's own instance. The
methods are the ones a tool-using client needs: ``initialize``, ``ping``,
``tools/list`` (no reset needed, like ``list_tools``) and ``tools/call`` (after
a reset). A tool's result is returned as MCP content: the result as JSON text,
and as ``structuredContent`` when it is an object; a tool error is a result
with ``isError`` and the world's ``{code, message, details}`` triple. In a
session bound to a scenario, ``tools/list`` includes ``submit``, ``tools/call``
goes through the scenario's trial (its budget, its end), each result's
``_meta`` carries the reward and ``done``, and ``submit``'s result carries the
grade. Such a session is also described as ``seahaven mcp --scenario``
describes one: ``initialize`` answers the scenario's instructions (after the
pack's policy document, when it has one), the prompt ``scenario`` carries them
(``prompts/list``, ``prompts/get``), and the resource ``seahaven://trial``
holds the trial's report, the grade among it (``resources/list``,
``resources/read``).
Notifications (requests without an ``id``) are not answered, as JSON-RPC says.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import replace
from typing import Any

from seahaven.scenarios import SUBMIT_TOOL
from seahaven.calls.tool_results import error_result, value_result
from seahaven_openenv.sessions.outcomes import BoundView, Outcome, internal_error_id
from seahaven_openenv.sessions.session import Session
from seahaven_openenv.wire.echo import clip
from seahaven_openenv.wire.frames import FrameError

__all__ = [
    "MAX_ID_CHARACTERS",
    "PARSE_ERROR",
    "PROTOCOL_VERSION",
    "answer",
    "rpc_error",
    "tool_result",
    "usable_id",
]

# The MCP revision this dialect follows; an initialize naming another is answered with this one.
PROTOCOL_VERSION = "2025-06-18"

_log = logging.getLogger("seahaven.openenv")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000

# The longest string id a response echoes.
MAX_ID_CHARACTERS = 256


def answer(session: Session, message: Any) -> dict[str, Any] | None:
    """The JSON-RPC response to ``message``, or ``None`` for a notification."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return rpc_error(
            None, INVALID_REQUEST, "an mcp frame carries a JSON-RPC 2.0 request object"
        )
    request_id = message.get("id")
    if not usable_id(request_id):
        # An id is echoed whole, so one that is not a short string or a number is not echoed.
        return rpc_error(
            None,
            INVALID_REQUEST,
            f"a request's id is a string of at most {MAX_ID_CHARACTERS} characters or a number",
        )
    method = message.get("method")
    if not isinstance(method, str):
        return rpc_error(request_id, INVALID_REQUEST, "the request has no method")
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return rpc_error(request_id, INVALID_PARAMS, "params must be an object")
    if "id" not in message:
        # A notification, such as notifications/initialized: nothing is sent back.
        return None
    try:
        result = _dispatch(session, method, params)
    except _RpcError as error:
        return rpc_error(request_id, error.code, error.message)
    except FrameError as error:
        return rpc_error(
            request_id, SERVER_ERROR, error.message, {"code": error.code, **error.extra}
        )
    except (TypeError, ValueError) as error:
        # A result JSON cannot carry (NaN, say) is the world's bug, logged under an id.
        correlation = internal_error_id()
        _log.error("internal error (%s): a tools/call result is not JSON: %s", correlation, error)
        return rpc_error(request_id, INTERNAL_ERROR, f"internal error ({correlation})")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def usable_id(request_id: Any) -> bool:
    """Whether a JSON-RPC id may be echoed: absent or null, a number, or a short string."""
    if request_id is None or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return True
    if isinstance(request_id, float):
        # A number JSON can carry back; the readers refuse NaN and the infinities already.
        return math.isfinite(request_id)
    return isinstance(request_id, str) and len(request_id) <= MAX_ID_CHARACTERS


def tool_result(outcome: Outcome) -> dict[str, Any]:
    """An MCP ``CallToolResult`` for one call's outcome.

    In a session bound to a scenario, ``_meta`` says where the episode stands:
    ``reward`` and ``done``, the ``calls_left``, and on the call that ended it
    ``ended_by`` and the ``grade``.
    """
    reply = (
        error_result(outcome.failure.triple)
        if outcome.failure is not None
        else value_result(outcome.result)
    )
    if outcome.progress is not None:
        progress = outcome.progress
        reply["_meta"] = {
            "reward": progress["reward"],
            "done": progress["done"],
            **progress["metadata"],
        }
    return reply


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _dispatch(session: Session, method: str, params: dict[str, Any]) -> dict[str, Any]:
    world = session.service.world
    bound = session.bound_view()
    if method == "initialize":
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        told = world.mcp_server_instructions
        if bound is not None:
            capabilities.update(prompts={"listChanged": False}, resources={})
            told = bound.instructions
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "serverInfo": {"name": world.mcp_server_name, "version": world.version},
            **({"instructions": told} if told else {}),
        }
    if bound is not None and method in _BOUND_METHODS:
        return _bound_answer(session, bound, method, params)
    if method == "ping":
        return {}
    if method == "tools/list":
        tools = session.list_tools()
        return {
            "tools": [
                {
                    "name": tool["name"],
                    "description": tool["description"],
                    "inputSchema": tool["input_schema"],
                }
                for tool in tools
            ]
        }
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(name, str):
            raise _RpcError(INVALID_PARAMS, "tools/call needs params.name, a string")
        if not isinstance(arguments, dict):
            raise _RpcError(INVALID_PARAMS, "tools/call's params.arguments must be an object")
        outcome = session.invoke(name, arguments)
        grade = (outcome.progress or {}).get("metadata", {}).get("grade")
        accepted = outcome.failure is None and isinstance(outcome.result, dict)
        if name == SUBMIT_TOOL and accepted and grade is not None:
            # submit's result is the grade, as seahaven mcp --scenario answers it.
            outcome = replace(outcome, result={**outcome.result, "grade": grade})
        return tool_result(outcome)
    raise _RpcError(
        METHOD_NOT_FOUND,
        f"Method not found: {clip(method)}; this dialect answers initialize, ping, tools/list and "
        "tools/call (and, in a session bound to a scenario, prompts/list, prompts/get, "
        "resources/list and resources/read)",
    )


#: The prompt and the resource of a session bound to a scenario, as ``seahaven mcp`` names them.
PROMPT_NAME = "scenario"
REPORT_URI = "seahaven://trial"
_BOUND_METHODS = frozenset({"prompts/list", "prompts/get", "resources/list", "resources/read"})


def _bound_answer(
    session: Session, bound: BoundView, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The prompt and the report of a session bound to a scenario."""
    if method == "prompts/list":
        return {
            "prompts": [
                {
                    "name": PROMPT_NAME,
                    "title": f"Scenario {bound.scenario}",
                    "description": f"The task of scenario {bound.scenario}, as the agent is "
                    "given it.",
                }
            ]
        }
    if method == "prompts/get":
        if params.get("name") != PROMPT_NAME:
            raise _RpcError(
                INVALID_PARAMS,
                f"there is no prompt {clip(str(params.get('name')))!r}; this session "
                f"has {PROMPT_NAME!r}",
            )
        return {
            "description": f"The task of scenario {bound.scenario}.",
            "messages": [{"role": "user", "content": {"type": "text", "text": bound.instructions}}],
        }
    if method == "resources/list":
        return {
            "resources": [
                {
                    "uri": REPORT_URI,
                    "name": "trial",
                    "title": f"The episode of {bound.scenario}",
                    "description": "The scenario, seed and budget, the calls made and left, how "
                    "the episode ended, the answer, and the grade once it has ended.",
                    "mimeType": "application/json",
                }
            ]
        }
    if params.get("uri") != REPORT_URI:
        raise _RpcError(
            INVALID_PARAMS,
            f"there is no resource {clip(str(params.get('uri')))!r}; this session has {REPORT_URI}",
        )
    report = session.scenario_report()
    text = json.dumps(report, ensure_ascii=False, allow_nan=False)
    return {"contents": [{"uri": REPORT_URI, "mimeType": "application/json", "text": text}]}


def rpc_error(
    request_id: Any, code: int, message: str, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response, with ``data`` when there is some."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
