"""The error handler: what the agent reads when something fails, and the two named exceptions."""

from __future__ import annotations

import logging

import pytest
from conftest import Lookup, Refused

import seahaven


@pytest.mark.seahaven(fixture="small_startup")
def test_every_argument_violation_in_one_message(refused: Refused) -> None:
    error = refused(
        "INVALID_INPUT", "list_issues", status="nearly_done", limit="ten", colour="blue"
    )
    fields = [violation["field"] for violation in error.details["violations"]]  # type: ignore[index]
    assert sorted(fields) == ["colour", "limit", "status"]
    assert error.message.startswith("invalid input: 3 problems:")


@pytest.mark.seahaven(fixture="small_startup")
def test_a_pattern_mismatch_is_explained_with_the_arguments_description(
    refused: Refused,
) -> None:
    error = refused("INVALID_INPUT", "get_issue", key="twelve")
    assert "such as ENG-12" in error.message


@pytest.mark.seahaven(fixture="small_startup")
def test_the_sql_door_answers_with_sqlites_own_message(
    instance: seahaven.Instance, refused: Refused
) -> None:
    error = refused("db_error", "run_sql", query="SELECT nope FROM issues")
    assert "no such column: nope" in error.message
    refused("db_error", "run_sql", query="DELETE FROM issues")
    # The search index is not behind the SQL door: search_issues is the way in.
    refused("db_error", "run_sql", query="SELECT rowid FROM issues_fts")
    answered = instance.call(
        "run_sql", query="SELECT status, count(*) AS n FROM issues GROUP BY status ORDER BY 1"
    )
    assert answered["columns"] == ["status", "n"]
    assert sum(row[1] for row in answered["rows"]) == 40
    tables = [table["name"] for table in instance.call("describe_schema")["tables"]]
    assert tables == [
        "users",
        "teams",
        "team_members",
        "projects",
        "issues",
        "labels",
        "issue_labels",
        "comments",
        "issue_events",
    ]


@pytest.mark.seahaven(
    fixture="small_startup",
    # A counter wound back by hand: the next key the tool mints is one ENG already has, and
    # the unique index refuses the world's own INSERT.
    setup_sql="UPDATE teams SET issue_counter = 0 WHERE key = 'ENG'",
)
def test_a_database_error_elsewhere_is_internal_and_logged(
    instance: seahaven.Instance,
    refused: Refused,
    project_id: Lookup,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="projecttracker"):
        error = refused("INTERNAL", "create_issue", project_id=project_id("Public beta"), title="A")
    assert "UNIQUE" not in error.message and "issues.key" not in error.message
    assert "changed nothing" in error.message
    [logged] = [record for record in caplog.records if record.name == "projecttracker"]
    assert "issues.key" in logged.getMessage() and logged.exc_info is not None
    # The call was one transaction: the counter it bumped went back with the failed insert.
    assert instance.change_log() == []


@pytest.mark.seahaven(fixture="small_startup")
def test_an_unknown_tool_is_the_frameworks_unknown_tool(refused: Refused) -> None:
    refused("unknown_tool", "delete_issue", issue_id="x")
