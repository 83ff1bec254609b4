"""Helpers for ProjectTracker's tests. Every instance comes from Seahaven's pytest plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import seahaven

Refused = Callable[..., seahaven.ToolError]
Lookup = Callable[[str], str]


@pytest.fixture
def refused(instance: seahaven.Instance) -> Refused:
    """Call a tool that must fail with ``code``, and return the error for a closer look."""

    def call(code: str, tool: str, **arguments: Any) -> seahaven.ToolError:
        with pytest.raises(seahaven.ToolError) as raised:
            instance.call(tool, **arguments)
        assert raised.value.code == code, raised.value.to_dict()
        return raised.value

    return call


@pytest.fixture
def issue_id(instance: seahaven.Instance) -> Lookup:
    """An issue's id by its key, read from the store rather than through a tool."""

    def lookup(key: str) -> str:
        row = instance.inspect().one("SELECT id FROM issues WHERE key = ?", key)
        assert row is not None, f"no issue {key} in this instance"
        return str(row["id"])

    return lookup


@pytest.fixture
def team_id(instance: seahaven.Instance) -> Lookup:
    """A team's id by its key, read from the store."""

    def lookup(key: str) -> str:
        row = instance.inspect().one("SELECT id FROM teams WHERE key = ?", key)
        assert row is not None, f"no team {key} in this instance"
        return str(row["id"])

    return lookup


@pytest.fixture
def project_id(instance: seahaven.Instance) -> Lookup:
    """A project's id by its name, read from the store."""

    def lookup(name: str) -> str:
        row = instance.inspect().one("SELECT id FROM projects WHERE name = ?", name)
        assert row is not None, f"no project {name!r} in this instance"
        return str(row["id"])

    return lookup


def events(instance: seahaven.Instance, issue: str, since: str) -> list[dict[str, Any]]:
    """The audit trail of one issue from ``since`` on, in the order it happened."""
    return instance.inspect().rows(
        "SELECT kind, actor_id, payload FROM issue_events WHERE issue_id = ? AND created_at >= ? "
        "ORDER BY created_at, rowid",
        issue,
        since,
    )
