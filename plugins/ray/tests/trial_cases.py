"""A small pack of scenarios for the eval tests, and the policies they run with.

The pack's scenarios run on two worlds: ``world`` here (a shop of orders, whose
new orders get ids from the seeded stream, so every trial's seed shows in its
state) and the installed ``company`` world from its ``acme`` fixture. Its graders
cover assertions, collateral damage, solution replays, answers and a Python
function. This module is imported by the tests and, through ``PYTHONPATH``, by
the Ray workers, which import the pack (``trial_cases:pack``), the world
(``trial_cases:world``), the grader and the policies from it by reference.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import seahaven
from seahaven.evaluation import PolicySession, solution_policy
from seahaven.grading import Episode
from seahaven.scenarios import Scenario, ScenarioSet

world = seahaven.World(
    name="raytrial-shop",
    version="1.2.0",
    schema="""
    CREATE TABLE orders (
        id TEXT PRIMARY KEY,
        customer TEXT NOT NULL,
        total REAL NOT NULL,
        status TEXT NOT NULL
    ) STRICT;
    """,
    state_format="seahaven.state/1",
)


@world.tool
def place_order(ctx: seahaven.Ctx, customer: str, total: float) -> dict[str, Any]:
    """Place an order; answers it with its new id."""
    order = {"id": "o-" + ctx.ids.uuid()[:8], "customer": customer, "total": total}
    ctx.db.execute(
        "INSERT INTO orders (id, customer, total, status) VALUES (?, ?, ?, 'open')",
        order["id"],
        customer,
        total,
    )
    return order


@world.tool
def set_status(ctx: seahaven.Ctx, order_id: str, status: str) -> None:
    """Move an order to another status."""
    changed = ctx.db.execute("UPDATE orders SET status = ? WHERE id = ?", status, order_id)
    if changed.rowcount == 0:
        raise seahaven.ToolError("NOT_FOUND", f"no order {order_id}")


@world.tool
def total_for(ctx: seahaven.Ctx, customer: str) -> dict[str, float]:
    """The total of a customer's orders."""
    row = ctx.db.one(
        "SELECT coalesce(sum(total), 0) AS total FROM orders WHERE customer = ?", customer
    )
    assert row is not None
    return {"total": float(row["total"])}


@world.tool
def wait_for(ctx: seahaven.Ctx, path: str) -> bool:
    """Wait until ``path`` exists, two minutes at most; whether it appeared."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if Path(path).exists():
            return True
        time.sleep(0.05)
    return False


SHOP = "trial_cases:world"
SEED_ROWS = (
    "INSERT INTO orders VALUES ('o1', 'ada', 25, 'open'), ('o2', 'brian', 12.5, 'open'), "
    "('o3', 'ada', 40, 'shipped')"
)
SHOP_START: dict[str, Any] = {"setup_sql": SEED_ROWS, "clock_mode": "fixed"}
ACME_START: dict[str, Any] = {"fixture": "acme", "clock_mode": "fixed"}
INVOICE = {
    "customer_email": "ap@cyberdyne.test",
    "customer_name": "Cyberdyne Systems",
    "amount": 275000,
    "description": "Arm calibration, May",
    "card_token": "tok_visa",
}


def o2_is_closed(episode: Episode) -> float:
    """A Python grader: full marks when order o2 is closed, half when it is at least touched."""
    row = episode.end.one("SELECT status FROM orders WHERE id = 'o2'")
    if row is None:
        return 0.0
    return 1.0 if row["status"] == "closed" else 0.5 if row["status"] != "open" else 0.0


def scenarios(shop: str | seahaven.World = SHOP) -> list[Scenario]:
    """The pack's scenarios, on ``shop`` (the shop world, by reference or as the object)."""
    data: list[dict[str, Any]] = [
        dict(
            id="ship-o1",
            world=shop,
            instructions="Ship order o1, and touch nothing else.",
            start=SHOP_START,
            grader={
                "all_of": [
                    {
                        "changed": {
                            "table": "orders",
                            "where": {"id": "o1"},
                            "to": {"status": "shipped"},
                        }
                    },
                    {"nothing_else_changed": {"allow": ["orders"]}},
                    "matches_solution",
                ]
            },
            solution=[{"tool": "set_status", "arguments": {"order_id": "o1", "status": "shipped"}}],
            budget=4,
        ),
        dict(
            id="order-for-ada",
            world=shop,
            instructions="Place an order of 30 for Ada.",
            start=SHOP_START,
            grader={
                "weighted": {
                    "parts": [
                        {
                            "grader": {
                                "count": {
                                    "table": "orders",
                                    "where": {"customer": "ada"},
                                    "equals": 3,
                                }
                            }
                        },
                        {"grader": "matches_solution", "weight": 2},
                    ]
                }
            },
            solution=[{"tool": "place_order", "arguments": {"customer": "ada", "total": 30}}],
        ),
        dict(
            id="ada-total",
            world=shop,
            instructions="What is the total of Ada's orders? Submit the number.",
            start=SHOP_START,
            grader={
                "all_of": [{"answer": {"number": 65, "tolerance": 0.01}}, "nothing_else_changed"]
            },
            solution=[
                {"tool": "total_for", "arguments": {"customer": "ada"}},
                {"tool": "submit", "arguments": {"answer": "65.00"}},
            ],
            budget=3,
        ),
        dict(
            id="refuse-reopen",
            world=shop,
            instructions=(
                "Ada asks to reopen the shipped order o3. Shipped orders stay shipped: refuse."
            ),
            start=SHOP_START,
            grader={"all_of": [{"answer": {"pattern": "(?i)refus"}}, "nothing_else_changed"]},
            solution=[{"tool": "submit", "arguments": {"answer": "Refused: o3 has shipped."}}],
        ),
        dict(
            id="close-o2",
            world=shop,
            instructions="Close Brian's order o2.",
            start=SHOP_START,
            grader={"python": "trial_cases:o2_is_closed"},
            solution=[{"tool": "set_status", "arguments": {"order_id": "o2", "status": "closed"}}],
        ),
        dict(
            id="acme-invoice",
            world="company",
            instructions="Invoice Cyberdyne 2,750.00 for the arm calibration, by card.",
            start=ACME_START,
            grader="matches_solution",
            solution=[{"tool": "invoice_customer", "arguments": INVOICE}],
            budget=6,
        ),
        dict(
            id="acme-whoami",
            world="company",
            instructions="Which email address are you signed in as? Submit it.",
            start=ACME_START,
            grader={
                "all_of": [
                    {"answer": {"equals": "dana@acme-robotics.test"}},
                    "nothing_else_changed",
                ]
            },
            solution=[
                {"tool": "whoami", "arguments": {}},
                {"tool": "submit", "arguments": {"answer": "dana@acme-robotics.test"}},
            ],
            budget=3,
        ),
    ]
    return [Scenario.model_validate(item) for item in data]


SPLITS = {
    "train": ["ship-o1", "order-for-ada", "close-o2", "acme-invoice"],
    "test": ["ada-total", "refuse-reopen", "acme-whoami"],
}


def make_pack(
    name: str = "raytrials", shop: str | seahaven.World = SHOP, version: str = "1.0.0"
) -> ScenarioSet:
    """A fresh pack, built in Python (it has no ``source``, so a Ray runner pickles it)."""
    return ScenarioSet(name, version, scenarios(shop), splits=SPLITS, description="Eval tests.")


pack = make_pack()
"""The pack as ``trial_cases:pack``, for ``load_pack`` and ``seahaven eval``."""

INSTALLED = "raytrials-installed"
VERSION_ENV = "SEAHAVEN_TEST_PACK_VERSION"


def installed_pack() -> ScenarioSet:
    """The pack an installed distribution publishes as ``raytrials-installed``.

    Its version is ``$SEAHAVEN_TEST_PACK_VERSION`` (1.0.0 without it), so a test
    can give the driver another version of the pack than its workers have.
    """
    return make_pack(INSTALLED, version=os.environ.get(VERSION_ENV, "1.0.0"))


# --- policies ---------------------------------------------------------------------------------


def flaky_policy(session: PolicySession) -> None:
    """Plays the solution of every other scenario, and raises on the rest after one call."""
    if session.scenario.id in ("ship-o1", "ada-total", "acme-invoice"):
        solution_policy(session)
        return
    tools = [tool["name"] for tool in session.tools()]
    if "total_for" in tools:
        session.call("total_for", customer="brian")
    raise RuntimeError(f"lost the thread on {session.scenario.id}")


async def async_solution(session: PolicySession) -> None:
    """The reference solution, played by an ``async def`` policy that yields between calls."""
    for step in session.scenario.solution or ():
        await asyncio.sleep(0)
        if session.done:
            return
        if step.tool == "submit":
            session.submit(step.arguments["answer"])
            return
        with contextlib.suppress(seahaven.ToolError):
            session.call(step.tool, **step.arguments)


class Greedy:
    """A policy object: calls the first tool of the solution twice, then stops (by reference)."""

    def __init__(self, times: int = 2) -> None:
        self.times = times

    def __call__(self, session: PolicySession) -> None:
        for step in (session.scenario.solution or ())[:1]:
            if step.tool == "submit":
                session.submit(str(step.arguments["answer"]))
                return
            for _ in range(self.times):
                with contextlib.suppress(seahaven.ToolError):
                    session.call(step.tool, **step.arguments)


class Locked:
    """A policy that cannot be pickled: it holds a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, session: PolicySession) -> None:
        return None


GATE_ENV = "SEAHAVEN_TEST_GATE"
"""The environment variable naming the file ``gated_policy`` waits for."""
GATED = "close-o2"


def gated_policy(session: PolicySession) -> None:
    """The solution, but ``close-o2`` first waits for the file ``$SEAHAVEN_TEST_GATE`` names."""
    if session.scenario.id == GATED:
        session.call("wait_for", path=os.environ[GATE_ENV])
    solution_policy(session)


def dying_policy(session: PolicySession) -> None:
    """The solution, but the process playing scenario ``close-o2`` dies on the spot."""
    if session.scenario.id == GATED:
        os._exit(17)
    solution_policy(session)


class DiesOnce:
    """The solution, but the first process to play ``close-o2`` dies (and leaves ``marker``)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __call__(self, session: PolicySession) -> None:
        if session.scenario.id == GATED:
            try:
                with open(self.marker, "x", encoding="utf-8") as handle:
                    handle.write(str(os.getpid()))
            except FileExistsError:
                pass
            else:
                os._exit(17)
        solution_policy(session)


class Stalls:
    """The solution, but ``close-o2`` first waits (two minutes at most) for a file never made."""

    def __init__(self, never: str) -> None:
        self.never = never

    def __call__(self, session: PolicySession) -> None:
        if session.scenario.id == GATED:
            session.call("wait_for", path=self.never)
        solution_policy(session)


def summary_of(results_file: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """What must agree between runners, per (scenario, trial), from a results file."""
    found: dict[tuple[str, int], tuple[Any, ...]] = {}
    for line in results_file.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        key = (data["scenario"], data["trial"])
        assert key not in found, f"{key} is in {results_file} twice"
        found[key] = (data["score"], data["passed"], data["state_sha256"], data["seed"])
    return found
