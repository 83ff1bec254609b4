"""``seahaven mcp`` over stdio, driven by the ``mcp`` SDK's own client.

The server is a real subprocess: the handshake names and describes the world,
the tool list is ``inst.tools()`` to the byte, calls come back as JSON (and
structured content), errors as ``isError`` results carrying the framework's
triple, and the instance directory exists while the client is connected and is
gone once it leaves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from conftest import BOUND_SECONDS, Server, connected
from mcp import types


def in_process_tools(world_name: str) -> list[dict[str, Any]]:
    from seahaven.registry import registry

    world = registry().load(world_name)
    with world.instance() as inst:
        return inst.tools()


def payload(result: types.CallToolResult) -> Any:
    """The JSON a result carries as text; its structured content must agree with it."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    value = json.loads(block.text)
    if isinstance(value, dict):
        assert result.structuredContent == value
    else:
        assert result.structuredContent is None
    return value


def assert_listing_matches(listed: list[types.Tool], expected: list[dict[str, Any]]) -> None:
    assert [tool.name for tool in listed] == [tool["name"] for tool in expected]
    for tool, want in zip(listed, expected, strict=True):
        assert tool.description == want["description"]
        # Byte-identical: the same keys in the same order, the same values.
        assert json.dumps(tool.inputSchema) == json.dumps(want["input_schema"])


def test_payments_initialize_list_call_fail_and_disconnect(
    server_dirs: Callable[[], Server],
) -> None:
    from payments_world import world as payments

    server = server_dirs()
    expected_tools = in_process_tools("payments")

    async def scenario() -> None:
        async with connected(server, ["--world", "payments"]) as (session, handshake):
            with anyio.fail_after(BOUND_SECONDS):
                assert handshake.serverInfo.name == payments.mcp_server_name
                assert handshake.serverInfo.version == payments.version
                assert handshake.instructions == payments.mcp_server_instructions
                assert handshake.capabilities.tools is not None
                assert handshake.capabilities.resources is None
                assert handshake.capabilities.prompts is None

                # The instance exists while the client is connected.
                assert len(server.instance_dirs()) == 1

                listed = await session.list_tools()
                assert_listing_matches(listed.tools, expected_tools)

                made = await session.call_tool(
                    "create_customer", {"email": "ada@example.com", "name": "Ada"}
                )
                assert made.isError is False
                customer = payload(made)
                assert customer["email"] == "ada@example.com"
                assert customer["id"].startswith("cus_")

                again = await session.call_tool("get_customer", {"customer_id": customer["id"]})
                assert payload(again) == customer

                missing = await session.call_tool("get_customer", {"customer_id": "cus_nobody"})
                assert missing.isError is True
                assert payload(missing) == {
                    "code": "NOT_FOUND",
                    "message": "no such customer: cus_nobody",
                    "details": {"kind": "customer", "id": "cus_nobody"},
                }

                bad = await session.call_tool(
                    "create_customer", {"email": 5, "nickname": "not an argument"}
                )
                assert bad.isError is True
                refused = payload(bad)
                assert set(refused) == {"code", "message", "details"}
                assert refused["code"] == "INVALID_INPUT"
                assert "email" in refused["message"]

                # The world's tools and nothing else: no control tool.
                control = await session.call_tool("controller_run_sql", {"query": "SELECT 1"})
                assert control.isError is True
                assert payload(control)["code"] == "unknown_tool"

    anyio.run(scenario)
    # The client has left: the process has exited and the instance went with it.
    assert server.instance_dirs() == []
    assert server.files() == []
    assert "seed" in server.stderr


def test_the_composite_company_world_lists_and_calls_across_its_stores(
    server_dirs: Callable[[], Server],
) -> None:
    from company_world import world as company

    server = server_dirs()
    expected_tools = in_process_tools("company")

    async def scenario() -> None:
        args = ["--world", "company", "--fixture", "acme", "--seed", "4"]
        async with connected(server, args) as (session, handshake):
            with anyio.fail_after(BOUND_SECONDS):
                assert handshake.serverInfo.name == company.mcp_server_name
                assert handshake.instructions == company.mcp_server_instructions
                listed = await session.list_tools()
                assert_listing_matches(listed.tools, expected_tools)
                # One instance directory, holding a file per store.
                (directory,) = server.instance_dirs()
                assert len(list(directory.glob("state*.sqlite"))) > 1

                summary = await session.call_tool("get_company_summary", {})
                assert summary.isError is False
                assert isinstance(payload(summary), dict)
                customers = await session.call_tool("pay_list_customers", {"limit": 2})
                assert customers.isError is False
                assert len(payload(customers)["data"]) == 2

                unknown = await session.call_tool("pay_list_customers", {"limit": "many"})
                assert unknown.isError is True
                assert set(payload(unknown)) == {"code", "message", "details"}

    anyio.run(scenario)
    assert server.instance_dirs() == []
    assert server.files() == []
    # A seed was given, so none was drawn.
    assert "seed" not in server.stderr


def test_the_same_seed_gives_the_same_episode_from_the_option_and_the_variable(
    server_dirs: Callable[[], Server],
) -> None:
    async def customer_id(server: Server, args: list[str], env: dict[str, str]) -> str:
        async with connected(server, ["--world", "payments", *args], env) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                made = await session.call_tool("create_customer", {"email": "a@example.com"})
                return str(payload(made)["id"])

    async def scenario() -> list[str]:
        return [
            await customer_id(server_dirs(), ["--seed", "7"], {}),
            await customer_id(server_dirs(), [], {"SEAHAVEN_SEED": "7"}),
            await customer_id(server_dirs(), ["--reset-options", '{"seed": 7}'], {}),
            await customer_id(server_dirs(), [], {"SEAHAVEN_SEED": "8"}),
        ]

    first, from_env, from_json, other = anyio.run(scenario)
    assert first == from_env == from_json
    assert other != first


def test_the_drawn_seed_is_written_to_stderr_and_replays_the_episode(
    server_dirs: Callable[[], Server],
) -> None:
    async def customer_id(server: Server, args: list[str]) -> str:
        async with connected(server, ["--world", "payments", *args]) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                made = await session.call_tool("create_customer", {"email": "a@example.com"})
                return str(payload(made)["id"])

    drawn = server_dirs()
    first = anyio.run(customer_id, drawn, [])
    seed = next(
        word
        for line in drawn.stderr.splitlines()
        if "seed" in line
        for word in line.split()
        if word.isdigit()
    )
    assert anyio.run(customer_id, server_dirs(), ["--seed", seed]) == first


def test_fixture_clock_and_setup_sql_reach_the_instance(
    server_dirs: Callable[[], Server],
) -> None:
    async def first_customer(args: list[str], env: dict[str, str]) -> dict[str, Any]:
        async with connected(server_dirs(), ["--world", "payments", *args], env) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                listed = await session.call_tool("list_customers", {"limit": 1})
                data = payload(listed)["data"]
                return dict(data[0]) if data else {}

    async def scenario() -> None:
        blank = await first_customer([], {})
        assert blank == {}
        from_option = await first_customer(["--fixture", "small_shop"], {})
        from_env = await first_customer([], {"SEAHAVEN_FIXTURE": "small_shop"})
        assert from_option and from_option == from_env
        renamed = await first_customer(
            [
                "--reset-options",
                json.dumps(
                    {
                        "fixture": "small_shop",
                        "setup_sql": "UPDATE customers SET name = 'Renamed'",
                    }
                ),
            ],
            {},
        )
        assert renamed["name"] == "Renamed"
        assert renamed["id"] == from_option["id"]

    anyio.run(scenario)


def test_now_and_clock_mode_from_options_and_variables(
    server_dirs: Callable[[], Server],
) -> None:
    instant = "2030-01-02T03:04:05.000Z"

    async def created_at(args: list[str], env: dict[str, str]) -> str:
        async with connected(server_dirs(), ["--world", "payments", *args], env) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                made = await session.call_tool("create_customer", {"email": "a@example.com"})
                return str(payload(made)["created_at"])

    async def scenario() -> None:
        assert await created_at(["--now", instant, "--clock-mode", "fixed"], {}) == instant
        assert (
            await created_at([], {"SEAHAVEN_NOW": instant, "SEAHAVEN_CLOCK_MODE": "fixed"})
            == instant
        )

    anyio.run(scenario)


def test_a_world_of_its_own_names_the_server_and_keeps_stdout_for_the_protocol(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()
    (server.cwd / "noisy_world.py").write_text(NOISY_WORLD, encoding="utf-8")

    async def scenario() -> None:
        async with connected(server, ["--world", "noisy_world:world", "--seed", "1"]) as (
            session,
            handshake,
        ):
            with anyio.fail_after(BOUND_SECONDS):
                assert handshake.serverInfo.name == "Noisy & Co"
                assert handshake.instructions == ""
                shout = await session.call_tool("shout", {"text": "hi"})
                assert shout.isError is False
                assert payload(shout) == ["hi", "hi"]
                broken = await session.call_tool("broken", {})
                assert broken.isError is True
                internal = payload(broken)
                assert internal["code"] == "internal"
                assert internal["message"] == "internal error"
                scalar = await session.call_tool("count", {})
                assert payload(scalar) == 3
                listed = await session.list_tools()
                assert [tool.name for tool in listed.tools] == ["shout", "broken", "count"]

    anyio.run(scenario)
    stderr = server.stderr
    # What world code printed went to stderr; the protocol was not disturbed by it.
    assert "printed by shout" in stderr
    assert "written to fd 1 by shout" in stderr
    # A world bug is logged for the author, with the id the agent was given.
    assert "the author forgot something" in stderr


NOISY_WORLD = '''
import os

import seahaven

world = seahaven.World(
    name="noisy",
    version="2.0.0",
    schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT",
    state_format="seahaven.state/1",
    mcp_server_name="Noisy & Co",
    mcp_server_instructions="",
)


@world.tool
def shout(ctx: seahaven.Ctx, text: str) -> list[str]:
    """Say it twice."""
    print("printed by shout")
    os.write(1, b"written to fd 1 by shout\\n")
    return [text, text]


@world.tool
def broken(ctx: seahaven.Ctx) -> None:
    """Always a bug."""
    raise seahaven.WorldBug("the author forgot something")


@world.tool
def count(ctx: seahaven.Ctx) -> int:
    """Three."""
    return 3
'''


def test_a_world_without_instructions_sends_none(server_dirs: Callable[[], Server]) -> None:
    server = server_dirs()
    (server.cwd / "quiet_world.py").write_text(
        "import seahaven\n"
        "world = seahaven.World(name='quiet', version='1.0.0', "
        "schema='CREATE TABLE t (id TEXT PRIMARY KEY) STRICT', state_format='seahaven.state/1')\n",
        encoding="utf-8",
    )

    async def scenario() -> None:
        async with connected(server, ["--world", "quiet_world:world", "--seed", "1"]) as (
            session,
            handshake,
        ):
            assert handshake.serverInfo.name == "quiet"
            assert handshake.instructions is None
            with anyio.fail_after(BOUND_SECONDS):
                assert (await session.list_tools()).tools == []

    anyio.run(scenario)


def test_the_sdk_import_is_deferred_until_the_command_runs() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, seahaven.cli\n"
        "seahaven.cli.build_app()\n"
        "assert 'seahaven_mcp.plugin' in sys.modules, 'the plugin was not loaded'\n"
        "assert 'mcp' not in sys.modules, 'building the command line imported the MCP SDK'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=BOUND_SECONDS)


def test_seahaven_mcp_is_the_plugin_package() -> None:
    import seahaven_mcp

    import seahaven.mcp

    assert seahaven.mcp is seahaven_mcp
    assert seahaven.mcp.serve is seahaven_mcp.server.serve
    assert isinstance(seahaven.mcp.RESET_KEYS, tuple)
    assert seahaven.World  # the framework is importable beside it


@pytest.mark.parametrize(
    ("args", "variable", "files"),
    [
        # No storage named anywhere: a server's own instance is in memory.
        (["--seed", "1"], "", False),
        # The reset option has the last word over the variable, either way.
        (["--reset-options", '{"storage": "disk", "seed": 1}'], "memory", True),
        (["--reset-options", '{"storage": "memory", "seed": 1}'], "disk", False),
        # The variable sets the process's default.
        (["--seed", "1"], "disk", True),
    ],
    ids=["default", "option-disk", "option-memory", "variable-disk"],
)
def test_storage_is_memory_by_default_and_a_reset_option_asks_for_files(
    server_dirs: Callable[[], Server], args: list[str], variable: str, files: bool
) -> None:
    server = server_dirs()

    async def scenario() -> None:
        env = {"SEAHAVEN_STORAGE": variable}
        async with connected(server, ["--world", "payments", *args], env) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                created = await session.call_tool(
                    "create_customer", {"email": "ada@example.com", "name": "Ada"}
                )
                assert created.isError is False
                dirs = server.instance_dirs()
                assert len(dirs) == (1 if files else 0), dirs
                if files:
                    assert [path.name for path in dirs[0].glob("state*.sqlite")] == ["state.sqlite"]

    anyio.run(scenario)
    assert server.files() == []
