"""Search: FTS5 matching, bm25 ranking, scoping to what the acting user can see, paging."""

from __future__ import annotations

import pytest
import seahaven
from conftest import Lookup, Refused


def _ids(results: object) -> list[str]:
    return [match.message.id for match in results.matches]  # type: ignore[attr-defined]


@pytest.mark.seahaven(fixture="empty", clock_mode="fixed", now="2026-06-01T09:00:00.000Z")
def test_the_denser_match_ranks_first(instance: seahaven.Instance) -> None:
    instance.call("create_user", handle="ada", display_name="Ada")
    room = instance.call("create_channel", name="ops")
    sparse = instance.call(
        "post_message",
        channel_id=room.id,
        text="After lunch we looked at the quarterly numbers, the roadmap, the hiring plan "
        "and, briefly, one invoice that had gone out twice.",
    )
    dense = instance.call("post_message", channel_id=room.id, text="Invoice invoice invoices!")
    instance.call("post_message", channel_id=room.id, text="Nothing relevant here.")
    found = instance.call("search_messages", query="invoice")
    assert found.total == 2
    assert _ids(found) == [dense.id, sparse.id]
    assert found.matches[0].score > found.matches[1].score
    assert found.matches[0].channel_name == "ops"
    assert "*invoice*" in found.matches[1].snippet


@pytest.mark.seahaven(fixture="empty", clock_mode="fixed", now="2026-06-01T09:00:00.000Z")
def test_equal_scores_fall_back_to_newest_first(instance: seahaven.Instance) -> None:
    instance.call("create_user", handle="ada", display_name="Ada")
    room = instance.call("create_channel", name="ops")
    older = instance.call("post_message", channel_id=room.id, text="deploy finished")
    newer = instance.call("post_message", channel_id=room.id, text="deploy finished")
    assert _ids(instance.call("search_messages", query="deploy")) == [newer.id, older.id]


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_private_channels_you_are_not_in_are_never_searched(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup
) -> None:
    assert instance.call("search_messages", query="northwind").total == 0
    assert instance.call("search_messages", query="board meeting").total == 0
    refused("NOT_FOUND", "search_messages", query="northwind", channel_id=channel_id("leadership"))
    # sam is in #hiring-backend, so its private messages are searchable for him.
    hiring = instance.call("search_messages", query="candidate")
    assert hiring.total > 0
    assert {match.channel_name for match in hiring.matches} == {"hiring-backend"}


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "maya"})
def test_a_member_finds_what_the_private_channel_says(instance: seahaven.Instance) -> None:
    found = instance.call("search_messages", query="northwind")
    assert found.total == 1
    assert found.matches[0].channel_name == "leadership"
    assert "*Northwind*" in found.matches[0].snippet
    assert instance.call("search_messages", query="candidate").total == 0


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "tom"})
def test_public_and_archived_channels_are_searched_without_joining(
    instance: seahaven.Instance,
) -> None:
    flaky = instance.call("search_messages", query="flaky")
    assert flaky.total > 0
    assert {match.channel_name for match in flaky.matches} == {"engineering"}
    lisbon = instance.call("search_messages", query="lisbon")
    assert [match.channel_name for match in lisbon.matches] == ["offsite-2026"]


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_channel_and_author_filters(
    instance: seahaven.Instance, refused: Refused, channel_id: Lookup, user_id: Lookup
) -> None:
    everywhere = instance.call("search_messages", query="webhook")
    in_billing = instance.call("search_messages", query="webhook", channel_id=channel_id("billing"))
    assert 0 < in_billing.total < everywhere.total
    assert {match.channel_name for match in in_billing.matches} == {"billing"}
    by_jonas = instance.call("search_messages", query="webhook", user_id=user_id("jonas"))
    assert by_jonas.total > 0
    assert {match.message.user_handle for match in by_jonas.matches} == {"jonas"}
    refused("NOT_FOUND", "search_messages", query="webhook", user_id="U0000000000")


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_phrases_prefixes_and_stemming(instance: seahaven.Instance) -> None:
    words = instance.call("search_messages", query="flaky tests")
    phrase = instance.call("search_messages", query='"flaky tests"')
    assert 0 < phrase.total < words.total
    # Words are stemmed before they are compared, inside a phrase too.
    assert all("flaky test" in m.message.text.lower() for m in phrase.matches)
    stemmed = [m.message.text for m in instance.call("search_messages", query="invoicing").matches]
    assert any("invoicing" in text for text in stemmed)
    assert any("invoicing" not in text and "invoice" in text for text in stemmed)
    prefix = instance.call("search_messages", query="postmort*")
    assert prefix.total >= 2
    assert all("postmortem" in m.message.text.lower() for m in prefix.matches)


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_query_syntax_is_never_an_error(instance: seahaven.Instance, refused: Refused) -> None:
    for query in ['NEAR(flaky "', "flaky AND OR NOT", "text:flaky", "(flaky)", "flaky^"]:
        instance.call("search_messages", query=query)
    refused("INVALID_INPUT", "search_messages", query="!!! ???")
    refused("INVALID_INPUT", "search_messages", query="")


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_deleted_and_edited_messages_are_searched_as_they_are_now(
    instance: seahaven.Instance, channel_id: Lookup
) -> None:
    deleted = instance.inspect().one("SELECT id FROM messages WHERE deleted_at IS NOT NULL")
    assert deleted is not None
    assert str(deleted["id"]) not in _ids(instance.call("search_messages", query="staging"))
    posted = instance.call("post_message", channel_id=channel_id("random"), text="zebra crossing")
    instance.call("edit_message", message_id=posted.id, text="giraffe crossing")
    assert instance.call("search_messages", query="zebra").total == 0
    assert _ids(instance.call("search_messages", query="giraffe")) == [posted.id]
    instance.call("delete_message", message_id=posted.id)
    assert instance.call("search_messages", query="giraffe").total == 0


@pytest.mark.seahaven(fixture="team_workspace", startup={"user": "sam"})
def test_search_pages_cover_every_match_exactly_once(
    instance: seahaven.Instance, refused: Refused
) -> None:
    first = instance.call("search_messages", query="the", limit=7)
    assert first.total > 14
    seen = _ids(first)
    cursor = first.next_cursor
    while cursor is not None:
        page = instance.call("search_messages", query="the", limit=7, cursor=cursor)
        seen += _ids(page)
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == first.total
    everything = instance.call("search_messages", query="the", limit=200)
    assert seen == _ids(everything)
    assert first.next_cursor is not None
    refused("INVALID_INPUT", "search_messages", query="thee", cursor=first.next_cursor)
