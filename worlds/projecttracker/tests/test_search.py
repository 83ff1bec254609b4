"""search_issues: FTS5 ranking, snippets, filters, archived issues, paging and bad syntax."""

from __future__ import annotations

import pytest
from conftest import Lookup, Refused

import seahaven

pytestmark = pytest.mark.seahaven(fixture="agency", seed=7)


def test_best_match_first_with_a_score_and_a_snippet(instance: seahaven.Instance) -> None:
    found = instance.call("search_issues", query="billing", limit=5)
    assert sorted(found) == ["has_next", "issues", "next_cursor"]
    matches = found["issues"]
    assert len(matches) == 5 and found["has_next"] is True
    scores = [match["score"] for match in matches]
    assert scores == sorted(scores, reverse=True)
    assert all("**" in match["snippet"] for match in matches)
    assert all("billing" in match["snippet"].lower() for match in matches)


def test_every_match_is_found_once_across_the_pages(instance: seahaven.Instance) -> None:
    expected = instance.inspect().one(
        "SELECT count(*) AS n FROM issues_fts WHERE issues_fts MATCH 'billing'"
    )
    assert expected is not None
    seen: list[str] = []
    cursor = None
    while True:
        arguments: dict[str, object] = {"query": "billing", "limit": 7}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = instance.call("search_issues", **arguments)
        seen.extend(match["id"] for match in page["issues"])
        if not page["has_next"]:
            break
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == expected["n"] > 7


def test_fts5_syntax_is_the_agents_to_use(instance: seahaven.Instance) -> None:
    phrase = instance.call("search_issues", query='"billing address"')["issues"]
    assert phrase and all("billing address" in match["title"].lower() for match in phrase)
    titles = instance.call("search_issues", query="title:checkout", limit=50)["issues"]
    assert titles and all("checkout" in match["title"].lower() for match in titles)
    prefix = instance.call("search_issues", query="reconcil*")["issues"]
    assert prefix


def test_filters_narrow_the_search(instance: seahaven.Instance, team_id: Lookup) -> None:
    cs = team_id("CS")
    in_cs = instance.call("search_issues", query="billing", team_id=cs, limit=50)["issues"]
    assert in_cs and {match["team_id"] for match in in_cs} == {cs}
    done = instance.call("search_issues", query="billing", status="done", limit=50)["issues"]
    assert done and {match["status"] for match in done} == {"done"}


def test_archived_issues_are_still_found(instance: seahaven.Instance) -> None:
    archived = instance.inspect().one(
        "SELECT key, title FROM issues WHERE archived_at IS NOT NULL ORDER BY key LIMIT 1"
    )
    assert archived is not None
    words = " ".join(f'"{word}"' for word in str(archived["title"]).replace(":", " ").split()[:4])
    found = instance.call("search_issues", query=words, limit=50)["issues"]
    assert archived["key"] in {match["key"] for match in found}


def test_a_query_fts5_cannot_read_is_invalid_input_on_query(refused: Refused) -> None:
    error = refused("INVALID_INPUT", "search_issues", query="billing AND (")
    [violation] = error.details["violations"] if error.details else [None]
    assert violation is not None and violation["field"] == "query"
    assert "syntax error" in violation["problem"]
    refused("INVALID_INPUT", "search_issues", query="   ")


def test_a_search_cursor_continues_only_its_own_search(
    instance: seahaven.Instance, refused: Refused
) -> None:
    cursor = instance.call("search_issues", query="billing", limit=2)["next_cursor"]
    refused("INVALID_INPUT", "search_issues", query="checkout", limit=2, cursor=cursor)
    refused("INVALID_INPUT", "list_issues", cursor=cursor)
