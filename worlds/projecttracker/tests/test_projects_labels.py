"""Projects and labels through real calls."""

from __future__ import annotations

import pytest
from conftest import Lookup, Refused

import seahaven

pytestmark = pytest.mark.seahaven(fixture="small_startup", clock_mode="fixed")


def test_projects_carry_their_issue_counts(instance: seahaven.Instance, project_id: Lookup) -> None:
    beta = instance.call("get_project", project_id=project_id("Public beta"))
    counted = instance.inspect().rows(
        "SELECT status, count(*) AS n FROM issues WHERE project_id = ? GROUP BY status",
        beta["id"],
    )
    assert beta["issue_counts"] == {row["status"]: row["n"] for row in counted}
    assert beta["lead_id"] == "u_1" and beta["target_date"] == "2026-06-30"
    listed = instance.call("list_projects")["projects"]
    assert [project["name"] for project in listed] == ["Public beta", "Recurring invoices"]
    assert instance.call("list_projects", state="done")["projects"] == []


def test_create_and_update_a_project(
    instance: seahaven.Instance, refused: Refused, team_id: Lookup
) -> None:
    eng = team_id("ENG")
    made = instance.call(
        "create_project", team_id=eng, name="Mobile app", lead_id="u_3", target_date="2026-12-01"
    )
    assert (made["state"], made["issue_counts"]) == ("planned", {})
    refused("CONFLICT", "create_project", team_id=eng, name="Mobile app")
    refused("INVALID_INPUT", "create_project", team_id=eng, name="X", target_date="2026-02-30")
    refused("NOT_FOUND", "create_project", team_id=eng, name="X", lead_id="u_9")
    active = instance.call("update_project", project_id=made["id"], state="active", lead_id="u_2")
    assert (active["state"], active["lead_id"]) == ("active", "u_2")
    cleared = instance.call("update_project", project_id=made["id"], clear=["lead_id"])
    assert cleared["lead_id"] is None and cleared["target_date"] == "2026-12-01"
    refused("INVALID_INPUT", "update_project", project_id=made["id"])
    refused("CONFLICT", "update_project", project_id=made["id"], name="Public beta")


def test_labels_are_a_teams_own(
    instance: seahaven.Instance, refused: Refused, team_id: Lookup, issue_id: Lookup
) -> None:
    eng = team_id("ENG")
    names = [label["name"] for label in instance.call("list_labels", team_id=eng)["labels"]]
    assert names == ["backend", "bug", "chore", "feature", "frontend", "security"]
    made = instance.call("create_label", team_id=eng, name="billing", color="#FFC53D")
    assert made["color"] == "#ffc53d"
    refused("CONFLICT", "create_label", team_id=eng, name="Billing", color="#000000")
    refused("INVALID_INPUT", "create_label", team_id=eng, name="x", color="gold")
    ops = instance.call("create_team", key="OPS", name="Operations")
    foreign = instance.call("create_label", team_id=ops["id"], name="billing", color="#000000")
    key = issue_id("ENG-4")
    error = refused("INVALID_INPUT", "set_issue_labels", issue_id=key, label_ids=[foreign["id"]])
    assert "another team" in error.message


def test_set_issue_labels_replaces_the_set(instance: seahaven.Instance, issue_id: Lookup) -> None:
    key = issue_id("ENG-12")
    labels = {
        row["name"]: row["id"] for row in instance.inspect().rows("SELECT id, name FROM labels")
    }
    changed = instance.call("set_issue_labels", issue_id=key, label_ids=[labels["chore"]])
    assert [label["name"] for label in changed["labels"]] == ["chore"]
    records = instance.change_log()
    assert {(record.table, record.op) for record in records} == {
        ("issue_labels", "delete"),
        ("issue_labels", "insert"),
        ("issues", "update"),
    }
    assert instance.call("set_issue_labels", issue_id=key, label_ids=[])["labels"] == []
