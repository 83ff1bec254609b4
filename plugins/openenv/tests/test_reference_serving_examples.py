"""Conformance: the python examples of the reference's serving page run against our own worlds.

The page's examples are written against the reference's ``projecttracker``
world; here each runs against ``payments`` instead, on a real server. The
examples are read from the reference page at test time and never copied into
the project: each is taken as written, its world-specific names (fixture, tool
and field names) are swapped for the payments world's, and every swap must find
its text, so a change to the page fails this test rather than passing unseen.

``SEAHAVEN_REFERENCE_DIR`` points the test at another copy of the pages.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import payments_world
import pytest

import seahaven
from seahaven.openenv import serve

DEFAULT_REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "seahaven-0.6"
REFERENCE = Path(os.environ.get("SEAHAVEN_REFERENCE_DIR") or DEFAULT_REFERENCE)
PAGE = REFERENCE / "serving_and_openenv.md"
FENCE = re.compile(r"^```py[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
REFERENCE_URL = "http://127.0.0.1:8000"

pytestmark = pytest.mark.skipif(
    not PAGE.is_file(), reason=f"the reference pages are not at {REFERENCE}"
)


def blocks() -> list[str]:
    """Every ```py block of the serving page, in order."""
    return [match.group(1) for match in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]


def block_with(marker: str) -> str:
    """The one block containing ``marker``."""
    found = [block for block in blocks() if marker in block]
    assert len(found) == 1, f"expected one block with {marker!r}, found {len(found)}"
    return found[0]


def swap(source: str, *pairs: tuple[str, str]) -> str:
    """``source`` with each ``(old, new)`` replaced; every ``old`` must be there."""
    for old, new in pairs:
        assert old in source, f"the example no longer holds {old!r}"
        source = source.replace(old, new)
    return source


@pytest.fixture(scope="module")
def shop() -> Any:
    """A server of the payments world for the whole module."""
    with serve.running(payments_world.world) as server:
        yield server


@pytest.fixture(scope="module")
def first_customer() -> str:
    with payments_world.world.instance("small_shop") as inst:
        customer_id: str = inst.call("list_customers", limit=1).data[0].id
        return customer_id


def run(source: str, **names: Any) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "reference_example", **names}
    exec(compile(source, str(PAGE), "exec"), namespace)
    return namespace


def test_the_app_file(tmp_path: Path) -> None:
    source = swap(
        block_with("seahaven.openenv.app(world)"),
        ("from notes import", "from payments_world import"),
    )
    namespace = run(source)
    paths = set(namespace["app"].openapi()["paths"])
    assert {"/health", "/schema", "/metadata", "/reset", "/step", "/state", "/mcp"} <= paths


def test_driving_a_world_from_python(shop, first_customer, capsys) -> None:
    source = swap(
        block_with('env.call("get_issue", key="ENG-12")'),
        (REFERENCE_URL, shop.base_url),
        ('fixture="small_startup"', 'fixture="small_shop"'),
        (
            'env.call("get_issue", key="ENG-12")',
            f'env.call("get_customer", customer_id="{first_customer}")',
        ),
        ('observation.result["title"]', 'observation.result["name"]'),
        ('env.call("transition_issue", issue_id=', 'env.call("update_customer", customer_id='),
        ('status="done")', 'name="done")'),
    )
    run(source)
    out = capsys.readouterr().out
    printed = out.splitlines()
    # The tool listing, the customer's name, then the clock: the fixture's now plus two ticks.
    assert printed[-1] == "2026-06-01T09:00:02.000Z"
    assert printed[-2] == "Umar Farouk"
    with payments_world.world.instance() as inst:
        listed = [tool["name"] for tool in inst.tools()]
    assert all(f"{name} " in out for name in listed)


def test_driving_a_world_asynchronously(shop, capsys) -> None:
    source = swap(
        block_with("async def rollout"),
        (REFERENCE_URL, shop.base_url),
        ('fixture="agency"', 'fixture="small_shop"'),
        ('env.call("search_issues", query=scenario)', 'env.call("list_customers", limit=2)'),
    )
    run(source)
    assert "has_more" in capsys.readouterr().out


def test_the_world_declaration_publishes_its_description(tmp_path: Path) -> None:
    namespace = run(
        block_with('name="projecttracker"'), seahaven=seahaven, __package__="payments_world"
    )
    world = namespace["world"]
    with serve.running(world) as server:
        import json
        import urllib.request

        with urllib.request.urlopen(server.base_url + "/metadata", timeout=10) as response:
            metadata = json.loads(response.read())
    assert metadata["name"] == "projecttracker"
    assert metadata["description"].startswith("A Seahaven world: a fictional issue tracker")


def test_grading_a_run(shop) -> None:
    graded: list[Any] = []

    def run_agent(env: Any) -> None:
        env.call("create_customer", email="agent@example.com", name="Agent")

    def grade(state: Any) -> float:
        graded.append(state)
        inserts = [r for r in state.state["db"]["log"] if r["op"] == "insert"]
        return float(len(inserts))

    source = swap(
        block_with("reward = grade(env.state())"),
        (REFERENCE_URL, shop.base_url),
        ('fixture="small_startup"', 'fixture="small_shop"'),
    )
    namespace = run(source, run_agent=run_agent, grade=grade)
    assert namespace["reward"] == 1.0
    assert graded[0].model_dump(exclude={"step_count"})["call_count"] == 1


def test_choosing_the_format_per_episode(shop) -> None:
    class Step:
        def __init__(self, tool: str, **arguments: Any) -> None:
            self.tool, self.arguments = tool, arguments

    scenario = [
        Step("create_customer", email="one@example.com"),
        Step("get_balance"),
        Step("create_customer", email="two@example.com"),
    ]
    recorded: list[Any] = []
    source = swap(
        block_with("seahaven.state+last_step/1"),
        (REFERENCE_URL, shop.base_url),
        ('fixture="small_startup"', 'fixture="small_shop"'),
    )
    run(source, scenario=scenario, record=recorded.append)
    logs = [state.state["db"]["log"] for state in recorded]
    assert [len(log) for log in logs] == [1, 0, 1]
    assert logs[2][0]["after"]["email"] == "two@example.com"
    assert [log[0]["i"] for log in logs if log] == [0, 2]


def test_connecting_with_auto_env(shop, first_customer, capsys) -> None:
    source = swap(
        block_with("AutoEnv.from_hub"),
        (
            '"<owner>/<space>", skip_install=True',
            f'"owner/space", base_url="{shop.base_url}", skip_install=True',
        ),
        ('fixture="small_startup"', 'fixture="small_shop"'),
        (
            '"tool_name": "get_issue", "arguments": {"key": "ENG-12"}',
            f'"tool_name": "get_customer", "arguments": {{"customer_id": "{first_customer}"}}',
        ),
    )
    run(source)
    assert first_customer in capsys.readouterr().out


def test_every_block_is_exercised() -> None:
    markers = [
        "seahaven.openenv.app(world)",
        'env.call("get_issue", key="ENG-12")',
        "async def rollout",
        'name="projecttracker"',
        "reward = grade(env.state())",
        "seahaven.state+last_step/1",
        "AutoEnv.from_hub",
    ]
    assert len(blocks()) == len(markers)
    for marker in markers:
        block_with(marker)
