"""``seahaven worlds list`` and ``seahaven worlds show``, through Typer's test runner.

The environment may have other worlds installed (the monorepo's own, say), so
these tests look for their own rows and never assume theirs are the only ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner
from world_packages import (
    NOW,
    composite,
    fresh_module,
    on_sys_path,
    write_dist_info,
    write_module,
    write_world,
)

import seahaven
from seahaven import cli
from seahaven.registry import plugins
from seahaven.registry.discovery import import_world

runner = CliRunner()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` that plays the part of site-packages."""
    directory = tmp_path / "site"
    directory.mkdir()
    with on_sys_path(directory):
        yield directory


def installed_app(*extra_plugins: object) -> typer.Typer:
    """The command line over what is installed now, plus ``extra_plugins``."""
    manager = plugins.make_plugin_manager()
    for number, plugin in enumerate(extra_plugins):
        manager.register(plugin, name=f"extra-{number}")
    return cli.build_app(manager)


def rows(stdout: str) -> dict[str, list[str]]:
    """``worlds list`` output as cells by world name (columns are two or more spaces apart)."""
    import re

    lines = stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == [
        "NAME",
        "VERSION",
        "DISTRIBUTION",
        "TOOLS",
        "FIXTURES",
        "ADDS",
    ]
    return {cells[0]: cells for cells in (re.split(r"\s{2,}", line) for line in lines[1:])}


def freeze_one(spec: str, fixture_id: str) -> None:
    world, _, _ = import_world(spec)
    with world.instance(now=NOW, clock_mode="fixed") as instance:
        instance.freeze(fixture_id, f"The {fixture_id} fixture.")


class ProvidesWorlds:
    """A throwaway plugin publishing worlds only through the hook."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.pairs = list(pairs)

    @seahaven.hookimpl
    def seahaven_worlds(self) -> list[tuple[str, str]]:
        return self.pairs


def assert_only_unrelated_problems(stderr: str, exit_code: int, *ours: str) -> None:
    """Nothing reported names our worlds, and the exit status is 1 exactly when something is."""
    for line in stderr.splitlines():
        assert line.startswith(("error: ", "warning: ")), line
        assert not any(name in line for name in ours), line
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert exit_code == (1 if errors else 0)


# --- worlds list ---------------------------------------------------------------------------------


def test_list_shows_entry_point_and_plugin_worlds_side_by_side(site: Path, tmp_path: Path) -> None:
    modules = composite(site, tmp_path / "fixtures")
    company_name = modules["company"].replace("_", "-")
    write_dist_info(
        site,
        f"seahaven-world-{company_name}",
        "7.0.0",
        worlds={company_name: f"{modules['company']}:world"},
        requires=[f"seahaven=={seahaven.__version__}"],
    )
    freeze_one(f"{modules['company']}:world", "acme")
    freeze_one(f"{modules['company']}:world", "empty")
    hook_only = fresh_module("hooked")
    write_world(site, hook_only, name="hooked")
    hook_name = hook_only.replace("_", "-")

    result = runner.invoke(
        installed_app(ProvidesWorlds((hook_name, f"{hook_only}:world"))), ["worlds", "list"]
    )

    assert_only_unrelated_problems(result.stderr, result.exit_code, company_name, hook_name)
    found = rows(result.stdout)
    assert found[company_name] == [
        company_name,
        "3.1.0",
        f"seahaven-world-{company_name} 7.0.0",
        "4",
        "2",
        "payments, chat, eu_payments (payments)",
    ]
    assert found[hook_name] == [hook_name, "1.0.0", "plugin extra-0", "1", "0", "-"]


def test_list_as_json(site: Path, tmp_path: Path) -> None:
    modules = composite(site, tmp_path / "fixtures")
    name = modules["company"].replace("_", "-")
    write_dist_info(site, f"dist-{name}", "7.0.0", worlds={name: f"{modules['company']}:world"})

    result = runner.invoke(installed_app(), ["worlds", "list", "--json"])

    assert_only_unrelated_problems(result.stderr, result.exit_code, name)
    listed = {item["name"]: item for item in json.loads(result.stdout)}
    assert listed[name] == {
        "name": name,
        "value": f"{modules['company']}:world",
        "version": "3.1.0",
        "distribution": f"dist-{name}",
        "distribution_version": "7.0.0",
        "provider": "entry point",
        "tools": 4,
        "fixtures": 0,
        "adds": [
            {"name": "payments", "world": "payments", "version": "1.0.0"},
            {"name": "chat", "world": "chat", "version": "1.0.0"},
            {"name": "eu_payments", "world": "payments", "version": "1.0.0"},
        ],
        "problems": [],
    }


def test_list_reports_a_broken_entry_on_its_own_line_and_lists_the_others(site: Path) -> None:
    raising = fresh_module("raising")
    write_module(site, raising, "raise RuntimeError('boom at import')\n")
    good = fresh_module("good")
    write_world(site, good, name="good")
    write_dist_info(
        site,
        f"mixed-{good}",
        "1.0",
        worlds={f"{raising}-x": f"{raising}:world", f"{good}-x": f"{good}:world"},
    )

    result = runner.invoke(installed_app(), ["worlds", "list"])

    assert result.exit_code == 1
    assert f"{good}-x" in rows(result.stdout)
    # Still listed, with what could not be learnt marked, so the name is seen to be taken.
    assert rows(result.stdout)[f"{raising}-x"] == [
        f"{raising}-x",
        "?",
        f"mixed-{good} 1.0",
        "?",
        "?",
        "-",
    ]
    ours = [line for line in result.stderr.splitlines() if f"{raising}-x" in line]
    assert len(ours) == 1
    assert ours[0].startswith(f"error: world '{raising}-x' (mixed-{good} 1.0")
    assert "RuntimeError: boom at import" in ours[0]
    assert "Traceback" not in result.output


def test_list_reports_a_name_claimed_twice_and_a_seahaven_mismatch(site: Path) -> None:
    first, second = fresh_module("first"), fresh_module("second")
    write_world(site, first, name="first")
    write_world(site, second, name="second")
    shared = fresh_module("shared").replace("_", "-")
    write_dist_info(site, f"alpha-{first}", "1.0", worlds={shared: f"{first}:world"})
    write_dist_info(
        site,
        f"beta-{second}",
        "2.0",
        worlds={f"{second}-own": f"{second}:world"},
        requires=["seahaven>=99"],
    )
    result_before = runner.invoke(
        installed_app(ProvidesWorlds((shared, f"{second}:world"))), ["worlds", "list"]
    )

    assert result_before.exit_code == 1
    conflict = [line for line in result_before.stderr.splitlines() if shared in line]
    assert len(conflict) == 1
    assert "claimed twice" in conflict[0]
    assert f"alpha-{first} 1.0" in conflict[0]
    assert "plugin extra-0" in conflict[0]
    mismatch = [line for line in result_before.stderr.splitlines() if "seahaven>=99" in line]
    assert len(mismatch) == 1
    assert f"seahaven {seahaven.__version__} is running" in mismatch[0]
    # The mismatched world is still listed; the contested name is not.
    assert f"{second}-own" in rows(result_before.stdout)
    assert shared not in rows(result_before.stdout)


def test_list_as_json_includes_every_claimant_of_a_contested_name(site: Path) -> None:
    first = fresh_module("first")
    write_world(site, first, name="first")
    shared = fresh_module("shared").replace("_", "-")
    write_dist_info(site, f"alpha-{first}", "1.0", worlds={shared: f"{first}:world"})

    result = runner.invoke(
        installed_app(ProvidesWorlds((shared, f"{first}:world"))), ["worlds", "list", "--json"]
    )

    assert result.exit_code == 1
    claimants = [item for item in json.loads(result.stdout) if item["name"] == shared]
    assert sorted(item["provider"] for item in claimants) == ["entry point", "plugin extra-0"]
    assert all("claimed twice" in item["problems"][0] for item in claimants)


# --- worlds show ---------------------------------------------------------------------------------


def show(argv: list[str]) -> Any:
    return runner.invoke(installed_app(), ["worlds", "show", *argv])


def test_show_prints_the_tree_with_paths_scopes_and_aliases_and_the_surface(
    site: Path, tmp_path: Path
) -> None:
    modules = composite(site, tmp_path / "fixtures")

    result = show([f"{modules['company']}:world"])

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"company 3.1.0  from {modules['company']}:world"
    stores = lines[lines.index("stores (4):") + 1 : lines.index("tools (4):") - 1]
    assert stores == [
        "  main  world company 3.1.0  scope -  aliases -  file state.sqlite",
        "    payments  world payments 1.0.0  scope -  aliases chat/payments  "
        "file state.payments.sqlite",
        "    chat  world chat 1.0.0  scope -  aliases -  file state.chat.sqlite",
        "      chat/payments  alias of payments",
        "    eu_payments  world payments 1.0.0  scope eu  aliases -  file state.eu_payments.sqlite",
    ]
    tools = [line.split() for line in lines[lines.index("tools (4):") + 1 :]]
    assert tools == [
        ["NAME", "OWNER", "WORLD", "TOOL"],
        ["add_staff", "main", "company", "add_staff"],
        ["add_charges", "payments", "payments", "add_charges"],
        ["add_messages", "chat", "chat", "add_messages"],
        ["eu_add_charges", "eu_payments", "payments", "add_charges"],
    ]


def test_show_as_json(site: Path, tmp_path: Path) -> None:
    modules = composite(site, tmp_path / "fixtures")

    result = show([f"{modules['company']}:world", "--json"])

    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert (shown["name"], shown["version"]) == ("company", "3.1.0")
    nodes = {node["path"]: node for node in shown["nodes"]}
    assert nodes["payments"]["aliases"] == ["chat/payments"]
    assert nodes["eu_payments"]["scope"] == "eu"
    assert nodes["main"]["adds"] == {
        "payments": "payments",
        "chat": "chat",
        "eu_payments": "eu_payments",
    }
    assert nodes["chat"]["adds"] == {"payments": "payments"}
    assert {tool["name"]: tool["owner"] for tool in shown["tools"]} == {
        "add_staff": "main",
        "add_charges": "payments",
        "add_messages": "chat",
        "eu_add_charges": "eu_payments",
    }


def test_show_takes_a_registered_name_and_says_who_published_it(site: Path) -> None:
    module = fresh_module("shown")
    write_world(site, module, name="shown")
    name = module.replace("_", "-")
    write_dist_info(site, f"dist-{name}", "5.0", worlds={name: f"{module}:world"})

    result = show([name])

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        f"shown 1.0.0  from world {name!r} (dist-{name} 5.0, entry point {module}:world)"
    )
    assert result.stdout.splitlines()[-1].split() == ["add_notes", "main", "shown", "add_notes"]


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("no-such-world", "no world is registered as 'no-such-world'"),
        ("no_such_module_anywhere:world", "cannot import 'no_such_module_anywhere'"),
    ],
)
def test_show_fails_in_one_line_for_a_world_that_is_not_there(argument: str, expected: str) -> None:
    result = show([argument])

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {expected}")


def test_show_fails_in_one_line_for_a_world_whose_import_raises(site: Path) -> None:
    module = fresh_module("raising")
    write_module(site, module, "import json\njson.loads('{not json')\n")

    result = show([f"{module}:world"])

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"importing {module!r} raised JSONDecodeError" in result.stderr
    assert "Traceback" not in result.output


def test_show_fails_in_one_line_for_a_world_that_does_not_seal(site: Path) -> None:
    payments, host = fresh_module("payments"), fresh_module("host")
    write_world(site, payments, name="payments", table="notes")
    # The host's own add_notes collides with the one payments contributes.
    write_world(site, host, name="host", adds=[(payments, "world", {"name": "payments"})])

    result = show([f"{host}:world"])

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "two routes produce the tool name 'add_notes'" in result.stderr


def test_list_reports_a_world_that_does_not_seal_or_has_a_broken_fixture(
    site: Path, tmp_path: Path
) -> None:
    payments, host, other = (fresh_module(stem) for stem in ("payments", "host", "other"))
    write_world(site, payments, name="payments", table="notes")
    # The host's own add_notes collides with the one payments contributes.
    write_world(site, host, name="host", adds=[(payments, "world", {"name": "payments"})])
    broken_fixture = tmp_path / "other-fixtures" / "bad"
    broken_fixture.mkdir(parents=True)
    (broken_fixture / "fixture.yaml").write_text("format_version: 9\n")
    write_world(site, other, name="other", fixtures_dir=broken_fixture.parent)
    write_dist_info(
        site,
        f"pair-{host}",
        "1.0",
        worlds={f"{host}-x": f"{host}:world", f"{other}-x": f"{other}:world"},
    )

    result = runner.invoke(installed_app(), ["worlds", "list"])

    assert result.exit_code == 1
    listed = rows(result.stdout)
    assert listed[f"{host}-x"][3:5] == ["?", "0"]
    assert listed[f"{other}-x"][3:5] == ["1", "?"]
    host_lines = [line for line in result.stderr.splitlines() if f"{host}-x" in line]
    assert len(host_lines) == 1
    assert "does not seal" in host_lines[0]
    assert "two routes produce the tool name 'add_notes'" in host_lines[0]
    other_lines = [line for line in result.stderr.splitlines() if f"{other}-x" in line]
    assert len(other_lines) == 1
    assert "has a fixture that cannot be read" in other_lines[0]
    assert "format_version 9" in other_lines[0]
