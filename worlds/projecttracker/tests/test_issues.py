"""Issues through real calls: keys, the closing rule, archiving, and the audit trail."""

from __future__ import annotations

import json

import pytest
from conftest import Lookup, Refused, events

import seahaven

pytestmark = pytest.mark.seahaven(fixture="small_startup", clock_mode="fixed")

NOW = "2026-06-01T09:00:00.000Z"


def test_get_issue_takes_a_key_or_an_id(instance: seahaven.Instance) -> None:
    by_key = instance.call("get_issue", key="ENG-12")
    assert by_key["title"] == "The session cookie leaks a stack trace"
    assert instance.call("get_issue", issue_id=by_key["id"]) == by_key
    # A key is read without regard to case.
    assert instance.call("get_issue", key="eng-12")["id"] == by_key["id"]
    assert {label["name"] for label in by_key["labels"]} == {"bug", "security", "backend"}


def test_get_issue_wants_exactly_one_way_in(refused: Refused) -> None:
    refused("INVALID_INPUT", "get_issue")
    refused("INVALID_INPUT", "get_issue", key="ENG-1", issue_id="x")


def test_a_missing_issue_is_not_found_in_the_products_words(refused: Refused) -> None:
    error = refused("NOT_FOUND", "get_issue", key="ENG-999")
    assert error.message == "issue ENG-999 not found"
    assert error.details == {"kind": "issue", "key": "ENG-999"}


def test_an_issue_key_where_an_id_belongs_is_pointed_out(
    refused: Refused, issue_id: Lookup
) -> None:
    error = refused("NOT_FOUND", "transition_issue", issue_id="ENG-3", status="done")
    assert issue_id("ENG-3") in error.message


def test_create_issue_mints_the_next_key_of_the_team(
    instance: seahaven.Instance, project_id: Lookup
) -> None:
    created = instance.call(
        "create_issue",
        project_id=project_id("Recurring invoices"),
        title="  Skip a run of a recurring invoice  ",
        priority=2,
        due_at="2026-06-15T17:00:00+02:00",
    )
    assert created["key"] == "ENG-41"
    assert created["title"] == "Skip a run of a recurring invoice"
    assert created["status"] == "backlog" and created["assignee_id"] is None
    assert created["creator_id"] == "u_1"  # the first admin, by default
    assert created["due_at"] == "2026-06-15T15:00:00.000Z"
    assert created["created_at"] == NOW
    again = instance.call("create_issue", project_id=project_id("Public beta"), title="B")
    assert again["key"] == "ENG-42"
    counter = instance.inspect().one("SELECT issue_counter FROM teams WHERE key = 'ENG'")
    assert counter == {"issue_counter": 42}
    trail = events(instance, created["id"], NOW)
    assert [event["kind"] for event in trail] == ["created"]
    assert json.loads(trail[0]["payload"]) == {
        "key": "ENG-41",
        "status": "backlog",
        "assignee_id": None,
    }


def test_a_refused_create_hands_no_number_out(
    instance: seahaven.Instance, refused: Refused, project_id: Lookup
) -> None:
    refused(
        "CONFLICT",
        "create_issue",
        project_id=project_id("Public beta"),
        title="Closed and assigned",
        status="done",
        assignee_id="u_2",
    )
    created = instance.call("create_issue", project_id=project_id("Public beta"), title="Next")
    assert created["key"] == "ENG-41"


def test_create_issue_checks_what_it_is_given(
    instance: seahaven.Instance, refused: Refused, project_id: Lookup
) -> None:
    beta = project_id("Public beta")
    refused("NOT_FOUND", "create_issue", project_id="nope", title="A")
    refused("NOT_FOUND", "create_issue", project_id=beta, title="A", assignee_id="u_99")
    refused("NOT_FOUND", "create_issue", project_id=beta, title="A", label_ids=["nope"])
    refused("INVALID_INPUT", "create_issue", project_id=beta, title="   ")
    refused("INVALID_INPUT", "create_issue", project_id=beta, title="A", priority=5)
    instance.call("create_user", email="eve@tally.test", name="Eve Outsider")
    error = refused("CONFLICT", "create_issue", project_id=beta, title="A", assignee_id="u_4")
    assert "add_team_member" in error.message
    labels = instance.inspect().rows("SELECT id FROM labels ORDER BY name LIMIT 2")
    made = instance.call(
        "create_issue", project_id=beta, title="Labelled", label_ids=[row["id"] for row in labels]
    )
    assert [label["name"] for label in made["labels"]] == ["backend", "bug"]


def test_closing_an_issue_drops_its_assignee_in_one_update(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    closed = instance.call("transition_issue", issue_id=issue_id("ENG-3"), status="done")
    assert closed["status"] == "done" and closed["assignee_id"] is None
    assert closed["completed_at"] == NOW
    rows_changed = [entry for entry in instance.change_log() if entry.table == "issues"]
    assert [entry.op for entry in rows_changed] == ["update"]
    trail = events(instance, closed["id"], NOW)
    assert [event["kind"] for event in trail] == ["status", "assignee"]
    assert json.loads(trail[0]["payload"]) == {"from": "in_progress", "to": "done"}
    assert json.loads(trail[1]["payload"])["to"] is None


def test_moving_between_the_closed_statuses_drops_an_assignee_too(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    key = issue_id("ENG-3")
    instance.call("transition_issue", issue_id=key, status="done")
    # The loophole puts someone on the closed issue; canceling it takes them off again.
    instance.call("update_issue", issue_id=key, assignee_id="u_3")
    canceled = instance.call("transition_issue", issue_id=key, status="canceled")
    assert (canceled["status"], canceled["assignee_id"]) == ("canceled", None)
    kinds = [event["kind"] for event in events(instance, key, NOW)]
    assert kinds == ["status", "assignee", "assignee", "status", "assignee"]


def test_reopening_clears_completed_at_and_stays_unassigned(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    key = issue_id("ENG-4")
    instance.call("transition_issue", issue_id=key, status="canceled")
    reopened = instance.call("transition_issue", issue_id=key, status="todo")
    assert reopened["completed_at"] is None and reopened["assignee_id"] is None


def test_moving_to_the_status_it_has_is_a_conflict(refused: Refused, issue_id: Lookup) -> None:
    error = refused(
        "CONFLICT", "transition_issue", issue_id=issue_id("ENG-3"), status="in_progress"
    )
    assert error.message == "issue ENG-3 is already in_progress"


def test_a_closed_issue_cannot_be_assigned(
    instance: seahaven.Instance, refused: Refused, issue_id: Lookup
) -> None:
    key = issue_id("ENG-3")
    instance.call("transition_issue", issue_id=key, status="done")
    error = refused("CONFLICT", "assign_issue", issue_id=key, assignee_id="u_2")
    assert "transition_issue" in error.message


def test_update_issue_checks_only_the_status_it_is_given(
    instance: seahaven.Instance, refused: Refused, issue_id: Lookup
) -> None:
    key = issue_id("ENG-3")
    refused("CONFLICT", "update_issue", issue_id=key, status="done", assignee_id="u_2")
    instance.call("update_issue", issue_id=key, status="done")
    # The documented loophole: without a status, update_issue assigns a closed issue.
    assigned = instance.call("update_issue", issue_id=key, assignee_id="u_3")
    assert (assigned["status"], assigned["assignee_id"]) == ("done", "u_3")


def test_assign_and_unassign_record_who_did_it(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    key = issue_id("ENG-4")
    before = instance.call("get_issue", issue_id=key)["assignee_id"]
    other = "u_2" if before == "u_3" else "u_3"
    moved = instance.call("assign_issue", issue_id=key, assignee_id=other, actor_id="u_2")
    assert moved["assignee_id"] == other
    cleared = instance.call("assign_issue", issue_id=key, assignee_id=None)
    assert cleared["assignee_id"] is None
    trail = events(instance, key, NOW)
    assert [(event["kind"], event["actor_id"]) for event in trail] == [
        ("assignee", "u_2"),
        ("assignee", "u_1"),
    ]
    assert json.loads(trail[0]["payload"]) == {"from": before, "to": other}
    # Assigning the one already assigned changes nothing and records nothing.
    calls_before = len(instance.change_log())
    instance.call("assign_issue", issue_id=key, assignee_id=None)
    assert len(instance.change_log()) == calls_before


def test_update_issue_changes_only_what_it_is_given(
    instance: seahaven.Instance, refused: Refused, issue_id: Lookup, project_id: Lookup
) -> None:
    key = issue_id("ENG-3")
    before = instance.call("get_issue", issue_id=key)
    after = instance.call(
        "update_issue",
        issue_id=key,
        title="PDF currency symbol follows the account",
        priority=1,
        estimate=5,
        project_id=project_id("Recurring invoices"),
    )
    assert after["title"] == "PDF currency symbol follows the account"
    assert (after["priority"], after["estimate"]) == (1, 5)
    assert after["project_id"] == project_id("Recurring invoices")
    assert after["key"] == before["key"] and after["description"] == before["description"]
    assert after["assignee_id"] == before["assignee_id"]
    cleared = instance.call("update_issue", issue_id=key, clear=["estimate", "assignee_id"])
    assert cleared["estimate"] is None and cleared["assignee_id"] is None
    refused("INVALID_INPUT", "update_issue", issue_id=key)
    refused("INVALID_INPUT", "update_issue", issue_id=key, estimate=3, clear=["estimate"])
    refused("INVALID_INPUT", "update_issue", issue_id=key, clear=["title"])
    # Title changes are not part of the audit trail; the assignee removal is.
    assert [event["kind"] for event in events(instance, key, NOW)] == ["assignee"]


def test_an_archived_issue_keeps_its_fields_and_leaves_the_lists(
    instance: seahaven.Instance, refused: Refused, issue_id: Lookup
) -> None:
    key = issue_id("ENG-12")
    archived = instance.call("archive_issue", issue_id=key)
    assert archived["archived_at"] == NOW and archived["status"] == "in_progress"
    listed = instance.call("list_issues", limit=100)["issues"]
    assert key not in {issue["id"] for issue in listed}
    assert instance.call("get_issue", key="ENG-12")["archived_at"] == NOW
    found = instance.call("search_issues", query="session cookie")["issues"]
    assert key in {issue["id"] for issue in found}
    for tool, arguments in (
        ("update_issue", {"title": "x"}),
        ("transition_issue", {"status": "done"}),
        ("assign_issue", {"assignee_id": None}),
        ("set_issue_labels", {"label_ids": []}),
        ("archive_issue", {}),
    ):
        refused("CONFLICT", tool, issue_id=key, **arguments)
    # Archiving freezes the issue, not the conversation about it.
    assert instance.call("add_comment", issue_id=key, body="Still happening?")["issue_id"] == key


def test_list_issues_filters_and_leaves_archived_issues_out(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    everything = instance.call("list_issues", limit=100)
    assert sorted(everything) == ["has_next", "issues", "next_cursor"]
    assert len(everything["issues"]) == 40 and everything["has_next"] is False
    created = [issue["created_at"] for issue in everything["issues"]]
    assert created == sorted(created, reverse=True)  # newest first
    mine = instance.call("list_issues", assignee_id="u_2", limit=100)["issues"]
    assert mine and all(issue["assignee_id"] == "u_2" for issue in mine)
    todo = instance.call("list_issues", status="todo", limit=100)["issues"]
    assert todo and all(issue["status"] == "todo" for issue in todo)
    security = instance.inspect().one("SELECT id FROM labels WHERE name = 'security'")
    assert security is not None
    labelled = instance.call("list_issues", label_id=security["id"], limit=100)["issues"]
    assert labelled and all(
        "security" in {label["name"] for label in issue["labels"]} for issue in labelled
    )
    urgent = instance.call("list_issues", priority=1, limit=100)["issues"]
    assert urgent and {issue["priority"] for issue in urgent} == {1}


def test_a_done_project_takes_no_new_issues(
    instance: seahaven.Instance, refused: Refused, project_id: Lookup
) -> None:
    beta = project_id("Public beta")
    instance.call("update_project", project_id=beta, state="done")
    error = refused("CONFLICT", "create_issue", project_id=beta, title="Late idea")
    assert "update_project" in error.message


def test_an_issue_stays_in_its_team(
    instance: seahaven.Instance, refused: Refused, issue_id: Lookup
) -> None:
    ops = instance.call("create_team", key="OPS", name="Operations")
    elsewhere = instance.call("create_project", team_id=ops["id"], name="Office move")
    refused("CONFLICT", "update_issue", issue_id=issue_id("ENG-3"), project_id=elsewhere["id"])


@pytest.mark.seahaven(fixture="small_startup", clock_mode="tick")
def test_two_people_can_write_in_one_run(instance: seahaven.Instance, issue_id: Lookup) -> None:
    key = issue_id("ENG-4")
    instance.call("add_comment", issue_id=key, body="On it.", actor_id="u_2")
    instance.call("transition_issue", issue_id=key, status="in_progress", actor_id="u_2")
    instance.call("add_comment", issue_id=key, body="Thanks!")
    trail = instance.inspect().rows(
        "SELECT kind, actor_id FROM issue_events WHERE issue_id = ? AND created_at > ? "
        "ORDER BY created_at, rowid",
        key,
        NOW,
    )
    assert [(row["kind"], row["actor_id"]) for row in trail] == [
        ("comment", "u_2"),
        ("status", "u_2"),
        ("comment", "u_1"),
    ]
