"""Who the agent acts as: the ``user`` startup keyword, the owner by default, and refusals."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused


@pytest.mark.seahaven(fixture="team_workspace")
def test_without_a_user_the_agent_acts_as_the_owner(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("general"), text="Morning!")
    assert posted.user_handle == "maya"
    owner = instance.inspect().one("SELECT handle FROM users WHERE role = 'owner'")
    assert owner == {"handle": "maya"}


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_the_user_keyword_names_the_acting_user_by_handle(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("engineering"), text="On it.")
    assert posted.user_handle == "sam"


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "@priya"})
def test_the_user_keyword_accepts_a_leading_at(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("design"), text="Looks great")
    assert posted.user_handle == "priya"


def test_the_user_keyword_accepts_a_user_id(world: seahaven.World) -> None:
    with world.instance("team_workspace") as first:
        lena = first.call("lookup_user_by_handle", handle="lena")
    with world.instance("team_workspace", startup={"user": lena.id}) as inst:
        general = inst.call("lookup_channel_by_name", name="general")
        assert inst.call("post_message", channel_id=general.id, text="Hi").user_id == lena.id


def test_an_unknown_user_refuses_the_instance(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="not an account in this workspace"):
        world.instance("team_workspace", startup={"user": "nobody"})


def test_a_deactivated_user_refuses_the_instance(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="deactivated"):
        world.instance("team_workspace", startup={"user": "nina"})


def test_a_blank_user_refuses_the_instance(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="handle or a user id"):
        world.instance("team_workspace", startup={"user": "  "})


def test_a_misspelt_startup_keyword_refuses_the_instance(world: seahaven.World) -> None:
    with pytest.raises(seahaven.WorldBug, match="unknown startup keyword"):
        world.instance("team_workspace", startup={"usr": "sam"})


def test_naming_a_user_in_the_empty_workspace_refuses_the_instance(
    world: seahaven.World,
) -> None:
    with pytest.raises(seahaven.WorldBug, match="not an account"):
        world.instance("empty", startup={"user": "maya"})


@pytest.mark.seahaven(fixture="empty")
def test_the_empty_workspace_has_nobody_to_act_as_until_an_account_exists(
    instance: seahaven.Instance, refused: Refused
) -> None:
    refused("NO_ACTING_USER", "list_channels")
    refused("NO_ACTING_USER", "create_channel", name="general")
    first = instance.call("create_user", handle="ada", display_name="Ada Lovelace", role="member")
    # The first account of a workspace becomes its owner, whatever role was asked for.
    assert first.role == "owner"
    channel = instance.call("create_channel", name="general")
    assert channel.creator_id == first.id
    posted = instance.call("post_message", channel_id=channel.id, text="Hello, world")
    assert posted.user_id == first.id


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_startup_writes_nothing_to_the_change_log(instance: seahaven.Instance) -> None:
    assert instance.change_log() == []
    assert instance.state()["startup"] == {"user": "tom"}
