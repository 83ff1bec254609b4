"""People: listing, finding, creating and deactivating accounts."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused

pytestmark = pytest.mark.seahaven(fixture="team_workspace")

ACTIVE = ["aiko", "carla", "dev", "jonas", "lena", "maya", "priya", "rafael", "sam", "tom"]


def _all_pages(instance: seahaven.Instance, tool: str, **arguments: object) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = instance.call(tool, cursor=cursor, **arguments)
        pages.append([user.handle for user in page.users])
        cursor = page.next_cursor
        if cursor is None:
            return pages


def test_list_users_pages_through_everyone_once_in_handle_order(
    instance: seahaven.Instance,
) -> None:
    pages = _all_pages(instance, "list_users", limit=3)
    assert [len(page) for page in pages] == [3, 3, 3, 1]
    assert [handle for page in pages for handle in page] == ACTIVE


def test_list_users_leaves_deactivated_accounts_out_unless_asked(
    instance: seahaven.Instance,
) -> None:
    default = instance.call("list_users")
    assert "nina" not in [user.handle for user in default.users]
    everyone = _all_pages(instance, "list_users", limit=4, include_deactivated=True)
    handles = [handle for page in everyone for handle in page]
    assert handles == sorted([*ACTIVE, "nina"])
    nina = instance.call("lookup_user_by_handle", handle="nina")
    assert nina.deactivated is True


def test_a_cursor_only_continues_the_listing_it_came_from(
    instance: seahaven.Instance, refused: Refused
) -> None:
    cursor = instance.call("list_users", limit=2).next_cursor
    assert cursor is not None
    error = refused("INVALID_INPUT", "list_users", cursor=cursor, include_deactivated=True)
    assert error.details is not None
    assert error.details["violations"][0]["field"] == "cursor"
    refused("INVALID_INPUT", "list_channels", cursor=cursor)
    refused("INVALID_INPUT", "list_users", cursor="not-a-cursor")


@pytest.mark.parametrize("limit", [0, 201])
def test_list_users_refuses_a_limit_out_of_range(refused: Refused, limit: int) -> None:
    refused("INVALID_INPUT", "list_users", limit=limit)


def test_get_user_returns_the_profile(instance: seahaven.Instance, user_id: Lookup) -> None:
    carla = instance.call("get_user", user_id=user_id("carla"))
    assert (carla.handle, carla.display_name, carla.title) == (
        "carla",
        "Carla Mendes",
        "Head of Finance",
    )
    assert (carla.timezone, carla.role, carla.deactivated) == ("Europe/Lisbon", "admin", False)


def test_get_user_of_an_unknown_id_is_not_found(refused: Refused) -> None:
    error = refused("NOT_FOUND", "get_user", user_id="U0000000000")
    assert error.details == {"kind": "user", "key": "U0000000000"}


@pytest.mark.parametrize("handle", ["priya", "@priya"])
def test_lookup_user_by_handle_takes_the_handle_with_or_without_at(
    instance: seahaven.Instance, user_id: Lookup, handle: str
) -> None:
    assert instance.call("lookup_user_by_handle", handle=handle).id == user_id("priya")


def test_lookup_user_by_handle_refuses_unknown_and_malformed_handles(refused: Refused) -> None:
    refused("NOT_FOUND", "lookup_user_by_handle", handle="nobody")
    malformed = refused("INVALID_INPUT", "lookup_user_by_handle", handle="Priya")
    assert malformed.details is not None
    # A pattern failure is explained in words, from the argument's own description.
    assert "with or without the leading @" in malformed.details["violations"][0]["problem"]


def test_create_user_adds_the_account_to_general(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    created = instance.call(
        "create_user",
        handle="olu",
        display_name="Olu Adeyemi",
        title="Backend Engineer",
        timezone="Africa/Lagos",
        role="admin",
    )
    assert (created.handle, created.role, created.deactivated) == ("olu", "admin", False)
    members = instance.call("list_members", channel_id=channel_id("general"), limit=200)
    assert "olu" in [user.handle for user in members.users]
    written = [(record.table, record.op) for record in instance.change_log()]
    assert written == [("memberships", "insert"), ("users", "insert")]
    user_record = next(record for record in instance.change_log() if record.table == "users")
    assert user_record.key == {"id": created.id}
    assert user_record.after is not None
    assert user_record.after["handle"] == "olu"


def test_create_user_refuses_a_taken_handle(instance: seahaven.Instance, refused: Refused) -> None:
    refused("NAME_TAKEN", "create_user", handle="sam", display_name="Another Sam")
    # Deactivated accounts keep their handles too.
    refused("NAME_TAKEN", "create_user", handle="nina", display_name="Nina Again")
    assert instance.change_log() == []


def test_create_user_reports_every_bad_argument_at_once(refused: Refused) -> None:
    error = refused(
        "INVALID_INPUT",
        "create_user",
        handle="Bad Handle",
        display_name="   ",
        timezone="not a zone",
    )
    assert error.details is not None
    fields = sorted(violation["field"] for violation in error.details["violations"])
    assert fields == ["display_name", "handle", "timezone"]


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_only_admins_create_accounts(instance: seahaven.Instance, refused: Refused) -> None:
    error = refused("RESTRICTED_ACTION", "create_user", handle="olu", display_name="Olu")
    assert error.details == {"reason": "admin_only"}
    assert instance.inspect().one("SELECT 1 AS found FROM users WHERE handle = 'olu'") is None


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "carla"})
def test_an_admin_deactivates_an_account(
    instance: seahaven.Instance, refused: Refused, user_id: Lookup, channel_id: Lookup
) -> None:
    tom = instance.call("deactivate_user", user_id=user_id("tom"))
    assert tom.deactivated is True
    billing = instance.call("list_members", channel_id=channel_id("billing"))
    assert "tom" not in [user.handle for user in billing.users]
    refused("USER_DEACTIVATED", "deactivate_user", user_id=user_id("tom"))
    refused(
        "USER_DEACTIVATED", "invite_to_channel", channel_id=channel_id("leadership"), user_id=tom.id
    )
    (record,) = [record for record in instance.change_log() if record.table == "users"]
    assert (record.op, record.before, record.after) == (
        "update",
        {"deactivated": 0},
        {"deactivated": 1},
    )


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "carla"})
def test_the_owner_and_yourself_cannot_be_deactivated(refused: Refused, user_id: Lookup) -> None:
    refused("RESTRICTED_ACTION", "deactivate_user", user_id=user_id("maya"))
    refused("RESTRICTED_ACTION", "deactivate_user", user_id=user_id("carla"))
    refused("NOT_FOUND", "deactivate_user", user_id="U0000000000")


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "jonas"})
def test_members_cannot_deactivate_accounts(refused: Refused, user_id: Lookup) -> None:
    refused("RESTRICTED_ACTION", "deactivate_user", user_id=user_id("tom"))
