"""Messages: posting, history, threads, editing and deleting."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused

pytestmark = pytest.mark.seahaven(
    fixture="team_workspace", startup={"user": "sam"}, clock_mode="fixed"
)

NOW = "2026-06-01T09:00:00.000Z"


def _history(instance: seahaven.Instance, channel: str, **arguments: object) -> list[str]:
    """Every message id of a channel's history, following the cursor to the end."""
    ids: list[str] = []
    cursor = None
    while True:
        page = instance.call("list_messages", channel_id=channel, cursor=cursor, **arguments)
        ids += [message.id for message in page.messages]
        cursor = page.next_cursor
        if cursor is None:
            return ids


def test_post_message_returns_the_stored_message(
    instance: seahaven.Instance, channel_id: Lookup, user_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("engineering"), text="PR is up")
    assert (posted.channel_id, posted.user_id, posted.user_handle) == (
        channel_id("engineering"),
        user_id("sam"),
        "sam",
    )
    assert (posted.text, posted.created_at, posted.thread_root_id) == ("PR is up", NOW, None)
    assert (posted.reply_count, posted.deleted, posted.edited_at, posted.reactions) == (
        0,
        False,
        None,
        [],
    )
    newest = instance.call("list_messages", channel_id=channel_id("engineering"), limit=1)
    assert [message.id for message in newest.messages] == [posted.id]


def test_messages_posted_at_one_instant_still_have_one_order(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    first = instance.call("post_message", channel_id=channel_id("random"), text="one")
    second = instance.call("post_message", channel_id=channel_id("random"), text="two")
    assert first.created_at == second.created_at == NOW
    assert first.ts < second.ts
    latest = instance.call("list_messages", channel_id=channel_id("random"), limit=2)
    assert [message.text for message in latest.messages] == ["two", "one"]


def test_post_message_writes_one_row_and_no_search_index_rows(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("billing"), text="refund done")
    log = instance.change_log()
    assert [(record.table, record.op, record.key) for record in log] == [
        ("messages", "insert", {"id": posted.id})
    ]
    assert not [record for record in log if record.table.startswith("messages_fts")]
    # The index was still updated: the trigger wrote to tables the log leaves out.
    found = instance.call("search_messages", query="refund done", channel_id=channel_id("billing"))
    assert posted.id in [match.message.id for match in found.matches]


def test_posting_needs_membership_of_a_public_channel(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    error = refused("NOT_IN_CHANNEL", "post_message", channel_id=channel_id("design"), text="hi")
    assert error.details == {"channel_id": channel_id("design")}
    instance.call("join_channel", channel_id=channel_id("design"))
    assert instance.call("post_message", channel_id=channel_id("design"), text="hi").text == "hi"


def test_posting_to_a_private_channel_you_are_not_in_is_not_found(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    refused("NOT_FOUND", "post_message", channel_id=channel_id("leadership"), text="hello?")
    assert instance.change_log() == []


def test_posting_to_an_archived_channel_is_refused(refused: Refused, channel_id: Lookup) -> None:
    refused("CHANNEL_ARCHIVED", "post_message", channel_id=channel_id("offsite-2026"), text="hi")


@pytest.mark.parametrize("text", ["", "   \n\t ", "x" * 4001])
def test_post_message_refuses_empty_blank_and_overlong_text(
    refused: Refused, channel_id: Lookup, text: str
) -> None:
    refused("INVALID_INPUT", "post_message", channel_id=channel_id("random"), text=text)


def test_a_message_of_the_maximum_length_is_accepted(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("random"), text="y" * 4000)
    assert len(posted.text) == 4000


def test_history_is_newest_first_and_pages_cover_it_exactly_once(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    general = channel_id("general")
    expected = instance.inspect().rows(
        "SELECT id FROM messages WHERE channel_id = ? AND thread_root_id IS NULL "
        "AND deleted_at IS NULL ORDER BY ts DESC, id DESC",
        general,
    )
    paged = _history(instance, general, limit=3)
    assert paged == [row["id"] for row in expected]
    assert len(paged) == len(set(paged)) > 3


def test_history_bounds_are_at_or_after_after_and_strictly_before_before(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    engineering = channel_id("engineering")
    window = _history(
        instance, engineering, after="2026-05-12T11:00:00Z", before="2026-05-19T07:10:00Z"
    )
    expected = instance.inspect().rows(
        "SELECT id FROM messages WHERE channel_id = ? AND thread_root_id IS NULL "
        "AND created_at >= '2026-05-12T11:00:00.000Z' AND created_at < '2026-05-19T07:10:00.000Z' "
        "ORDER BY ts DESC, id DESC",
        engineering,
    )
    assert window == [row["id"] for row in expected]
    texts = [instance.call("get_message", message_id=message).text for message in window]
    assert texts[-1].startswith("Another flaky one")  # posted at exactly `after`
    assert not any(text.startswith("Postgres 16 is live") for text in texts)  # exactly `before`
    # The same bound in another time zone is the same instant.
    shifted = _history(
        instance, engineering, after="2026-05-12T13:00:00+02:00", before="2026-05-19T07:10:00Z"
    )
    assert shifted == window


def test_history_bounds_must_be_aware_and_in_order(refused: Refused, channel_id: Lookup) -> None:
    engineering = channel_id("engineering")
    refused("INVALID_INPUT", "list_messages", channel_id=engineering, after="2026-05-12T11:00:00")
    refused("INVALID_INPUT", "list_messages", channel_id=engineering, before="2026-05-12")
    error = refused(
        "INVALID_INPUT",
        "list_messages",
        channel_id=engineering,
        after="2026-05-19T00:00:00Z",
        before="2026-05-12T00:00:00Z",
    )
    assert error.details is not None
    assert error.details["violations"][0]["field"] == "after"


def test_a_cursor_is_tied_to_its_bounds(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    general = channel_id("general")
    cursor = instance.call("list_messages", channel_id=general, limit=2).next_cursor
    assert cursor is not None
    refused(
        "INVALID_INPUT",
        "list_messages",
        channel_id=general,
        cursor=cursor,
        after="2026-05-01T00:00:00Z",
    )
    refused("INVALID_INPUT", "list_messages", channel_id=channel_id("random"), cursor=cursor)


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_a_public_channel_can_be_read_without_joining(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    page = instance.call("list_messages", channel_id=channel_id("engineering"), limit=5)
    assert len(page.messages) == 5
    refused("NOT_FOUND", "list_messages", channel_id=channel_id("leadership"))
    refused("NOT_FOUND", "list_messages", channel_id=channel_id("hiring-backend"))


def test_history_shows_threads_by_their_first_message_only(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    incidents = instance.call("list_messages", channel_id=channel_id("incidents"))
    assert all(message.thread_root_id is None for message in incidents.messages)
    incident = next(m for m in incidents.messages if m.text.startswith("🔴 Incident"))
    assert incident.reply_count == 5
    assert incident.last_reply_at == "2026-05-14T15:48:00.000Z"


def _thread_of(instance: seahaven.Instance, channel: str, opening: str) -> str:
    page = instance.call("list_messages", channel_id=channel, limit=200)
    return str(next(m.id for m in page.messages if m.text.startswith(opening)))


def test_reply_in_thread_counts_the_reply_on_its_first_message(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("engineering"), "`test_invoice_proration")
    reply = instance.call("reply_in_thread", message_id=root, text="Still green since the fix.")
    assert (reply.thread_root_id, reply.created_at) == (root, NOW)
    thread = instance.call("get_thread", message_id=root)
    assert thread.parent.id == root
    assert thread.parent.reply_count == 4
    assert thread.parent.last_reply_at == NOW
    assert [message.user_handle for message in thread.replies] == ["priya", "sam", "lena", "sam"]
    assert thread.replies[-1].id == reply.id
    records = sorted((r.table, r.op, r.key["id"]) for r in instance.change_log())
    assert records == [("messages", "insert", reply.id), ("messages", "update", root)]


def test_replying_to_a_reply_joins_the_same_thread(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("billing"), "Acme Corp says")
    first_reply = instance.call("get_thread", message_id=root).replies[0]
    answer = instance.call("reply_in_thread", message_id=first_reply.id, text="Closing this out.")
    assert answer.thread_root_id == root
    by_reply = instance.call("get_thread", message_id=first_reply.id)
    assert by_reply.parent.id == root
    assert by_reply.replies[-1].id == answer.id


def test_get_thread_pages_through_replies_oldest_first(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("incidents"), "🔴 Incident")
    seen: list[str] = []
    cursor = None
    while True:
        thread = instance.call("get_thread", message_id=root, limit=2, cursor=cursor)
        seen += [reply.created_at for reply in thread.replies]
        cursor = thread.next_cursor
        if cursor is None:
            break
    assert seen == sorted(seen)
    assert len(seen) == len(set(seen)) == 5


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_replying_needs_membership(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("engineering"), "Sprint 19 starts today")
    refused("NOT_IN_CHANNEL", "reply_in_thread", message_id=root, text="Can I help?")
    refused("NOT_FOUND", "reply_in_thread", message_id="M0000000000", text="hi")
    assert instance.change_log() == []


def test_edit_message_by_its_author(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("random"), text="lunch at 12?")
    edited = instance.call("edit_message", message_id=posted.id, text="lunch at 12:30?")
    assert (edited.text, edited.edited_at) == ("lunch at 12:30?", NOW)
    assert instance.call("get_message", message_id=posted.id).text == "lunch at 12:30?"
    update = [record for record in instance.change_log() if record.op == "update"]
    assert [(record.before, record.after) for record in update] == [
        ({"text": "lunch at 12?", "edited_at": None}, {"text": "lunch at 12:30?", "edited_at": NOW})
    ]


def test_only_the_author_edits_or_deletes(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    someone_elses = _thread_of(instance, channel_id("engineering"), "Sprint 19 starts today")
    error = refused("NOT_AUTHOR", "edit_message", message_id=someone_elses, text="hijacked")
    assert error.details == {"message_id": someone_elses}
    refused("NOT_AUTHOR", "delete_message", message_id=someone_elses)
    assert instance.change_log() == []


def test_deleting_a_message_without_replies_removes_it_from_view(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    posted = instance.call("post_message", channel_id=channel_id("random"), text="oops, typo")
    deleted = instance.call("delete_message", message_id=posted.id)
    assert (deleted.deleted, deleted.text) == (True, "")
    assert posted.id not in _history(instance, channel_id("random"))
    refused("NOT_FOUND", "get_message", message_id=posted.id)
    refused("NOT_FOUND", "edit_message", message_id=posted.id, text="back")
    refused("NOT_FOUND", "delete_message", message_id=posted.id)
    refused("NOT_FOUND", "reply_in_thread", message_id=posted.id, text="?")
    delete_record = instance.change_log()[-1]
    assert delete_record.before == {"text": "oops, typo", "deleted_at": None}
    assert delete_record.after == {"text": "", "deleted_at": NOW}


def test_a_deleted_first_message_stays_as_the_tombstone_of_its_thread(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("random"), "Anyone up for a lunchtime run")
    instance.call("delete_message", message_id=root)
    history = instance.call("list_messages", channel_id=channel_id("random"), limit=200)
    tombstone = next(message for message in history.messages if message.id == root)
    assert (tombstone.deleted, tombstone.text, tombstone.reply_count) == (True, "", 3)
    thread = instance.call("get_thread", message_id=root)
    assert thread.parent.deleted is True
    assert len(thread.replies) == 3


def test_deleting_a_reply_takes_it_off_the_thread(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    root = _thread_of(instance, channel_id("engineering"), "`test_invoice_proration")
    mine = instance.call("get_thread", message_id=root).replies[1]
    assert mine.user_handle == "sam"
    instance.call("delete_message", message_id=mine.id)
    thread = instance.call("get_thread", message_id=root)
    assert thread.parent.reply_count == 2
    assert mine.id not in [reply.id for reply in thread.replies]


def test_the_fixture_keeps_its_edited_message_and_hides_its_deleted_one(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    history = instance.call("list_messages", channel_id=channel_id("random"), limit=200)
    plants = next(message for message in history.messages if "watering rota" in message.text)
    assert plants.text.startswith("The office plants")
    assert plants.edited_at == "2026-05-28T16:03:00.000Z"
    assert not [message for message in history.messages if "hotfix" in message.text]


def test_get_message_finds_any_visible_message(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    hidden = instance.inspect().one(
        "SELECT id FROM messages WHERE channel_id = ? LIMIT 1", channel_id("leadership")
    )
    assert hidden is not None
    refused("NOT_FOUND", "get_message", message_id=str(hidden["id"]))
    refused("NOT_FOUND", "get_thread", message_id=str(hidden["id"]))
    refused("NOT_FOUND", "reply_in_thread", message_id=str(hidden["id"]), text="hi")
