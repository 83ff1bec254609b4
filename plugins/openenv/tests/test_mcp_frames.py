"""MCP's JSON-RPC carried in ``{"type": "mcp"}`` frames on /ws, against the session's instance."""

from __future__ import annotations

import json
from typing import Any

import company_world
from openenv.core.env_server.mcp_types import JsonRpcResponse, WSMCPResponse


def rpc(ws: Any, method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    """Send one JSON-RPC request in an mcp frame; return the response, checked as OpenEnv's."""
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        request["params"] = params
    reply = ws.ask({"type": "mcp", "data": request})
    WSMCPResponse.model_validate(reply)
    JsonRpcResponse.model_validate(reply["data"])
    assert reply["data"]["id"] == id
    response: dict[str, Any] = reply["data"]
    return response


def test_initialize_names_the_server_after_the_world(served, wire) -> None:
    response = rpc(
        wire(served), "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}
    )
    result = response["result"]
    assert result["serverInfo"] == {"name": "beacon", "version": "2.1.0"}
    assert result["capabilities"]["tools"] == {"listChanged": False}


def test_tools_list_needs_no_reset_and_matches_the_instance(served, wire, beacon_world) -> None:
    tools = rpc(wire(served), "tools/list")["result"]["tools"]
    with beacon_world.instance() as inst:
        expected = [
            {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
            for t in inst.tools()
        ]
    assert tools == expected


def test_tools_call_runs_on_the_sessions_instance(served, wire) -> None:
    ws = wire(served)
    ws.reset(episode_id="mcp")
    result = rpc(ws, "tools/call", {"name": "add_note", "arguments": {"text": "by mcp"}})["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["text"] == "by mcp"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    # The same instance the step frames see, and its state document has the row.
    log = ws.state()["state"]["db"]["log"]
    assert [record["after"]["text"] for record in log if record["op"] == "insert"][-1] == "by mcp"
    assert ws.state()["step_count"] == 1


def test_a_tool_error_is_a_result_with_is_error_and_the_triple(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    result = rpc(ws, "tools/call", {"name": "get_note", "arguments": {"note_id": "gone"}})["result"]
    assert result["isError"] is True
    triple = {
        "code": "NOT_FOUND",
        "message": "no note gone",
        "details": {"kind": "note", "id": "gone"},
    }
    assert result["structuredContent"] == triple
    assert json.loads(result["content"][0]["text"]) == triple
    bad = rpc(ws, "tools/call", {"name": "add_note", "arguments": {}})["result"]
    assert bad["isError"] is True and bad["structuredContent"]["code"] == "invalid_arguments"
    unknown = rpc(ws, "tools/call", {"name": "nope"})["result"]
    assert unknown["structuredContent"]["code"] == "unknown_tool"


def test_a_non_object_result_is_text_only(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    result = rpc(ws, "tools/call", {"name": "wait", "arguments": {"seconds": 0}})["result"]
    assert result == {"content": [{"type": "text", "text": '"waited"'}], "isError": False}


def test_tools_call_before_a_reset_is_a_json_rpc_error(served, wire) -> None:
    error = rpc(wire(served), "tools/call", {"name": "add_note", "arguments": {"text": "x"}})[
        "error"
    ]
    assert error["code"] == -32000 and "send a reset" in error["message"]


def test_a_world_bug_is_an_error_with_only_an_id(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    error = rpc(ws, "tools/call", {"name": "broken"})["error"]
    assert error["message"].startswith("internal error (err-") and "secret" not in json.dumps(error)
    nan = rpc(ws, "tools/call", {"name": "not_a_number"})["error"]
    assert nan["code"] == -32603 and nan["message"].startswith("internal error (err-")


def test_protocol_errors(served, wire) -> None:
    ws = wire(served)
    assert rpc(ws, "resources/list")["error"]["code"] == -32601
    assert rpc(ws, "tools/call", {"arguments": {}})["error"]["code"] == -32602
    not_rpc = ws.ask({"type": "mcp", "data": {"method": "tools/list", "id": 4}})
    assert not_rpc["data"]["error"]["code"] == -32600
    params = ws.ask(
        {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 3}}
    )
    assert params["data"]["error"]["code"] == -32602
    assert rpc(ws, "ping", id="p")["result"] == {}


def test_a_notification_gets_no_answer(served, wire) -> None:
    ws = wire(served)
    ws.send({"type": "mcp", "data": {"jsonrpc": "2.0", "method": "notifications/initialized"}})
    # The next frame's answer is the next thing on the socket.
    assert ws.ask({"type": "state", "id": "next"})["id"] == "next"


def test_a_composite_world_over_mcp(serving, wire) -> None:
    ws = wire(serving(company_world.world))
    ws.reset(fixture="acme", startup={"principal": "tom@acme-robotics.test"})
    tools = rpc(ws, "tools/list")["result"]["tools"]
    assert len(tools) == 73
    names = {tool["name"] for tool in tools}
    assert "payments_get_balance" in names or any(name.endswith("get_balance") for name in names)
