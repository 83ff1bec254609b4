"""Helpers the airline world's tests share: the benchmark's data, rows, refusals, conversations."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest
from fixtures_src.source import DATA_VARIABLE, tau2_data

import seahaven
from seahaven.grading import Grade
from seahaven.scenarios import Scenario, Trial

CI = os.environ.get("CI", "").lower() == "true"


def data_or_skip() -> Path:
    """The benchmark's airline data folder; a skip naming where to put it (a failure under CI)."""
    folder = tau2_data("airline")
    if folder is None:
        message = (
            f"tau2-bench's data is not here: set {DATA_VARIABLE} to the folder holding "
            "airline/db.json (shared/data/tau2 beside the checkout)"
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


def converse(scenario: Scenario, last: str) -> Grade:
    """The scenario's reference conversation, its last message to the customer made ``last``.

    The customer ends the conversation on the question that closes every last message.
    """
    *steps, final = scenario.solution or ()
    assert final.tool == "message_user"
    with Trial(scenario, seed=1) as trial:
        for step in steps:
            with contextlib.suppress(seahaven.ToolError):
                trial.call(step.tool, **step.arguments)
        trial.call("message_user", text=f"{last} Is there anything else I can help you with?")
        assert trial.done and trial.grade is not None
        return trial.grade
