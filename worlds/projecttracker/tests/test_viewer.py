"""The viewer: who a session drives the tracker as, and actor_id for a second writer."""

from __future__ import annotations

import pytest
from conftest import Lookup, Refused

import seahaven


@pytest.mark.seahaven(fixture="small_startup", startup={"user_id": "u_2"})
def test_the_startup_user_writes_the_trail(instance: seahaven.Instance, issue_id: Lookup) -> None:
    comment = instance.call("add_comment", issue_id=issue_id("ENG-1"), body="Mine.")
    assert comment["author_id"] == "u_2"
    other = instance.call("add_comment", issue_id=issue_id("ENG-1"), body="Hers.", actor_id="u_3")
    assert other["author_id"] == "u_3"


@pytest.mark.seahaven(fixture="small_startup")
def test_without_a_startup_user_the_first_admin_writes(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    comment = instance.call("add_comment", issue_id=issue_id("ENG-1"), body="Noted.")
    assert comment["author_id"] == "u_1"


def test_a_startup_user_naming_nobody_refuses_the_instance(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="names no user"):
        world.instance("small_startup", startup={"user_id": "u_99"})


def test_a_misspelled_startup_keyword_is_refused(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="unknown startup keyword"):
        world.instance("small_startup", startup={"user": "u_1"})


@pytest.mark.seahaven(fixture="empty")
def test_an_empty_workspace_needs_an_actor_until_it_has_an_admin(
    instance: seahaven.Instance, refused: Refused
) -> None:
    member = instance.call("create_user", email="sam@new.test", name="Sam", role="member")
    team = instance.call("create_team", key="CORE", name="Core")
    instance.call("add_team_member", team_id=team["id"], user_id=member["id"])
    project = instance.call("create_project", team_id=team["id"], name="First", state="active")
    error = refused("INVALID_INPUT", "create_issue", project_id=project["id"], title="One")
    assert "actor_id" in error.message
    with_actor = instance.call(
        "create_issue", project_id=project["id"], title="One", actor_id=member["id"]
    )
    assert (with_actor["key"], with_actor["creator_id"]) == ("CORE-1", "u_1")
    admin = instance.call("create_user", email="ada@new.test", name="Ada", role="admin")
    second = instance.call("create_issue", project_id=project["id"], title="Two")
    assert (second["key"], second["creator_id"]) == ("CORE-2", admin["id"])
