"""The clients users have: SeahavenClient (sync and async), OpenEnv's stock clients, SeahavenEnv."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import payments_world
import pytest
import uvicorn
from openenv import AutoEnv, GenericEnvClient
from openenv.core.env_server.mcp_types import Tool, ToolError

import seahaven
from seahaven.openenv import (
    CallToolAction,
    FileRef,
    FixtureRef,
    ListToolsAction,
    ListToolsObservation,
    NodeRef,
    SeahavenClient,
    SeahavenEnv,
    SeahavenObservation,
    SeahavenState,
    WorldRef,
)


@pytest.fixture
def shop(serving):
    """A server of the payments world."""
    return serving(payments_world.world)


def in_process_document(**episode: Any) -> dict[str, Any]:
    """The document the same three calls leave in process."""
    with payments_world.world.instance("small_shop", **episode) as inst:
        customer = inst.call("create_customer", email="grace@example.com", name="Grace")
        inst.call("update_customer", customer_id=customer.id, name="Grace H.")
        with pytest.raises(seahaven.ToolError):
            inst.call("get_customer", customer_id="cus_missing")
        document: dict[str, Any] = json.loads(json.dumps(inst.state()))
        return document


def test_the_sync_client(shop) -> None:
    with SeahavenClient(base_url=shop.base_url) as env:
        result = env.reset(fixture="small_shop", seed=7, clock_mode="tick", episode_id="sync")
        assert result.observation.metadata["fixture"] == "small_shop"
        assert result.metadata == result.observation.metadata
        tools = env.list_tools()
        with payments_world.world.instance() as inst:
            assert tools == inst.tools()
        created = env.call("create_customer", email="grace@example.com", name="Grace")
        assert isinstance(created, SeahavenObservation)
        assert created.error is None and created.seahaven_error is None
        assert created.result["email"] == "grace@example.com"
        env.call("update_customer", customer_id=created.result["id"], name="Grace H.")
        missing = env.call("get_customer", customer_id="cus_missing")
        assert isinstance(missing.error, ToolError)
        assert missing.error.error_type.value == "execution_error"
        assert missing.seahaven_error is not None and missing.seahaven_error["code"] == "NOT_FOUND"
        assert missing.result is None
        state = env.state()
    assert isinstance(state, SeahavenState)
    assert isinstance(state.world, WorldRef) and state.world.name == "payments"
    assert state.composition is not None and isinstance(state.composition["main"], NodeRef)
    assert isinstance(state.fixture, FixtureRef)
    assert isinstance(state.fixture.nodes["main"], FileRef)
    assert state.step_count == 4 and state.call_count == 3
    local = in_process_document(seed=7, clock_mode="tick")
    local["episode_id"] = "sync"
    assert state.model_dump(exclude={"step_count"}) == local


def test_the_async_client_and_many_at_once(shop) -> None:
    async def rollout(seed: int) -> tuple[int, int]:
        async with SeahavenClient(base_url=shop.base_url) as env:
            await env.reset(fixture="small_shop", seed=seed)
            tools = await env.list_tools()
            observation = await env.call("create_customer", email=f"c{seed}@example.com")
            assert observation.error is None
            state = await env.state()
            return len(tools), state.call_count

    async def many() -> list[tuple[int, int]]:
        return await asyncio.gather(*(rollout(seed) for seed in range(12)))

    assert asyncio.run(many()) == [(26, 1)] * 12


def test_step_with_openenv_actions(shop) -> None:
    with SeahavenClient(base_url=shop.base_url) as env:
        listing = env.step(ListToolsAction())
        assert isinstance(listing.observation, ListToolsObservation)
        assert all(isinstance(tool, Tool) for tool in listing.observation.tools)
        env.reset(fixture="small_shop")
        stepped = env.step(CallToolAction(tool_name="get_balance", arguments={}))
        assert isinstance(stepped.observation, SeahavenObservation)
        assert stepped.done is False and stepped.reward is None


def test_only_protocol_failures_raise(shop) -> None:
    with SeahavenClient(base_url=shop.base_url) as env:
        with pytest.raises(RuntimeError, match="send a reset"):
            env.call("get_balance")
        with pytest.raises(RuntimeError, match="reset does not take 'fixtrue'"):
            env.reset(fixtrue="small_shop")
        env.reset()
        assert env.call("no_such_tool").error.error_type.value == "tool_not_found"


def test_the_ping_timeout_defaults_to_two_minutes() -> None:
    assert SeahavenClient(base_url="http://127.0.0.1:1")._websocket_ping_timeout_s == 120.0
    chosen = SeahavenClient(base_url="http://127.0.0.1:1", websocket_ping_timeout_s=15)
    assert chosen._websocket_ping_timeout_s == 15
    assert GenericEnvClient(base_url="http://127.0.0.1:1")._websocket_ping_timeout_s == 20.0


def test_the_stock_generic_client_sync_and_async(shop) -> None:
    with GenericEnvClient(base_url=shop.base_url) as env:
        result = env.reset(fixture="small_shop", seed=2)
        assert result.metadata["fixture"] == "small_shop"
        tools = env.step({"type": "list_tools"}).observation["tools"]
        assert len(tools) == 26
        step = env.step(
            {
                "type": "call_tool",
                "tool_name": "get_customer",
                "arguments": {"customer_id": "cus_x"},
            }
        )
        assert step.observation["error"]["error_type"] == "execution_error"
        assert step.metadata["seahaven_error"]["code"] == "NOT_FOUND"
        assert env.state()["step_count"] == 2

    async def run() -> dict[str, Any]:
        async with GenericEnvClient(base_url=shop.base_url) as env:
            await env.reset(fixture="small_shop")
            state: dict[str, Any] = await env.state()
            return state

    assert asyncio.run(run())["fixture"]["id"] == "small_shop"


def test_auto_env_from_hub_with_a_base_url(shop) -> None:
    with AutoEnv.from_hub("owner/space", base_url=shop.base_url, skip_install=True) as env:
        env.reset(fixture="small_shop", seed=7)
        tools = env.step({"type": "list_tools"}).observation["tools"]
        assert tools
        observation = env.step(
            {"type": "call_tool", "tool_name": "get_balance", "arguments": {}}
        ).observation
        assert observation["result"]["available"] and env.state()["now"]


@contextmanager
def asgi_server(app: Any) -> Iterator[str]:
    """Any ASGI app under uvicorn on a free loopback port, for the length of the block."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_seahaven_env_runs_inside_openenvs_own_server() -> None:
    from openenv.core.env_server.http_server import create_fastapi_app

    app = create_fastapi_app(
        lambda: SeahavenEnv(payments_world.world),
        CallToolAction,
        SeahavenObservation,
        max_concurrent_envs=4,
        state_cls=SeahavenState,
    )
    with asgi_server(app) as url, GenericEnvClient(base_url=url) as env:
        result = env.reset(fixture="small_shop", seed=4)
        assert result.observation["metadata"]["fixture"] == "small_shop"
        step = env.step({"type": "call_tool", "tool_name": "get_balance", "arguments": {}})
        assert step.observation["result"]["available"]
        state = env.state()
        assert state["fixture"]["id"] == "small_shop" and state["call_count"] == 1


def test_seahaven_env_directly() -> None:
    env = SeahavenEnv(payments_world.world)
    try:
        observation = env.reset(seed=1, episode_id="direct", fixture="small_shop")
        assert observation.metadata["episode_id"] == "direct"
        listing = env.step(ListToolsAction())
        assert isinstance(listing, ListToolsObservation)
        called = env.step(
            CallToolAction(tool_name="get_customer", arguments={"customer_id": "cus_x"})
        )
        assert isinstance(called, SeahavenObservation)
        assert called.seahaven_error is not None
        assert env.state.episode_id == "direct" and env.state.step_count == 2
        assert env.get_metadata().name == "payments"
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.reset(colour="blue")
    finally:
        env.close()
