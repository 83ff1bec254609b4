"""``seahaven scenarios list|show|check`` and ``seahaven eval`` from the command line."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner
from world_packages import fresh_module, on_sys_path, write_dist_info

from seahaven import cli, registry
from seahaven.registry import plugins
from seahaven.scenarios import refresh_packs

runner = CliRunner()

SHOP = '''
import seahaven

world = seahaven.World(
    name="{name}",
    version="1.0.0",
    schema="CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def set_status(ctx: seahaven.Ctx, order_id: str, status: str) -> None:
    """Move an order to another status."""
    ctx.db.execute("UPDATE orders SET status = ? WHERE id = ?", status, order_id)
'''

PACK = """
name: {name}
version: "2.0"
description: Orders to ship.
world: {name}
defaults:
  start: {{setup_sql: "INSERT INTO orders VALUES ('o1', 'open'), ('o2', 'open')"}}
splits:
  train: [ship-o1]
  test: [ship-o2]
"""

TASKS = """
- id: ship-o1
  instructions: Ship order o1.
  grader:
    all_of:
      - changed: {table: orders, where: {id: o1}, to: {status: shipped}}
      - nothing_else_changed: {allow: [orders]}
  solution: [{tool: set_status, arguments: {order_id: o1, status: shipped}}]
- id: ship-o2
  instructions: Ship order o2.
  grader: {changed: {table: orders, where: {id: o2}, to: {status: shipped}}}
  solution: [{tool: set_status, arguments: {order_id: o2, status: shipped}}]
"""


def app() -> typer.Typer:
    return cli.build_app(plugins.make_plugin_manager(entry_points=False))


@pytest.fixture
def pack_name(tmp_path: Path) -> Iterator[str]:
    """An installed world distribution that publishes a world and a pack of the same name."""
    site = tmp_path / "site"
    site.mkdir()
    module = fresh_module("orders")
    name = module.replace("_", "-")
    package = site / module
    (package / "scenarios").mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(SHOP.format(name=name)) + "\n\ndef pack():\n"
        "    from seahaven.scenarios import ScenarioSet\n\n"
        "    return ScenarioSet.from_package(__name__)\n",
        encoding="utf-8",
    )
    (package / "scenarios" / "pack.yaml").write_text(PACK.format(name=name), encoding="utf-8")
    (package / "scenarios" / "tasks.yaml").write_text(TASKS, encoding="utf-8")
    write_dist_info(
        site,
        f"dist-{module}",
        worlds={name: f"{module}:world"},
        scenarios={name: f"{module}:pack"},
    )
    with on_sys_path(site):
        # The worlds too: a test that ran before may have built the registry without this one.
        registry.refresh()
        refresh_packs()
        yield name
    registry.refresh()
    refresh_packs()


def test_list_shows_installed_packs_then_a_packs_scenarios(pack_name: str) -> None:
    listed = runner.invoke(app(), ["scenarios", "list"])
    assert listed.exit_code == 0, listed.output
    assert f"{pack_name} 2.0: 2 scenarios (train 1, test 1) - Orders to ship." in listed.stdout
    one = runner.invoke(app(), ["scenarios", "list", pack_name, "--split", "test"])
    assert one.exit_code == 0
    assert one.stdout.split() == ["ship-o2", "test", "Ship", "order", "o2."]
    rows = json.loads(runner.invoke(app(), ["scenarios", "list", pack_name, "--json"]).stdout)
    assert [row["id"] for row in rows] == ["ship-o1", "ship-o2"]
    assert rows[0]["splits"] == ["train"] and rows[0]["solved"] is True


def test_list_keeps_the_scenarios_with_every_tag_given() -> None:
    rows = json.loads(runner.invoke(app(), ["scenarios", "list", "company", "--json"]).stdout)
    tagged = [row["id"] for row in rows if {"access", "trap"} <= set(row["tags"])]
    assert tagged and len(tagged) < len(rows)
    both = runner.invoke(
        app(), ["scenarios", "list", "company", "--tag", "access", "--tag", "trap"]
    )
    assert both.exit_code == 0, both.output
    assert [line.split()[0] for line in both.stdout.splitlines()] == tagged
    one = json.loads(
        runner.invoke(app(), ["scenarios", "list", "company", "--tag", "access", "--json"]).stdout
    )
    assert [row["id"] for row in one] == [row["id"] for row in rows if "access" in row["tags"]]
    unknown = runner.invoke(app(), ["scenarios", "list", "company", "--tag", "no-such-tag"])
    assert unknown.exit_code == 1
    assert "no scenario of pack 'company' has the tag 'no-such-tag'; its tags: " in unknown.stderr
    assert "access" in unknown.stderr.split("its tags: ")[1]
    packless = runner.invoke(app(), ["scenarios", "list", "--tag", "access"])
    assert packless.exit_code != 0 and "--tag needs a PACK" in packless.stderr


def test_show_prints_a_scenario_whole(pack_name: str) -> None:
    shown = runner.invoke(app(), ["scenarios", "show", f"{pack_name}/ship-o1", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["id"] == "ship-o1" and data["pack"] == pack_name and len(data["hash"]) == 64
    assert data["grader"]["all_of"][1] == {"nothing_else_changed": {"allow": ["orders"]}}
    text = runner.invoke(app(), ["scenarios", "show", f"{pack_name}/ship-o1"]).stdout
    assert text.startswith(f"# {pack_name}/ship-o1 (hash {data['hash'][:12]})")
    missing = runner.invoke(app(), ["scenarios", "show", f"{pack_name}/nope"])
    assert missing.exit_code == 1
    assert "has no scenario 'nope'" in missing.stderr


def test_check_passes_a_sound_pack(pack_name: str) -> None:
    checked = runner.invoke(app(), ["scenarios", "check", pack_name])
    assert checked.exit_code == 0, checked.output
    assert "ok    ship-o1" in checked.stdout
    assert f"all 2 scenarios of {pack_name} 2.0 are sound" in checked.stdout


def test_check_names_each_failing_scenario_and_exits_1(tmp_path: Path, pack_name: str) -> None:
    module = pack_name.replace("-", "_")
    tasks = Path(__import__(module).__file__).parent / "scenarios" / "tasks.yaml"
    tasks.write_text(TASKS.replace("to: {status: shipped}}}", "to: {status: lost}}}"))
    refresh_packs()
    checked = runner.invoke(app(), ["scenarios", "check", pack_name])
    assert checked.exit_code == 1
    assert "FAIL  ship-o2: its reference solution scores 0, not 1" in checked.stdout
    assert "1 scenario of 2 in" in checked.stderr and "failed: ship-o2" in checked.stderr


def test_eval_runs_trials_writes_results_and_summarises(tmp_path: Path, pack_name: str) -> None:
    out = tmp_path / "results.jsonl"
    argv = [
        "eval",
        pack_name,
        "--policy",
        "seahaven.evaluation:solution_policy",
        "--trials",
        "3",
        "--out",
        str(out),
    ]
    ran = runner.invoke(app(), argv)
    assert ran.exit_code == 0, ran.output
    assert "2 scenarios x 3 trials, 6 results" in ran.stdout
    assert "mean score 1.000" in ran.stdout
    assert len(out.read_text().splitlines()) == 6
    again = runner.invoke(app(), argv)
    assert again.exit_code == 1 and "pass --resume" in again.stderr
    resumed = runner.invoke(app(), [*argv, "--resume", "--json"])
    assert resumed.exit_code == 0
    assert json.loads(resumed.stdout)["results"] == 6
    assert len(out.read_text().splitlines()) == 6


def test_eval_refuses_a_policy_it_cannot_find(tmp_path: Path, pack_name: str) -> None:
    ran = runner.invoke(
        app(), ["eval", pack_name, "--policy", "nowhere:fn", "--out", str(tmp_path / "r")]
    )
    assert ran.exit_code == 1
    assert "--policy 'nowhere:fn': cannot import 'nowhere'" in ran.stderr


def test_eval_keeps_the_trials_stores_where_storage_says(tmp_path: Path, pack_name: str) -> None:
    argv = ["eval", pack_name, "--policy", "seahaven.evaluation:solution_policy", "--json"]
    results = {}
    for where in ("memory", "disk"):
        out = tmp_path / f"{where}.jsonl"
        ran = runner.invoke(app(), [*argv, "--out", str(out), "--storage", where])
        assert ran.exit_code == 0, ran.output
        results[where] = [
            (line["scenario"], line["score"], line["state_sha256"])
            for line in map(json.loads, out.read_text().splitlines())
        ]
    assert results["disk"] == results["memory"]
    tape = runner.invoke(app(), [*argv, "--out", str(tmp_path / "t"), "--storage", "tape"])
    assert tape.exit_code != 0
    assert "storage must be 'memory' or 'disk'" in tape.output
    served = runner.invoke(
        app(),
        [*argv, "--out", str(tmp_path / "s"), "--storage", "disk", "--url", "http://127.0.0.1:1"],
    )
    assert served.exit_code != 0
    assert "drop --storage with --url" in served.output
