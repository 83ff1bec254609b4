"""Scenarios and packs: the model, its content hash, YAML packs, and finding packs by name."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from grading_worlds import make_shop, question_scenario, ship_scenario, shop_pack
from world_packages import fresh_module, on_sys_path, write_dist_info, write_module

import seahaven
from seahaven import grading
from seahaven.scenarios import (
    Scenario,
    ScenarioSet,
    Start,
    find_scenario,
    load_pack,
    pack_specs,
    refresh_packs,
    split_reference,
)

ROOT = Path(__file__).resolve().parent


# --- the model --------------------------------------------------------------------------------


def test_a_scenario_reads_its_grader_from_data_and_keeps_its_spec() -> None:
    scenario = ship_scenario("shop")
    assert isinstance(scenario.grader, grading.Grader)
    data = scenario.to_data()
    assert data["world"] == "shop"
    assert data["grader"]["all_of"][0] == {
        "changed": {"table": "orders", "where": {"id": "o1"}, "to": {"status": "shipped"}}
    }
    assert Scenario.model_validate(data).hash == scenario.hash


def test_a_start_canonicalises_now_and_maps_to_instance_options() -> None:
    from datetime import UTC, datetime

    start = Start(now=datetime(2026, 5, 4, 9, tzinfo=UTC), clock_mode="tick", fixture="acme")
    assert start.now == "2026-05-04T09:00:00.000Z"
    assert start.instance_options(seed=9) == {
        "fixture": "acme",
        "seed": 9,
        "now": "2026-05-04T09:00:00.000Z",
        "clock_mode": "tick",
    }
    assert Start(seed=3, startup={"principal": "x"}).instance_options() == {
        "seed": 3,
        "startup": {"principal": "x"},
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "Ship Ada"}, "must be 1 to 100 lower-case letters"),
        ({"id": "a/b"}, "must be 1 to 100 lower-case letters"),
        ({"instructions": ""}, "instructions"),
        ({"budget": 0}, "budget"),
        ({"budget": True}, "budget is a whole number"),
        ({"start": {"clock_mode": "sideways"}}, "clock"),
        ({"start": {"now": "yesterday"}}, "now"),
        ({"start": {"seed": "7"}}, "seed is a whole number"),
        ({"start": {"fixtures": "acme"}}, "fixtures"),
        ({"grader": {"exists": {}}}, "exists needs table"),
        ({"tags": "a"}, "tags is a list"),
        (
            {"solution": [{"tool": "submit", "arguments": {"answer": "x"}}, {"tool": "cancel"}]},
            "submits its answer last",
        ),
        ({"solution": [{"tool": "submit", "arguments": {"text": "x"}}]}, "arguments: {answer"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_bad_scenario_is_refused_naming_the_field(
    changes: dict[str, object], message: str
) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=message):
        ship_scenario("shop", **changes)


def test_the_hash_is_the_same_in_another_process_and_changes_with_the_task() -> None:
    here = ship_scenario("shop").hash
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from grading_worlds import ship_scenario
        print(ship_scenario("shop").hash)
        """
    )
    there = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout.strip()
    assert there == here
    assert len(here) == 64
    assert ship_scenario("shop", budget=6).hash != here
    assert ship_scenario("shop", instructions="Ship it.").hash != here
    assert ship_scenario("shop", grader={"submitted": None}).hash != here
    assert ship_scenario("shop", start={"seed": 1}).hash != here
    # The world counts by name, whether it was given as a name or as the World.
    assert ship_scenario(make_shop()).hash == here


def test_the_hash_is_kept_and_a_copy_with_changes_has_its_own() -> None:
    import pickle

    scenario = ship_scenario("shop")
    unhashed = scenario.model_copy()
    first = scenario.hash
    assert scenario.hash is first  # worked out once
    changed = scenario.model_copy(update={"budget": 6})
    assert changed.hash != first
    assert changed.hash == ship_scenario("shop", budget=6).hash
    assert scenario.model_copy().hash == first
    assert scenario.model_copy(update={"budget": 6}, deep=True).hash == changed.hash
    assert pickle.loads(pickle.dumps(scenario)).hash == first
    # A scenario with its hash worked out equals its copy without.
    assert "hash" not in unhashed.__dict__
    assert scenario == unhashed


def test_a_python_graders_hash_follows_its_source(tmp_path: Path) -> None:
    module = fresh_module("graders")
    with on_sys_path(tmp_path):
        path = write_module(tmp_path, module, "def check(episode):\n    return True\n")
        first = ship_scenario("shop", grader={"python": f"{module}:check"})
        assert first.grader.spec()["source_sha256"]
        path.write_text("def check(episode):\n    return False\n", encoding="utf-8")
        sys.modules.pop(module)
        second = ship_scenario("shop", grader={"python": f"{module}:check"})
    assert first.hash != second.hash


# --- packs ------------------------------------------------------------------------------------


def test_a_pack_holds_scenarios_in_order_with_splits() -> None:
    pack = shop_pack(make_shop())
    assert [scenario.id for scenario in pack] == ["ship-ada", "ada-total"]
    assert [scenario.id for scenario in pack.split("test")] == ["ada-total"]
    assert [scenario.id for scenario in pack.split(None)] == ["ship-ada", "ada-total"]
    assert pack.split_of("ship-ada") == ["train"]
    assert "ship-ada" in pack and len(pack) == 2
    with pytest.raises(seahaven.WorldBug, match="has no split 'dev' \\(its splits: train, test\\)"):
        pack.split("dev")
    with pytest.raises(seahaven.WorldBug, match="has no scenario 'nope'"):
        pack.get("nope")


def test_a_pack_refuses_duplicates_and_unknown_split_members() -> None:
    shop = make_shop()
    with pytest.raises(seahaven.WorldBug, match="two scenarios with the id 'ship-ada'"):
        ScenarioSet("shop", "1", [ship_scenario(shop), ship_scenario(shop)])
    with pytest.raises(seahaven.WorldBug, match="names 'ghost', which the pack does not hold"):
        ScenarioSet("shop", "1", [ship_scenario(shop)], splits={"test": ["ghost"]})
    with pytest.raises(seahaven.WorldBug, match="pack name 'Shop'"):
        ScenarioSet("Shop", "1", [])


def write_pack(folder: Path, scenarios: str, header: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(
        header
        or textwrap.dedent(
            """
            name: tiny
            version: "1.2"
            description: Tiny tasks.
            world: shop
            defaults:
              budget: 4
              tags: [tiny]
              start:
                now: 2026-05-04T09:00:00.000Z
                clock_mode: fixed
            splits:
              train: [ship]
              test: [ask]
            """
        ),
        encoding="utf-8",
    )
    (folder / "tasks.yaml").write_text(textwrap.dedent(scenarios), encoding="utf-8")
    return folder


TASKS = """
- id: ship
  instructions: Ship order o1.
  start: {setup_sql: "INSERT INTO orders VALUES ('o1', 'ada', 1, 'open', 'x', '[]')"}
  grader:
    changed: {table: orders, where: {id: o1}, to: {status: shipped}}
  solution:
    - {tool: set_status, arguments: {order_id: o1, status: shipped}}
- id: ask
  instructions: Say hello.
  budget: 2
  tags: [words]
  grader: {answer: {equals: hello}}
  solution: [{tool: submit, arguments: {answer: hello}}]
"""


def test_a_yaml_pack_loads_with_defaults(tmp_path: Path) -> None:
    pack = ScenarioSet.from_directory(write_pack(tmp_path / "tiny", TASKS))
    assert (pack.name, pack.version, pack.description) == ("tiny", "1.2", "Tiny tasks.")
    ship, ask = pack.scenarios
    assert ship.world == "shop" and ship.budget == 4 and ship.tags == ("tiny",)
    assert ship.start.now == "2026-05-04T09:00:00.000Z"  # read by YAML as a datetime
    assert ship.start.clock_mode == "fixed" and ship.start.setup_sql is not None
    assert ask.budget == 2 and ask.tags == ("tiny", "words")
    assert pack.splits == {"train": ("ship",), "test": ("ask",)}


@pytest.mark.parametrize(
    ("tasks", "header", "message"),
    [
        ("- id: ship\n  instructions: x\n", None, r"tasks.yaml\[0\] \(scenario 'ship'\): grader"),
        ("- [1, 2]\n", None, "a scenario is a mapping"),
        ("- id: ship\n  grader: {exists: {table: t}}\n  instructions: [\n", None, "not valid YAML"),
        (TASKS, "name: tiny\nversion: 1\n", "needs a name and a version"),
        (
            TASKS,
            "name: tiny\nversion: '1'\nworld: shop\nsplits: {test: [nope]}\n",
            "split 'test' names 'nope'",
        ),
        (TASKS, "name: tiny\nversion: '1'\nowner: me\n", "does not take owner"),
    ],
)
def test_a_broken_yaml_pack_names_the_file_and_the_problem(
    tmp_path: Path, tasks: str, header: str | None, message: str
) -> None:
    folder = write_pack(tmp_path / "tiny", tasks, header)
    with pytest.raises(seahaven.WorldBug, match=message):
        ScenarioSet.from_directory(folder)


def test_a_folder_without_pack_yaml_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(seahaven.WorldBug, match=r"has no pack\.yaml"):
        ScenarioSet.from_directory(tmp_path)


POLICY_HEADER = """\
name: tiny
version: "1.2"
world: shop
policy_file: policy.md
"""


def test_a_pack_reads_its_policy_document_from_policy_file(tmp_path: Path) -> None:
    folder = write_pack(tmp_path / "tiny", TASKS, POLICY_HEADER)
    (folder / "policy.md").write_text("# Shop policy\n\nShip only paid orders.\n", encoding="utf-8")
    pack = ScenarioSet.from_directory(folder)
    assert pack.policy == "# Shop policy\n\nShip only paid orders.\n"
    # Without a policy a pack has none, and its hash is what it was: the policy counts only
    # when there is one, and then a change of its text is a change of the pack.
    plain = ScenarioSet.from_directory(
        write_pack(tmp_path / "plain", TASKS, POLICY_HEADER.replace("policy_file: policy.md\n", ""))
    )
    assert plain.policy is None
    same = ScenarioSet("tiny", "1.2", plain.scenarios, splits=plain.splits)
    assert plain.hash == same.hash
    assert ScenarioSet("tiny", "1.2", plain.scenarios, policy="Be kind.").hash != plain.hash
    assert pack.hash != plain.hash
    (folder / "policy.md").write_text("# Shop policy\n\nShip anything.\n", encoding="utf-8")
    assert ScenarioSet.from_directory(folder).hash != pack.hash


@pytest.mark.parametrize(
    ("line", "content", "message"),
    [
        ("policy_file: missing.md", None, "policy_file names missing.md, which is not a file"),
        (
            "policy_file: ../policy.md",
            "x",
            "policy_file is the name of a file in the pack's folder",
        ),
        ("policy_file: [policy.md]", "x", "policy_file is the name of a file in the pack's folder"),
        ("policy_file: policy.md", "  \n", "policy.md is empty"),
    ],
)
def test_a_policy_file_that_is_not_there_or_not_text_is_refused(
    tmp_path: Path, line: str, content: str | None, message: str
) -> None:
    header = POLICY_HEADER.replace("policy_file: policy.md", line)
    folder = write_pack(tmp_path / "tiny", TASKS, header)
    if content is not None:
        (folder / "policy.md").write_text(content, encoding="utf-8")
    with pytest.raises(seahaven.WorldBug, match=re.escape(message)):
        ScenarioSet.from_directory(folder)
    with pytest.raises(seahaven.WorldBug, match="policy is the text"):
        ScenarioSet("tiny", "1", [], policy="")


# --- finding packs by name --------------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "site"
    directory.mkdir()
    with on_sys_path(directory):
        refresh_packs()
        yield directory
    refresh_packs()


def publish_pack(site: Path, name: str, attribute: str = "pack") -> str:
    module = fresh_module(name)
    package = site / module
    write_pack(package / "scenarios", TASKS, None)
    # The pack's world is loaded as the pack is: it names the shop of its own package.
    (package / "scenarios" / "pack.yaml").write_text(
        f"name: {name}\nversion: '1.0'\nworld: {module}:shop\nsplits: {{train: [ship, ask]}}\n",
        encoding="utf-8",
    )
    (package / "__init__.py").write_text(
        "from grading_worlds import make_shop\n"
        "from seahaven.scenarios import ScenarioSet\n\n"
        "shop = make_shop()\n\n\n"
        "def pack():\n"
        "    return ScenarioSet.from_package(__name__)\n",
        encoding="utf-8",
    )
    write_dist_info(site, f"dist-{module}", scenarios={name: f"{module}:{attribute}"})
    return module


def test_an_installed_pack_is_found_by_name_without_importing_it(site: Path) -> None:
    module = publish_pack(site, "tinypack")
    refresh_packs()
    names = [spec.name for spec in pack_specs()]
    assert "tinypack" in names
    assert module not in sys.modules
    pack = load_pack("tinypack")
    assert [scenario.id for scenario in pack] == ["ship", "ask"]
    found_pack, scenario = find_scenario("tinypack/ask")
    assert found_pack is pack and scenario.id == "ask"
    # How another process (a Ray worker) finds the same pack again.
    assert pack.source == "tinypack"
    by_module = load_pack(f"{module}:pack")
    assert by_module.name == "tinypack" and by_module.source == f"{module}:pack"
    assert ScenarioSet("built", "1.0", []).source is None


def test_unknown_packs_and_references_say_what_exists(site: Path) -> None:
    publish_pack(site, "tinypack")
    refresh_packs()
    with pytest.raises(seahaven.WorldBug, match=r"no pack of scenarios is registered as 'nope'"):
        load_pack("nope")
    with pytest.raises(seahaven.WorldBug, match="has no scenario 'nope'"):
        find_scenario("tinypack/nope")
    for bad in ("tinypack", "a/b/c", "/x", "x/"):
        with pytest.raises(seahaven.WorldBug, match="pack/id"):
            split_reference(bad)


def test_a_pack_published_under_another_name_is_refused(site: Path) -> None:
    publish_pack(site, "tinypack")
    module = fresh_module("other")
    write_module(
        site,
        module,
        "from seahaven.scenarios import ScenarioSet\npack = ScenarioSet('elsewhere', '1', [])\n",
    )
    write_dist_info(site, f"dist-{module}", scenarios={"claimed": f"{module}:pack"})
    refresh_packs()
    with pytest.raises(seahaven.WorldBug, match="holds a pack named 'elsewhere'"):
        load_pack("claimed")


def test_question_scenario_has_an_answer_in_its_solution() -> None:
    scenario = question_scenario("shop")
    assert scenario.calls() == 1
    assert scenario.solution is not None and scenario.solution[-1].tool == "submit"
