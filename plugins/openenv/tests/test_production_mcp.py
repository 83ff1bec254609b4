"""OpenEnv 0.10's production MCP, driven by the installed ``openenv`` package's ``MCPToolClient``.

That client posts ``openenv/session/create`` to ``POST /mcp``, attaches its
WebSocket with ``/ws?session_id=``, and sends ``tools/list`` and ``tools/call``
naming the session over HTTP: every request below lands on one session and one
instance, whichever transport carried it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import payments_world
import pytest
from conftest import post_mcp, wait_until
from openenv.core.mcp_client import MCPToolClient

from seahaven.openenv import serve


def post(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return post_mcp(server.host, server.port, request)


def rpc(server: Any, method: str, request_id: int = 1, **params: Any) -> dict[str, Any]:
    return post(server, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_mcp_tool_client_lists_and_calls_tools_on_one_session(serving) -> None:
    server = serving(payments_world.world)

    async def drive() -> dict[str, Any]:
        async with MCPToolClient(base_url=server.base_url) as env:
            # The socket and the HTTP requests share one session.
            assert server.hub.active_sessions == 1
            await env.reset(fixture="small_shop", episode_id="ep-mcp")
            tools = await env.list_tools()
            names = [tool.name for tool in tools]
            assert "create_customer" in names and "get_customer" in names
            assert all(tool.input_schema for tool in tools)
            created = await env.call_tool(
                "create_customer", email="ada@example.com", description="Ada"
            )
            assert created["email"] == "ada@example.com"
            fetched = await env.call_tool("get_customer", customer_id=created["id"])
            assert fetched["description"] == "Ada"
            # A tool's refusal is data, MCP's isError result with the world's triple.
            refused = await env.call_tool("get_customer", customer_id="cus_nope")
            assert refused["isError"] is True
            assert refused["structuredContent"]["code"].lower() == "not_found"
            # The state over the socket saw the calls made over HTTP.
            state = await env.state()
            assert state.episode_id == "ep-mcp"
            assert state.step_count == 4  # tools/list and three calls
            return {"session_id": env._production_session_id}

    seen = asyncio.run(drive())
    # Closing the client closed the session and its instance.
    wait_until(lambda: server.hub.active_sessions == 0)
    gone = rpc(server, "tools/list", session_id=seen["session_id"])
    assert gone["error"]["code"] == -32602 and "Unknown session_id" in gone["error"]["message"]


def test_the_sync_client_works_the_same(serving) -> None:
    server = serving(payments_world.world)
    with MCPToolClient(base_url=server.base_url).sync() as env:
        env.reset(fixture="small_shop")
        assert "create_customer" in [tool.name for tool in env.list_tools()]
        created = env.call_tool("create_customer", email="b@example.com", description="Bo")
        assert created["description"] == "Bo"
    wait_until(lambda: server.hub.active_sessions == 0)


def test_tools_can_be_called_before_any_reset(serving) -> None:
    """A created session has an episode at once, made from the world's defaults."""
    server = serving(payments_world.world)
    created = rpc(server, "openenv/session/create")
    session_id = created["result"]["session_id"]
    listed = rpc(server, "tools/list", 2, session_id=session_id)
    assert any(tool["name"] == "create_customer" for tool in listed["result"]["tools"])
    called = rpc(
        server,
        "tools/call",
        3,
        session_id=session_id,
        name="create_customer",
        arguments={"email": "c@example.com", "name": "Cy"},
    )
    assert called["id"] == 3 and called["result"]["data"]["name"] == "Cy"
    closed = rpc(server, "openenv/session/close", 4, session_id=session_id)
    assert closed["result"] == {"session_id": session_id, "closed": True}
    assert server.hub.active_sessions == 0


def test_create_takes_reset_keys_and_refuses_bad_ones(serving) -> None:
    server = serving(payments_world.world)
    bad = rpc(server, "openenv/session/create", fixture=7)
    assert bad["error"]["code"] == -32602 and "reset was refused" in bad["error"]["message"]
    assert server.hub.active_sessions == 0
    good = rpc(server, "openenv/session/create", fixture="small_shop", episode_id="e")
    assert "session_id" in good["result"]
    assert server.hub.active_sessions == 1


def test_a_session_takes_one_socket_and_outlives_it(serving, wire) -> None:
    server = serving(payments_world.world)
    session_id = rpc(server, "openenv/session/create", episode_id="kept")["result"]["session_id"]
    first = wire(server, f"/ws?session_id={session_id}")
    assert first.state()["episode_id"] == "kept"
    second = wire(server, f"/ws?session_id={session_id}")
    refused = second.receive()
    assert refused["type"] == "error" and "already has a WebSocket" in refused["data"]["message"]
    first.connection.close()
    # Detached, the session stands; a close now ends it at once.
    wait_until(lambda: rpc(server, "ping", session_id=session_id).get("result") == {})
    third = wire(server, f"/ws?session_id={session_id}")
    assert third.state()["episode_id"] == "kept"
    # A close while a socket is attached waits for it to go.
    closing = rpc(server, "openenv/session/close", session_id=session_id)
    assert closing["result"] == {"session_id": session_id, "closed": False, "closing": True}
    third.connection.close()
    wait_until(lambda: server.hub.active_sessions == 0)


def test_capacity_counts_sessions_made_over_http(serving) -> None:
    server = serving(payments_world.world, max_concurrent_envs=1)
    assert "result" in rpc(server, "openenv/session/create")
    full = rpc(server, "openenv/session/create")
    assert full["error"]["code"] == -32000 and full["error"]["data"]["code"] == "CAPACITY_REACHED"


def test_an_unknown_session_id_is_refused_on_both_routes(serving, wire) -> None:
    server = serving(payments_world.world)
    answer = rpc(server, "tools/call", session_id="nope", name="get_balance")
    assert answer["error"]["code"] == -32602
    assert "Unknown session_id" in answer["error"]["message"]
    assert "restarted" in answer["error"]["message"]
    ws = wire(server, "/ws?session_id=nope")
    refused = ws.receive()
    assert refused["type"] == "error" and refused["data"]["code"] == "SESSION_ERROR"
    assert "Unknown session_id" in refused["data"]["message"]


@pytest.mark.parametrize(
    "request_body",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
    ],
)
def test_requests_naming_no_session_keep_the_refusal(served, request_body) -> None:
    answer = post(served, request_body)
    assert (
        answer["error"]["code"] == -32601
        and "openenv/session/create" in (answer["error"]["message"])
    )


def test_a_reaped_http_session_says_so(serving) -> None:
    server = serving(payments_world.world, session_timeout=1)
    session_id = rpc(server, "openenv/session/create", episode_id="slow")["result"]["session_id"]
    wait_until(lambda: server.hub.active_sessions == 0)
    answer = rpc(server, "tools/list", session_id=session_id)
    assert answer["error"]["code"] == -32602
    assert "'slow' was reaped after 1 s idle" in answer["error"]["message"]


def test_mcp_tool_client_raises_after_a_restart() -> None:
    """The client reattaches with its session id, and the new server says it has none."""
    world = payments_world.world
    with serve.running(world) as first:
        port = first.port
        env = MCPToolClient(base_url=first.base_url).sync()
        env.connect()
        env.reset(fixture="small_shop")
        env.call_tool("create_customer", email="d@example.com")
    try:
        with serve.running(world, port=port):
            with pytest.raises(RuntimeError, match="Unknown session_id"):
                env.state()
            with pytest.raises(RuntimeError, match="Unknown session_id"):
                env.call_tool("get_balance")
    finally:
        env.close()
