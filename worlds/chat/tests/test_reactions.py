"""Reactions: one emoji per person per message."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused

pytestmark = pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})


def _message(instance: seahaven.Instance, channel: str, opening: str) -> str:
    page = instance.call("list_messages", channel_id=channel, limit=200)
    return str(next(message.id for message in page.messages if message.text.startswith(opening)))


def test_add_reaction_joins_the_existing_summary(
    instance: seahaven.Instance, channel_id: Lookup, user_id: Lookup
) -> None:
    target = _message(instance, channel_id("general"), "Please welcome @aiko")
    before = instance.call("get_message", message_id=target)
    assert [(r.emoji, r.count) for r in before.reactions] == [("wave", 8), ("tada", 2)]
    after = instance.call("add_reaction", message_id=target, emoji="tada")
    tada = next(r for r in after.reactions if r.emoji == "tada")
    assert tada.count == 3
    assert tada.user_ids[-1] == user_id("sam")
    (record,) = instance.change_log()
    assert (record.table, record.op) == ("reactions", "insert")
    assert record.key == {"message_id": target, "emoji": "tada", "user_id": user_id("sam")}


def test_colons_around_an_emoji_are_dropped(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    target = _message(instance, channel_id("engineering"), "Code freeze for v2.4")
    reacted = instance.call("add_reaction", message_id=target, emoji=":eyes:")
    assert "eyes" in [r.emoji for r in reacted.reactions]
    refused("ALREADY_REACTED", "add_reaction", message_id=target, emoji="eyes")


def test_the_same_emoji_twice_is_already_reacted(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    # sam already gave this one a white_check_mark in the fixture.
    target = _message(instance, channel_id("engineering"), "Code freeze for v2.4")
    error = refused("ALREADY_REACTED", "add_reaction", message_id=target, emoji="white_check_mark")
    assert error.details == {"message_id": target, "emoji": "white_check_mark"}
    assert instance.change_log() == []


def test_remove_reaction_takes_it_back_once(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup, user_id: Lookup
) -> None:
    target = _message(instance, channel_id("engineering"), "Code freeze for v2.4")
    after = instance.call("remove_reaction", message_id=target, emoji="white_check_mark")
    check = next(r for r in after.reactions if r.emoji == "white_check_mark")
    assert user_id("sam") not in check.user_ids
    assert check.count == 3
    refused("NO_REACTION", "remove_reaction", message_id=target, emoji="white_check_mark")
    refused("NO_REACTION", "remove_reaction", message_id=target, emoji="never_added")
    (record,) = instance.change_log()
    assert (record.table, record.op) == ("reactions", "delete")


@pytest.mark.parametrize("emoji", ["", "Thumbs Up", "👍", ":" * 3, "x" * 65])
def test_malformed_emoji_names_are_refused(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup, emoji: str
) -> None:
    target = _message(instance, channel_id("engineering"), "Code freeze for v2.4")
    refused("INVALID_INPUT", "add_reaction", message_id=target, emoji=emoji)


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_reacting_needs_membership_and_visibility(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    public = _message(instance, channel_id("engineering"), "Code freeze for v2.4")
    refused("NOT_IN_CHANNEL", "add_reaction", message_id=public, emoji="eyes")
    hidden = instance.inspect().one(
        "SELECT id FROM messages WHERE channel_id = ? LIMIT 1", channel_id("leadership")
    )
    assert hidden is not None
    refused("NOT_FOUND", "add_reaction", message_id=str(hidden["id"]), emoji="eyes")
    refused("NOT_FOUND", "remove_reaction", message_id=str(hidden["id"]), emoji="eyes")


def test_reactions_in_an_archived_channel_are_frozen(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    target = _message(instance, channel_id("offsite-2026"), "Thank you all")
    refused("CHANNEL_ARCHIVED", "add_reaction", message_id=target, emoji="wave")
    refused("CHANNEL_ARCHIVED", "remove_reaction", message_id=target, emoji="heart")
