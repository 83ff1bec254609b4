"""Comments through real calls: who wrote them, their order, and the trail they leave."""

from __future__ import annotations

import json

import pytest
from conftest import Lookup, Refused, events

import seahaven

pytestmark = pytest.mark.seahaven(fixture="small_startup", clock_mode="fixed")


def test_add_comment_writes_the_comment_and_its_trail(
    instance: seahaven.Instance, issue_id: Lookup
) -> None:
    key = issue_id("ENG-12")
    made = instance.call("add_comment", issue_id=key, body="Fixed on staging.", actor_id="u_3")
    assert made["author_id"] == "u_3" and made["issue_id"] == key
    trail = events(instance, key, "2026-06-01T09:00:00.000Z")
    assert [(event["kind"], event["actor_id"]) for event in trail] == [("comment", "u_3")]
    assert json.loads(trail[0]["payload"]) == {"comment_id": made["id"]}


def test_add_comment_refuses_what_it_cannot_use(refused: Refused, issue_id: Lookup) -> None:
    refused("NOT_FOUND", "add_comment", issue_id="nope", body="hello")
    refused("NOT_FOUND", "add_comment", issue_id=issue_id("ENG-1"), body="hi", actor_id="u_9")
    refused("INVALID_INPUT", "add_comment", issue_id=issue_id("ENG-1"), body="   ")


def test_comments_are_listed_oldest_first_and_paged(
    instance: seahaven.Instance, refused: Refused
) -> None:
    busiest = instance.inspect().one(
        "SELECT issue_id, count(*) AS n FROM comments GROUP BY issue_id ORDER BY n DESC, "
        "issue_id LIMIT 1"
    )
    assert busiest is not None and busiest["n"] >= 3
    seen = []
    cursor = None
    while True:
        arguments = {"issue_id": busiest["issue_id"], "limit": 2}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = instance.call("list_comments", **arguments)
        seen.extend(page["comments"])
        if not page["has_next"]:
            break
        cursor = page["next_cursor"]
    assert len(seen) == busiest["n"] == len({comment["id"] for comment in seen})
    order = [(comment["created_at"], comment["id"]) for comment in seen]
    assert order == sorted(order)
    refused("NOT_FOUND", "list_comments", issue_id="nope")
