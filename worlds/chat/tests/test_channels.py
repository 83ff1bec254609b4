"""Channels: listing and finding them, private-channel invisibility, and membership."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused

pytestmark = pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})

PUBLIC_LIVE = ["billing", "design", "engineering", "general", "incidents", "random"]


def _names(page: object) -> list[str]:
    return [channel.name for channel in page.channels]  # type: ignore[attr-defined]


def test_list_channels_shows_public_unarchived_channels_by_default(
    instance: seahaven.Instance,
) -> None:
    page = instance.call("list_channels")
    assert _names(page) == PUBLIC_LIVE
    membership = {channel.name: channel.is_member for channel in page.channels}
    assert membership == {
        "billing": True,
        "design": False,
        "engineering": True,
        "general": True,
        "incidents": True,
        "random": True,
    }


def test_include_private_adds_only_the_private_channels_you_are_in(
    instance: seahaven.Instance,
) -> None:
    names = _names(instance.call("list_channels", include_private=True))
    assert "hiring-backend" in names
    assert "leadership" not in names
    archived = _names(instance.call("list_channels", include_private=True, include_archived=True))
    assert archived == sorted([*PUBLIC_LIVE, "hiring-backend", "offsite-2026"])


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "maya"})
def test_a_member_of_leadership_sees_it(instance: seahaven.Instance) -> None:
    names = _names(instance.call("list_channels", include_private=True))
    assert "leadership" in names
    # maya is not in #hiring-backend, so it stays hidden from her, owner or not.
    assert "hiring-backend" not in names


def test_list_channels_pages_cover_every_channel_exactly_once(
    instance: seahaven.Instance,
) -> None:
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = instance.call(
            "list_channels", limit=2, cursor=cursor, include_private=True, include_archived=True
        )
        seen += _names(page)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 4
    assert seen == sorted([*PUBLIC_LIVE, "hiring-backend", "offsite-2026"])


def test_a_private_channel_you_are_not_in_is_indistinguishable_from_a_missing_one(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    hidden = refused("NOT_FOUND", "get_channel", channel_id=channel_id("leadership"))
    missing = refused("NOT_FOUND", "get_channel", channel_id="C0000000000")
    assert hidden.details == {"kind": "channel", "key": channel_id("leadership")}
    assert missing.details == {"kind": "channel", "key": "C0000000000"}
    assert hidden.message.replace(channel_id("leadership"), "X") == missing.message.replace(
        "C0000000000", "X"
    )
    refused("NOT_FOUND", "lookup_channel_by_name", name="#leadership")
    refused("NOT_FOUND", "list_members", channel_id=channel_id("leadership"))
    refused("NOT_FOUND", "join_channel", channel_id=channel_id("leadership"))


def test_get_channel_and_lookup_by_name_agree(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    by_id = instance.call("get_channel", channel_id=channel_id("billing"))
    by_name = instance.call("lookup_channel_by_name", name="#billing")
    assert by_id == by_name
    assert (by_id.is_private, by_id.is_archived, by_id.member_count) == (False, False, 5)
    assert by_id.topic == "Billing ops: refunds, invoices, dunning"


def test_create_channel_makes_you_its_first_member(
    instance: seahaven.Instance, user_id: Lookup
) -> None:
    created = instance.call(
        "create_channel", name="metering", topic="Usage events", purpose="Metering pipeline"
    )
    assert (created.name, created.is_private, created.creator_id) == (
        "metering",
        False,
        user_id("sam"),
    )
    assert (created.member_count, created.is_member) == (1, True)
    tables = sorted((record.table, record.op) for record in instance.change_log())
    assert tables == [("channels", "insert"), ("memberships", "insert")]


def test_a_new_private_channel_is_listed_for_its_creator(instance: seahaven.Instance) -> None:
    created = instance.call("create_channel", name="secret-project", is_private=True)
    assert created.is_private is True
    assert "secret-project" not in _names(instance.call("list_channels"))
    assert "secret-project" in _names(instance.call("list_channels", include_private=True))


@pytest.mark.parametrize("name", ["general", "leadership", "offsite-2026"])
def test_channel_names_are_unique_across_private_and_archived_channels(
    refused: Refused, name: str
) -> None:
    refused("NAME_TAKEN", "create_channel", name=name)


@pytest.mark.parametrize("name", ["Has Caps", "-leading-dash", "#general", "a" * 81, ""])
def test_create_channel_refuses_malformed_names(refused: Refused, name: str) -> None:
    refused("INVALID_INPUT", "create_channel", name=name)


def test_archive_needs_the_creator_or_an_admin(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    error = refused("RESTRICTED_ACTION", "archive_channel", channel_id=channel_id("engineering"))
    assert error.details == {"reason": "creator_or_admin_only"}
    mine = instance.call("create_channel", name="temp-room")
    archived = instance.call("archive_channel", channel_id=mine.id)
    assert archived.is_archived is True
    assert archived.archived_at is not None


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "dev"})
def test_an_archived_channel_refuses_every_change(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup, user_id: Lookup
) -> None:
    design = channel_id("design")
    instance.call("archive_channel", channel_id=design)
    refused("CHANNEL_ARCHIVED", "archive_channel", channel_id=design)
    refused("CHANNEL_ARCHIVED", "join_channel", channel_id=design)
    refused("CHANNEL_ARCHIVED", "post_message", channel_id=design, text="hello?")
    refused("CHANNEL_ARCHIVED", "set_channel_topic", channel_id=design, topic="gone")
    refused("CHANNEL_ARCHIVED", "invite_to_channel", channel_id=design, user_id=user_id("tom"))
    # Still readable.
    assert instance.call("list_messages", channel_id=design).messages


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "maya"})
def test_general_can_be_neither_archived_nor_left(refused: Refused, channel_id: Lookup) -> None:
    archived = refused("RESTRICTED_ACTION", "archive_channel", channel_id=channel_id("general"))
    assert archived.details == {"reason": "general_channel"}
    refused("RESTRICTED_ACTION", "leave_channel", channel_id=channel_id("general"))


def test_set_channel_topic_records_who_set_it(
    instance: seahaven.Instance, channel_id: Lookup, user_id: Lookup
) -> None:
    updated = instance.call(
        "set_channel_topic", channel_id=channel_id("incidents"), topic="  On call: @sam  "
    )
    assert updated.topic == "On call: @sam"
    (record,) = instance.change_log()
    assert (record.table, record.op) == ("channels", "update")
    assert record.after is not None
    assert record.after["topic"] == "On call: @sam"
    assert record.after["topic_set_by"] == user_id("sam")


def test_set_channel_topic_needs_membership_and_a_short_topic(
    refused: Refused, channel_id: Lookup
) -> None:
    refused("NOT_IN_CHANNEL", "set_channel_topic", channel_id=channel_id("design"), topic="hi")
    refused("INVALID_INPUT", "set_channel_topic", channel_id=channel_id("billing"), topic="x" * 251)


def test_join_a_public_channel_then_again(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    joined = instance.call("join_channel", channel_id=channel_id("design"))
    assert (joined.is_member, joined.member_count) == (True, 5)
    refused("ALREADY_IN_CHANNEL", "join_channel", channel_id=channel_id("design"))
    refused("ALREADY_IN_CHANNEL", "join_channel", channel_id=channel_id("hiring-backend"))


def test_leaving_a_private_channel_makes_it_invisible(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    hiring = channel_id("hiring-backend")
    left = instance.call("leave_channel", channel_id=hiring)
    assert left.is_member is False
    refused("NOT_FOUND", "get_channel", channel_id=hiring)
    refused("NOT_FOUND", "list_messages", channel_id=hiring)
    assert "hiring-backend" not in _names(instance.call("list_channels", include_private=True))


def test_leaving_a_channel_you_are_not_in(refused: Refused, channel_id: Lookup) -> None:
    refused("NOT_IN_CHANNEL", "leave_channel", channel_id=channel_id("design"))


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "lena"})
def test_invite_brings_someone_into_a_private_channel(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup, user_id: Lookup
) -> None:
    hiring = channel_id("hiring-backend")
    updated = instance.call("invite_to_channel", channel_id=hiring, user_id=user_id("jonas"))
    assert updated.member_count == 4
    members = instance.call("list_members", channel_id=hiring)
    assert [user.handle for user in members.users] == ["dev", "jonas", "lena", "sam"]
    refused("ALREADY_IN_CHANNEL", "invite_to_channel", channel_id=hiring, user_id=user_id("sam"))
    refused("USER_DEACTIVATED", "invite_to_channel", channel_id=hiring, user_id=user_id("nina"))
    refused("NOT_FOUND", "invite_to_channel", channel_id=hiring, user_id="U0000000000")
    (record,) = [record for record in instance.change_log() if record.table == "memberships"]
    assert record.key == {"channel_id": hiring, "user_id": user_id("jonas")}


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_inviting_needs_membership(refused: Refused, channel_id: Lookup, user_id: Lookup) -> None:
    refused(
        "NOT_IN_CHANNEL",
        "invite_to_channel",
        channel_id=channel_id("engineering"),
        user_id=user_id("carla"),
    )


def test_list_members_pages_through_active_members(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = instance.call(
            "list_members", channel_id=channel_id("general"), limit=4, cursor=cursor
        )
        seen += [user.handle for user in page.users]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [
        "aiko", "carla", "dev", "jonas", "lena", "maya", "priya", "rafael", "sam", "tom"
    ]  # fmt: skip
    # nina is still a member of #random, but deactivated accounts are not listed.
    random_members = instance.call("list_members", channel_id=channel_id("random"))
    assert "nina" not in [user.handle for user in random_members.users]
