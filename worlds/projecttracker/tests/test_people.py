"""Users, teams and memberships through real calls."""

from __future__ import annotations

import pytest
from conftest import Lookup, Refused

import seahaven

pytestmark = pytest.mark.seahaven(fixture="small_startup", clock_mode="fixed")


def test_create_user_mints_the_next_id_and_refuses_a_taken_email(
    instance: seahaven.Instance, refused: Refused
) -> None:
    made = instance.call("create_user", email="lin@tally.test", name="Lin Park", role="viewer")
    assert made == {
        "id": "u_4",
        "email": "lin@tally.test",
        "name": "Lin Park",
        "role": "viewer",
        "created_at": "2026-06-01T09:00:00.000Z",
    }
    error = refused("CONFLICT", "create_user", email="MAYA@tally.test", name="Another Maya")
    assert error.details == {"email": "MAYA@tally.test", "user_id": "u_1"}
    refused("INVALID_INPUT", "create_user", email="not an email", name="X")
    refused("INVALID_INPUT", "create_user", email="a@b.test", name="X", role="owner")


def test_get_user_by_id_or_email(instance: seahaven.Instance, refused: Refused) -> None:
    maya = instance.call("get_user", user_id="u_1")
    assert maya["name"] == "Maya Chen" and maya["role"] == "admin"
    assert instance.call("get_user", email="maya@tally.test") == maya
    refused("NOT_FOUND", "get_user", user_id="u_9")
    refused("NOT_FOUND", "get_user", email="nobody@tally.test")
    refused("INVALID_INPUT", "get_user")


def test_list_users_by_name_and_by_role(instance: seahaven.Instance, team_id: Lookup) -> None:
    everyone = instance.call("list_users")
    assert [user["name"] for user in everyone["users"]] == [
        "Jonas Berg",
        "Maya Chen",
        "Priya Raman",
    ]
    assert everyone["has_next"] is False and everyone["next_cursor"] is None
    admins = instance.call("list_users", role="admin")["users"]
    assert [user["id"] for user in admins] == ["u_1"]
    in_eng = instance.call("list_users", team_id=team_id("ENG"))["users"]
    assert len(in_eng) == 3


def test_teams_are_found_by_id_or_key(
    instance: seahaven.Instance, refused: Refused, team_id: Lookup
) -> None:
    eng = instance.call("get_team", key="ENG")
    assert eng["id"] == team_id("ENG") and eng["member_count"] == 3
    assert instance.call("get_team", team_id=eng["id"]) == eng
    refused("NOT_FOUND", "get_team", key="OPS")
    # A key given where an id belongs: the answer names the id to use instead.
    wrong = refused("NOT_FOUND", "get_team", team_id="ENG")
    assert eng["id"] in wrong.message
    refused("INVALID_INPUT", "get_team", key="eng")
    assert [team["key"] for team in instance.call("list_teams")["teams"]] == ["ENG"]


def test_create_team_and_add_members(instance: seahaven.Instance, refused: Refused) -> None:
    ops = instance.call("create_team", key="OPS", name="Operations", description="Keeps it running")
    assert (ops["key"], ops["member_count"]) == ("OPS", 0)
    refused("CONFLICT", "create_team", key="OPS", name="Operations again")
    refused("INVALID_INPUT", "create_team", key="OPERATIONS", name="Too long a key")
    joined = instance.call("add_team_member", team_id=ops["id"], user_id="u_2")
    assert joined["id"] == "u_2" and joined["joined_at"] == "2026-06-01T09:00:00.000Z"
    refused("CONFLICT", "add_team_member", team_id=ops["id"], user_id="u_2")
    refused("NOT_FOUND", "add_team_member", team_id=ops["id"], user_id="u_9")
    members = instance.call("list_team_members", team_id=ops["id"])
    assert [member["id"] for member in members["members"]] == ["u_2"]
    assert instance.call("get_team", key="OPS")["member_count"] == 1
    # A new team's first issue is OPS-1.
    project = instance.call("create_project", team_id=ops["id"], name="Laptops", state="active")
    issue = instance.call("create_issue", project_id=project["id"], title="Order laptops")
    assert issue["key"] == "OPS-1"


def test_list_team_members_pages_by_name(instance: seahaven.Instance, team_id: Lookup) -> None:
    eng = team_id("ENG")
    first = instance.call("list_team_members", team_id=eng, limit=2)
    assert [member["name"] for member in first["members"]] == ["Jonas Berg", "Maya Chen"]
    assert first["has_next"] is True
    rest = instance.call("list_team_members", team_id=eng, limit=2, cursor=first["next_cursor"])
    assert [member["name"] for member in rest["members"]] == ["Priya Raman"]
    assert rest["has_next"] is False
