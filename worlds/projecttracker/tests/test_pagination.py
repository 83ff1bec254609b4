"""Keyset pagination: every list answers the same three fields, and a cursor fits one list."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Lookup, Refused

import seahaven

pytestmark = pytest.mark.seahaven(fixture="agency", seed=7)


def _walk(instance: seahaven.Instance, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        extra = {} if cursor is None else {"cursor": cursor}
        page = instance.call(tool, **arguments, **extra)
        assert len(page) == 3 and {"has_next", "next_cursor"} <= set(page)
        [name] = set(page) - {"has_next", "next_cursor"}
        items.extend(page[name])
        assert (page["next_cursor"] is None) == (not page["has_next"])
        if not page["has_next"]:
            return items
        cursor = page["next_cursor"]


def test_walking_every_issue_sees_each_once(instance: seahaven.Instance) -> None:
    walked = _walk(instance, "list_issues", limit=37)
    live = instance.inspect().one("SELECT count(*) AS n FROM issues WHERE archived_at IS NULL")
    assert live is not None
    assert len(walked) == len({issue["id"] for issue in walked}) == live["n"]
    order = [(issue["created_at"], issue["id"]) for issue in walked]
    assert order == sorted(order, reverse=True)


def test_a_row_inserted_in_front_does_not_shift_the_next_page(
    instance: seahaven.Instance, project_id: Lookup
) -> None:
    first = instance.call("list_issues", status="todo", limit=2)
    assert first["has_next"]
    project = project_id("Larkspur Foods storefront")
    # A newer issue sorts before the first page; the next page must not repeat anything.
    instance.call("create_issue", project_id=project, title="A new one", status="todo")
    second = instance.call("list_issues", status="todo", limit=2, cursor=first["next_cursor"])
    assert not {issue["id"] for issue in first["issues"]} & {
        issue["id"] for issue in second["issues"]
    }
    assert second["issues"][0]["created_at"] <= first["issues"][-1]["created_at"]


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("list_users", {}, "users"),
        ("list_teams", {}, "teams"),
        ("list_projects", {}, "projects"),
        ("list_labels", {}, "labels"),
    ],
)
def test_every_list_walks_to_its_end(
    instance: seahaven.Instance, tool: str, arguments: dict[str, Any], name: str
) -> None:
    walked = _walk(instance, tool, limit=2, **arguments)
    table = {"users": "users", "teams": "teams", "projects": "projects", "labels": "labels"}[name]
    total = instance.inspect().one(f"SELECT count(*) AS n FROM {table}")
    assert total is not None and len({item["id"] for item in walked}) == total["n"]


def test_a_cursor_is_refused_by_another_list_or_other_filters(
    instance: seahaven.Instance, refused: Refused, team_id: Lookup
) -> None:
    cursor = instance.call("list_issues", status="todo", limit=2)["next_cursor"]
    other_filters = refused("INVALID_INPUT", "list_issues", status="done", cursor=cursor)
    assert "same arguments" in other_filters.message
    refused("INVALID_INPUT", "list_projects", cursor=cursor)
    refused("INVALID_INPUT", "list_team_members", team_id=team_id("ENG"), cursor=cursor)
    garbled = refused("INVALID_INPUT", "list_issues", status="todo", cursor="not-a-cursor")
    assert "exactly as you got it" in garbled.message


def test_the_limit_is_bounded(refused: Refused) -> None:
    refused("INVALID_INPUT", "list_issues", limit=0)
    refused("INVALID_INPUT", "list_issues", limit=101)
