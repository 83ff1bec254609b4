"""``seahaven mcp --world projecttracker``: the reference world served to a real MCP client.

The world the reference documentation is written against, over stdio, driven by the ``mcp``
SDK's own client: its handshake, its 27 tools exactly as listed in process, the documented
calls on a fixture chosen through ``--reset-options`` with the viewer's startup keyword, the
product's errors, and the SQL door's own message.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
from conftest import BOUND_SECONDS, Server, connected
from test_stdio import assert_listing_matches, in_process_tools, payload


def test_projecttracker_over_stdio(server_dirs: Callable[[], Server]) -> None:
    from projecttracker import world as tracker

    server = server_dirs()
    expected_tools = in_process_tools("projecttracker")
    assert len(expected_tools) == 27
    options = {"fixture": "small_startup", "seed": 7, "startup": {"user_id": "u_2"}}

    async def scenario() -> None:
        args = ["--world", "projecttracker", "--reset-options", json.dumps(options)]
        async with connected(server, args) as (session, handshake):
            with anyio.fail_after(BOUND_SECONDS):
                assert handshake.serverInfo.name == "ProjectTracker"
                assert handshake.serverInfo.version == tracker.version
                assert handshake.instructions == tracker.mcp_server_instructions
                listed = await session.list_tools()
                assert_listing_matches(listed.tools, expected_tools)

                issue = payload(await session.call_tool("get_issue", {"key": "ENG-12"}))
                assert issue["title"] == "The session cookie leaks a stack trace"
                closed = await session.call_tool(
                    "transition_issue", {"issue_id": issue["id"], "status": "done"}
                )
                assert closed.isError is False
                assert payload(closed)["assignee_id"] is None
                # The viewer named at startup is who the trail records.
                trail = payload(
                    await session.call_tool(
                        "run_sql",
                        {
                            "query": "SELECT kind, actor_id FROM issue_events WHERE issue_id = "
                            f"'{issue['id']}' ORDER BY created_at DESC, rowid DESC LIMIT 2"
                        },
                    )
                )
                assert trail["rows"] == [["assignee", "u_2"], ["status", "u_2"]]

                missing = await session.call_tool("get_issue", {"key": "ENG-999"})
                assert missing.isError is True
                assert payload(missing) == {
                    "code": "NOT_FOUND",
                    "message": "issue ENG-999 not found",
                    "details": {"kind": "issue", "key": "ENG-999"},
                }
                bad = await session.call_tool("list_issues", {"status": "nearly_done"})
                assert bad.isError is True and payload(bad)["code"] == "INVALID_INPUT"
                door = await session.call_tool("run_sql", {"query": "SELECT nope FROM issues"})
                assert door.isError is True
                assert "no such column: nope" in payload(door)["message"]
                found = payload(await session.call_tool("search_issues", {"query": "billing"}))
                assert found["issues"] and "**" in found["issues"][0]["snippet"]

    anyio.run(scenario)
    assert server.instance_dirs() == []
