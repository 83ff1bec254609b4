"""Helpers shared by the chat world's tests. The instance itself comes from seahaven's plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import seahaven

Refused = Callable[..., seahaven.ToolError]
Lookup = Callable[[str], str]


@pytest.fixture
def refused(instance: seahaven.Instance) -> Refused:
    """Call a tool that must fail, check the error code, and return the error."""

    def call(code: str, tool: str, **arguments: Any) -> seahaven.ToolError:
        with pytest.raises(seahaven.ToolError) as raised:
            instance.call(tool, **arguments)
        assert raised.value.code == code, raised.value.to_dict()
        return raised.value

    return call


@pytest.fixture
def channel_id(instance: seahaven.Instance) -> Lookup:
    """A channel's id by name, read straight from the store (not through a tool)."""

    def lookup(name: str) -> str:
        row = instance.inspect().one("SELECT id FROM channels WHERE name = ?", name)
        assert row is not None, f"no channel #{name} in this instance"
        return str(row["id"])

    return lookup


@pytest.fixture
def user_id(instance: seahaven.Instance) -> Lookup:
    """A user's id by handle, read straight from the store (not through a tool)."""

    def lookup(handle: str) -> str:
        row = instance.inspect().one("SELECT id FROM users WHERE handle = ?", handle)
        assert row is not None, f"no user @{handle} in this instance"
        return str(row["id"])

    return lookup


@pytest.fixture
def last_call_log(instance: seahaven.Instance) -> Callable[[], list[seahaven.LogRecord]]:
    """The change-log records of the most recent call."""

    def records() -> list[seahaven.LogRecord]:
        latest = instance.call_count - 1
        return [record for record in instance.change_log() if record.i == latest]

    return records
