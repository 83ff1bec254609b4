"""The tool list an agent reads: its names, its order, and what it says about the arguments."""

from __future__ import annotations

import pytest

import seahaven

TOOLS = [
    "create_user",
    "get_user",
    "list_users",
    "create_team",
    "get_team",
    "list_teams",
    "add_team_member",
    "list_team_members",
    "create_project",
    "get_project",
    "list_projects",
    "update_project",
    "create_label",
    "list_labels",
    "set_issue_labels",
    "create_issue",
    "get_issue",
    "list_issues",
    "update_issue",
    "assign_issue",
    "transition_issue",
    "archive_issue",
    "add_comment",
    "list_comments",
    "search_issues",
    "run_sql",
    "describe_schema",
]


@pytest.mark.seahaven(fixture=None)
def test_twenty_five_tools_and_the_sql_door(instance: seahaven.Instance) -> None:
    listed = instance.tools()
    assert [tool["name"] for tool in listed] == TOOLS
    assert all(tool["description"].strip() for tool in listed)


@pytest.mark.seahaven(fixture=None)
def test_the_statuses_are_where_the_argument_is(instance: seahaven.Instance) -> None:
    schema = next(tool for tool in instance.tools() if tool["name"] == "transition_issue")
    status = schema["input_schema"]["properties"]["status"]
    assert status["enum"] == ["backlog", "todo", "in_progress", "done", "canceled"]
    assert "$defs" not in schema["input_schema"]
    assert sorted(schema["input_schema"]["required"]) == ["issue_id", "status"]


def test_the_world_says_who_it_is(world: seahaven.World) -> None:
    assert (world.name, world.version) == ("projecttracker", "1.0.0")
    assert world.mcp_server_name == "ProjectTracker"
    assert "ENG-12" in str(world.mcp_server_instructions)
