"""Helpers the telecom world's tests share: the benchmark's data, rows, refusals, setups."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fixtures_src.source import DATA_VARIABLE, tau2_data

import seahaven

CI = os.environ.get("CI", "").lower() == "true"

JOHN = {"name": "John Smith", "phone_number": "555-123-2002"}
"""The customer every benchmark task's phone belongs to (C1001, line L1002)."""


def data_or_skip() -> Path:
    """The benchmark's telecom data folder; a skip naming where to put it (a failure under CI)."""
    folder = tau2_data()
    if folder is None:
        message = (
            f"tau2-bench's data is not here: set {DATA_VARIABLE} to the folder holding "
            "telecom/db.toml (shared/data/tau2 beside the checkout)"
        )
        if CI:
            pytest.fail(message)
        pytest.skip(message)
    return folder


def rows(instance: seahaven.Instance, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Every row ``sql`` selects, read on the inspection connection."""
    return instance.inspect().rows(sql, *params)


def row(instance: seahaven.Instance, sql: str, *params: Any) -> dict[str, Any]:
    """The one row ``sql`` selects."""
    found = instance.inspect().one(sql, *params)
    assert found is not None, f"no row for {sql} {params}"
    return found


def refusal(instance: seahaven.Instance, tool: str, **arguments: Any) -> tuple[str, str]:
    """Call ``tool`` expecting a refusal, and return its code and message."""
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call(tool, **arguments)
    return raised.value.code, raised.value.message


def action(side: str, function: str, /, **arguments: Any) -> dict[str, Any]:
    """One of a task's initialization actions, in the benchmark's form."""
    return {"env_type": side, "func_name": function, "arguments": arguments}


def johns_phone(*actions: dict[str, Any]) -> dict[str, Any]:
    """Startup keywords: the phone is John's (so it follows line L1002), then ``actions``."""
    return {"initialization_actions": [action("user", "set_user_info", **JOHN), *actions]}
