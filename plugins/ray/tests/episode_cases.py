"""Episodes of the company world for the tests, and the policies that drive some of them.

This module is imported by the tests and, through ``PYTHONPATH``, by the Ray
workers, which unpickle the policies by reference to it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import seahaven_ray
from seahaven_ray import CallOutcome, Episode, ToolCall

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
ACME_SCRIPT: list[dict[str, Any]] = json.loads(
    (ROOT / "examples" / "acme_episode.json").read_text(encoding="utf-8")
)
PRINCIPALS = ("dana", "carla", "tom", "priya", "sam", "marcus")
"""Staff of the acme fixture by handle: admins, finance, hr, an employee; some calls refuse."""


def principal(handle: str) -> dict[str, str]:
    """The startup keywords that make an instance act as someone of the acme fixture."""
    return {"principal": f"{handle}@acme-robotics.test"}


def scripted(number: int) -> Episode:
    """A scripted episode: the README's acme script, varied by seed, principal, amount and clock."""
    calls = [dict(call) for call in ACME_SCRIPT]
    invoice = dict(calls[1]["arguments"])
    invoice["amount"] = 1000 + 37 * number
    calls[1] = {"tool": "invoice_customer", "arguments": invoice}
    if number % 5 == 0:
        calls.append({"tool": "no_such_tool", "arguments": {}})
    return Episode(
        episode_id=f"scripted-{number}",
        world="company",
        fixture="acme",
        seed=number,
        clock_mode="fixed" if number % 3 == 0 else "tick",
        now="2026-06-02T08:00:00.000Z" if number % 4 == 0 else None,
        setup_sql=(
            "UPDATE staff SET title = 'Chief Executive' WHERE email = 'dana@acme-robotics.test'"
            if number % 7 == 0
            else None
        ),
        startup=principal(PRINCIPALS[number % len(PRINCIPALS)]),
        calls=[ToolCall.model_validate(call) for call in calls],
    )


class ExpenseReviewer:
    """A policy: who am I, what is waiting, then approve the small expenses and reject the rest.

    It decides from the observations alone, so the same observations give the
    same calls wherever it runs.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(self, tools: list[dict[str, Any]], seen: list[CallOutcome]) -> ToolCall | None:
        names = {tool["name"] for tool in tools}
        assert {"whoami", "list_expenses", "approve_expense"} <= names
        if not seen:
            return ToolCall(tool="whoami")
        if len(seen) == 1:
            return ToolCall(tool="list_expenses", arguments={"status": "submitted", "limit": 10})
        listing = seen[1]
        if listing.error is not None or seen[0].error is not None:
            return None
        me = seen[0].result["id"]
        waiting = [item for item in listing.result["expenses"] if item["submitted_by"] != me]
        decided = len(seen) - 2
        if decided >= len(waiting):
            return None
        expense = waiting[decided]
        if expense["amount"] <= self.limit:
            return ToolCall(
                tool="approve_expense", arguments={"expense_id": expense["id"], "note": "ok"}
            )
        return ToolCall(
            tool="reject_expense",
            arguments={"expense_id": expense["id"], "reason": f"over {self.limit}"},
        )


def policy_driven(number: int) -> Episode:
    """A policy-driven episode: an ExpenseReviewer with a limit and a principal set by number."""
    return Episode(
        episode_id=f"policy-{number}",
        world="company",
        fixture="acme",
        seed=1000 + number,
        clock_mode="tick",
        startup=principal(PRINCIPALS[number % len(PRINCIPALS)]),
        policy=ExpenseReviewer(limit=5000 + 4000 * (number % 12)),
    )


def mixed(count: int) -> list[Episode]:
    """``count`` episodes, scripted and policy-driven in turn."""
    return [scripted(n) if n % 2 == 0 else policy_driven(n) for n in range(count)]


class BlockOnce:
    """An ExpenseReviewer whose first attempt announces its actor, then waits to be killed.

    The first time it is called anywhere (``marker`` does not exist yet) it
    writes the name of the Ray actor running it to ``marker`` and waits, at
    most ``patience`` seconds, for that actor to die. Every later attempt finds
    the marker and reviews expenses as usual.
    """

    def __init__(self, marker: str, patience: float = 120.0) -> None:
        self.marker = marker
        self.patience = patience
        self.reviewer = ExpenseReviewer(limit=20000)

    def __call__(self, tools: list[dict[str, Any]], seen: list[CallOutcome]) -> ToolCall | None:
        marker = Path(self.marker)
        if not seen and not marker.exists():
            import ray

            name = ray.get_runtime_context().get_actor_name() or ""
            partial = marker.with_suffix(".partial")
            partial.write_text(f"{name}\n{os.getpid()}\n", encoding="utf-8")
            partial.rename(marker)
            deadline = time.monotonic() + self.patience
            while time.monotonic() < deadline:
                time.sleep(0.05)
        return self.reviewer(tools, seen)


class Stalls:
    """A policy that thinks for ``seconds`` before its first decision: a hang, for a timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, tools: list[dict[str, Any]], seen: list[CallOutcome]) -> ToolCall | None:
        time.sleep(self.seconds)
        return None


class Explodes:
    """A policy that raises on its second decision."""

    def __call__(self, tools: list[dict[str, Any]], seen: list[CallOutcome]) -> ToolCall | None:
        if seen:
            raise RuntimeError("the policy lost its train of thought")
        return ToolCall(tool="whoami")


def comparable(result: seahaven_ray.EpisodeResult) -> dict[str, Any]:
    """What must be the same wherever an episode ran: status, error, calls, state document.

    Timings and the worker are left out; the state document is whole, its
    ``episode_id`` the episode's own.
    """
    dumped = result.model_dump(mode="json")
    return {key: dumped[key] for key in ("episode_id", "status", "error", "calls", "state")}
