"""``seahaven.check.run``, its output, its plugins and its command, in this process.

Each test writes a throwaway project into ``tmp_path`` with a package name no
other test uses, and forgets that package's modules afterwards, so rules that
read ``sys.modules`` (SH301) see only what the test imported.
"""

from __future__ import annotations

import itertools
import os
import sys
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import seahaven
from seahaven.check import CheckContext, Finding, Rule, collect_rules, exit_code, render, run
from seahaven.check.locate import DISCOVERY_FIX
from seahaven.check.plugin import BUILTIN_RULES, seahaven_cli
from seahaven.cli import build_app
from seahaven.registry.plugins import PluginManager, make_plugin_manager

runner = CliRunner()
_counter = itertools.count()
FROZEN_AT = "2031-03-14T08:30:00.000Z"


def rule_fix(code: str) -> str:
    """The fix a built-in rule carries, read from the rule so no test restates its wording."""
    (rule,) = [rule for rule in BUILTIN_RULES if rule.code == code]
    return rule.fix


def strict_fix(table: str) -> str:
    """SH101's fix as a finding about ``table`` prints it: the rule's sentence, then the name."""
    return f"{rule_fix('SH101')} {table}"


WORLD = '''
"""The world object."""

import seahaven

world = seahaven.World(
    name="checked",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
'''

TOOLS = '''
"""Items: create one."""

import seahaven
from PKG.world import world


@world.tool
def create_item(ctx: seahaven.Ctx, title: str) -> dict[str, str]:
    """Create an item with this title and return it.

    Args:
        title: What the item is called.
    """
    item = {"id": ctx.ids.uuid(), "title": title}
    ctx.db.execute("INSERT INTO items (id, title) VALUES (?, ?)", item["id"], item["title"])
    return item
'''

BASE = {
    "src/PKG/__init__.py": "from PKG import tools\nfrom PKG.world import world\n",
    "src/PKG/world.py": WORLD,
    "src/PKG/schema/001_items.sql": (
        "CREATE TABLE items (\n  id TEXT PRIMARY KEY,\n  title TEXT NOT NULL\n) STRICT;\n"
    ),
    "src/PKG/tools/__init__.py": "from PKG.tools import items\n",
    "src/PKG/tools/items.py": TOOLS,
}


class Project:
    """A throwaway world project: its directory and its package name."""

    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package

    def write(self, files: dict[str, str | None]) -> None:
        """Write (or, for ``None``, delete) files; ``PKG`` in a path or a text is the package."""
        for relative, text in files.items():
            path = self.root / relative.replace("PKG", self.package)
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                textwrap.dedent(text).lstrip("\n").replace("PKG", self.package), encoding="utf-8"
            )

    def world(self) -> seahaven.World:
        """Import the project's world, as a fixture generator would."""
        from seahaven.registry.discovery import import_world

        sys.path.insert(0, str(self.root / "src"))
        return import_world(f"{self.package}:world")[0]

    def check(self, explicit: str | None = None, start: Path | None = None) -> list[Finding]:
        return run(explicit, self.root if start is None else start)

    def lines(self, explicit: str | None = None) -> list[str]:
        return render(self.check(explicit)).splitlines()

    def heads(self, explicit: str | None = None) -> list[str]:
        """Each finding as ``CODE location``."""
        return [f"{finding.code} {finding.location}" for finding in self.check(explicit)]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """A clean world project whose package is forgotten after the test."""
    package = f"chk_{os.getpid()}_{next(_counter)}"
    made = Project(tmp_path / "proj", package)
    made.write({"pyproject.toml": f'[project]\nname = "{package}"\nversion = "0.0.0"\n', **BASE})
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield made
    for name in [name for name in sys.modules if name.split(".")[0] == package]:
        del sys.modules[name]


# --- the output --------------------------------------------------------------------------------


def test_a_finding_prints_as_one_line_in_the_documented_shape() -> None:
    finding = Finding(
        code="SH101",
        severity="error",
        path=Path("src/depot/schema/003_parcels.sql"),
        line=14,
        message="table 'parcels' is not STRICT",
        fix=strict_fix("parcels"),
    )
    assert render([finding]) == (
        "SH101 error src/depot/schema/003_parcels.sql:14  table 'parcels' is not STRICT  "
        f"fix: {strict_fix('parcels')}"
    )
    lineless = Finding("SH301", "error", Path("src/pkg/tools/x.py"), None, "m", "f")
    assert render([lineless]) == "SH301 error src/pkg/tools/x.py  m  fix: f"
    assert render([]) == ""


def test_only_an_error_fails_the_run() -> None:
    warning = Finding("SH201", "warning", Path("a.py"), 1, "m", "f")
    error = Finding("SH101", "error", Path("a.sql"), 1, "m", "f")
    assert exit_code([]) == 0
    assert exit_code([warning, warning]) == 0
    assert exit_code([warning, error]) == 1


def test_a_clean_world_has_no_findings(project: Project) -> None:
    assert project.check() == []


# --- finding the world -------------------------------------------------------------------------


def test_paths_are_relative_to_the_project_wherever_check_runs(project: Project) -> None:
    project.write({"src/PKG/tools/orphan.py": '"""Never imported."""\n'})
    from_root = project.check()
    deep = project.root / "src" / project.package / "tools"
    assert project.check(start=deep) == from_root
    assert [f"{finding.code} {finding.location}" for finding in from_root] == [
        f"SH301 src/{project.package}/tools/orphan.py"
    ]


def test_module_attr_climbs_to_the_package_around_the_module(project: Project) -> None:
    project.write(
        {
            "src/PKG/tools/orphan.py": '"""Never imported."""\n',
            "src/PKG/schema/002_loose.sql": "CREATE TABLE loose (id TEXT PRIMARY KEY);\n",
        }
    )
    expected = [
        f"SH101 src/{project.package}/schema/002_loose.sql:1",
        f"SH301 src/{project.package}/tools/orphan.py",
    ]
    assert project.heads(f"{project.package}.world:world") == expected
    assert project.heads() == expected


def test_no_project_is_sh501_naming_the_way_out(tmp_path: Path) -> None:
    (findings,) = run(None, tmp_path)
    assert (findings.code, findings.severity, findings.location) == ("SH501", "error", ".")
    assert "no pyproject.toml" in findings.message
    assert "--world" in findings.fix


def test_a_package_without_a_world_is_sh501_with_the_documented_fix(project: Project) -> None:
    project.write({"src/PKG/__init__.py": "from PKG import tools\n", "src/PKG/world.py": None})
    project.write({"src/PKG/tools/items.py": '"""No tools yet."""\n'})
    (finding,) = project.check()
    assert (finding.code, finding.location) == ("SH501", f"src/{project.package}")
    assert f"{project.package!r} has no attribute 'world'" in finding.message
    assert finding.fix == DISCOVERY_FIX


def test_a_syntax_error_is_sh501_at_its_line_never_a_traceback(project: Project) -> None:
    project.write({"src/PKG/tools/items.py": '"""Broken."""\n\ndef create_item(:\n    pass\n'})
    (finding,) = project.check()
    assert (finding.code, finding.location) == ("SH501", f"src/{project.package}/tools/items.py:3")
    assert finding.message.startswith("importing the world raised SyntaxError: ")
    assert f"src/{project.package}/tools/items.py:3" in finding.fix
    assert "Traceback" not in finding.message


def test_a_missing_dependency_is_reported_at_the_import_that_needs_it(project: Project) -> None:
    project.write({"src/PKG/tools/__init__.py": "from PKG.tools import items\nimport chk_absent\n"})
    (finding,) = project.check()
    assert finding.location == f"src/{project.package}/tools/__init__.py:2"
    assert finding.message == (
        "importing the world raised ModuleNotFoundError: No module named 'chk_absent'"
    )


def test_a_world_that_exits_while_importing_is_reported_not_obeyed(project: Project) -> None:
    project.write({"src/PKG/tools/__init__.py": "import sys\n\nsys.exit(3)\n"})
    (finding,) = project.check()
    assert finding.location == f"src/{project.package}/tools/__init__.py:3"
    assert finding.message == "importing the world raised SystemExit: 3"


def test_a_multi_line_exception_message_is_printed_on_one_line(project: Project) -> None:
    project.write({"src/PKG/tools/__init__.py": 'raise RuntimeError("first\\n  second")\n'})
    (line,) = project.lines()
    assert "RuntimeError: first second" in line
    assert line.startswith(f"SH501 error src/{project.package}/tools/__init__.py:1  ")


def test_a_world_that_does_not_import_still_gets_the_rules_that_read_files(
    project: Project,
) -> None:
    project.write(
        {
            "src/PKG/schema/002_loose.sql": "CREATE TABLE loose (id TEXT PRIMARY KEY);\n",
            "src/PKG/helpers.py": "import random\n",
            "src/PKG/tools/__init__.py": "from PKG.tools import items\n\nLIMIT = int('ten')\n",
            # Needs the world's registrations, so it has nothing to say without a world.
            "src/PKG/tools/orphan.py": "def reach(ctx):\n    return ctx.worlds.nobody\n",
        }
    )
    assert project.heads() == [
        f"SH101 src/{project.package}/schema/002_loose.sql:1",
        f"SH203 src/{project.package}/helpers.py:1",
        f"SH501 src/{project.package}/tools/__init__.py:3",
    ]


def test_a_world_code_worldbug_at_import_is_sh501_at_the_registration(project: Project) -> None:
    project.write(
        {
            "src/PKG/tools/items.py": TOOLS
            + '\n\n@world.tool(name="create_item")\ndef again(ctx: seahaven.Ctx) -> None:\n'
            '    """Twice."""\n'
        }
    )
    (finding,) = project.check()
    assert finding.code == "SH501"
    # The decorator line is where the second registration happens.
    assert finding.location == f"src/{project.package}/tools/items.py:19"
    assert "WorldBug" in finding.message and "already has a tool named" in finding.message


# --- rules that need some care -----------------------------------------------------------------


def test_sh103_reports_the_known_false_positive_on_a_literal_now(project: Project) -> None:
    project.write(
        {
            "src/PKG/schema/002_due.sql": (
                "CREATE TABLE due (\n  id TEXT PRIMARY KEY,\n"
                "  word TEXT NOT NULL CHECK (word IN ('now', 'later'))\n) STRICT;\n"
            )
        }
    )
    assert project.heads() == [f"SH103 src/{project.package}/schema/002_due.sql:1"]


def test_sh104_for_an_inline_schema_is_at_the_package_even_beside_good_files(
    project: Project,
) -> None:
    # schema/ on disk is fine, but the world builds from a string that is not.
    project.write(
        {
            "src/PKG/world.py": WORLD.replace(
                'seahaven.sql_files(__package__, "schema")',
                '"CREATE TABLE items (id TEXT PRIMARY KEY) STRICT; CREATE INDEX i ON nope (x);"',
            )
        }
    )
    (finding,) = project.check()
    assert (finding.code, finding.location) == ("SH104", f"src/{project.package}")
    assert finding.message == "the schema does not execute: no such table: main.nope"


def test_a_schema_not_on_disk_is_reported_at_the_package_with_no_line(project: Project) -> None:
    project.write(
        {
            "src/PKG/world.py": WORLD.replace(
                'seahaven.sql_files(__package__, "schema")',
                '"CREATE TABLE items (id TEXT PRIMARY KEY, title TEXT NOT NULL);"',
            ),
            "src/PKG/schema/001_items.sql": None,
        }
    )
    assert project.lines() == [
        f"SH101 error src/{project.package}  table 'items' is not STRICT  "
        f"fix: {strict_fix('items')}"
    ]


def test_sh201_resolves_aliases_and_spares_middleware_and_the_instance_clock(
    project: Project,
) -> None:
    project.write(
        {
            "src/PKG/helpers.py": (
                "import time as t\n"
                "from time import perf_counter\n\n"
                "def stamp(ctx):\n"
                "    ctx.clock.now()\n"
                "    t.monotonic()\n"
                "    return perf_counter()\n"
            ),
            "src/PKG/middleware/__init__.py": "import time\n\nSTARTED = time.time()\n",
            "src/PKG/__init__.py": (
                "from PKG import middleware, tools\nfrom PKG.world import world\n"
            ),
        }
    )
    assert project.heads() == [
        f"SH201 src/{project.package}/helpers.py:6",
        f"SH201 src/{project.package}/helpers.py:7",
    ]


def test_sh203_reports_from_imports_of_random_and_spares_uuid_parsing(project: Project) -> None:
    project.write(
        {
            "src/PKG/helpers.py": (
                "import uuid\n"
                "from random import choice\n\n"
                "def parse(text):\n"
                "    return uuid.UUID(text)\n"
            )
        }
    )
    (finding,) = project.check()
    assert finding.location == f"src/{project.package}/helpers.py:2"
    assert finding.message.startswith("choice is imported from the standard library's random")


def test_sh208_covers_tools_and_middleware_and_nothing_else(project: Project) -> None:
    project.write(
        {
            "src/PKG/scripts.py": "def build(world):\n    return world.instance()\n",
            "src/PKG/__init__.py": (
                "from PKG import middleware, tools\nfrom PKG.world import world\n"
            ),
            "src/PKG/middleware/__init__.py": (
                "def make(world):\n    return world.instance(seed=1)\n"
            ),
        }
    )
    assert project.heads() == [f"SH208 src/{project.package}/middleware/__init__.py:2"]


def test_sh209_leaves_grandchildren_and_computed_names_alone(project: Project) -> None:
    project.write(
        {
            "src/PKG/helpers.py": (
                "def reach(ctx, name):\n"
                "    ctx.worlds.nobody.worlds.deeper\n"
                '    ctx.worlds[name].call("x")\n'
                "    ctx.worlds._runtime\n"
            )
        }
    )
    (finding,) = project.check()
    assert finding.location == f"src/{project.package}/helpers.py:2"
    assert "'nobody'" in finding.message and "deeper" not in finding.message
    assert finding.fix == "name one of the worlds it adds (none yet), or add the one it means"


def test_sh402_a_missing_or_linked_state_file_asks_for_a_regeneration(project: Project) -> None:
    world = project.world()
    with world.instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        inst.freeze("linked", "A fixture whose file becomes a link.")
        inst.freeze("missing", "A fixture whose file goes missing.")
    fixtures = project.root / "fixtures"
    real = project.root / "elsewhere.sqlite"
    (fixtures / "linked" / "state.sqlite").rename(real)
    (fixtures / "linked" / "state.sqlite").symlink_to(real)
    (fixtures / "missing" / "state.sqlite").unlink()
    findings = project.check()
    assert [f"{finding.code} {finding.location}" for finding in findings] == [
        "SH402 fixtures/linked/state.sqlite",
        "SH402 fixtures/missing/state.sqlite",
    ]
    assert "is a symbolic link" in findings[0].message
    assert "is missing" in findings[1].message
    # A damaged file is not an edit to fork away: the advice is to build it again, and as the
    # project has no generator, that means making room first (freeze refuses an existing id).
    assert [finding.fix for finding in findings] == [
        f"delete fixtures/{name} (a fixture is never overwritten), then build it again with "
        f"seahaven fixture freeze {name} --run MODULE:FUNCTION --description TEXT"
        for name in ("linked", "missing")
    ]


def test_sh403_names_the_rebuild_that_works_for_a_fixture_and_its_fork(project: Project) -> None:
    world = project.world()
    with world.instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        inst.freeze("base", "Nothing yet.")
    with world.instance("base", clock_mode="fixed") as inst:
        inst.call("create_item", title="first")
        inst.freeze("more", "One item.")
    project.write(
        {"src/PKG/schema/002_tags.sql": "CREATE TABLE tags (id TEXT PRIMARY KEY) STRICT;\n"}
    )
    for name in [name for name in sys.modules if name.split(".")[0] == project.package]:
        del sys.modules[name]
    findings = project.check()
    assert [finding.code for finding in findings] == ["SH403", "SH403"]
    # fixture freeze refuses an id that exists, so the fix makes room first.
    assert [finding.fix.split(", then ")[1] for finding in findings] == [
        "build it again with seahaven fixture freeze base --run MODULE:FUNCTION --description TEXT",
        "build it again with seahaven fixture fork base more --run MODULE:FUNCTION "
        "--description TEXT",
    ]
    # With the generator a scaffolded world commits, the generator is the fix.
    project.write({"fixtures_src/generate.py": '"""Builds the fixtures."""\n'})
    fixes = {finding.fix for finding in project.check()}
    assert fixes == {
        "rebuild the fixtures with the project's generator, parents first: python "
        f"fixtures_src/generate.py from the project's directory (fixtures_src/generate.py {name} "
        "rebuilds this one alone), then commit what it wrote"
        for name in ("base", "more")
    }


def test_sh402_and_sh405_see_a_linked_directory_a_rehashed_schema_and_a_journal(
    project: Project,
) -> None:
    import hashlib

    import apsw
    import yaml

    world = project.world()
    with world.instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        for fixture_id in ("journaled", "linked", "reshaped"):
            inst.freeze(fixture_id, "A fixture to damage.")
    fixtures = project.root / "fixtures"
    (fixtures / "journaled" / "state.sqlite-journal").write_bytes(b"")
    (fixtures / "linked").rename(project.root / "kept")
    (fixtures / "linked").symlink_to(project.root / "kept", target_is_directory=True)
    reshaped = fixtures / "reshaped" / "state.sqlite"
    reshaped.chmod(0o644)
    conn = apsw.Connection(str(reshaped))
    conn.execute("CREATE TABLE smuggled (id INTEGER PRIMARY KEY)")
    conn.close()
    sidecar = fixtures / "reshaped" / "fixture.yaml"
    fields = yaml.safe_load(sidecar.read_text(encoding="utf-8"))
    fields["file_sha256"] = hashlib.sha256(reshaped.read_bytes()).hexdigest()
    sidecar.write_text(yaml.safe_dump(fields), encoding="utf-8")

    findings = project.check()
    assert [f"{finding.code} {finding.location}" for finding in findings] == [
        "SH402 fixtures/linked",
        "SH402 fixtures/reshaped/state.sqlite",
        "SH405 fixtures/journaled/state.sqlite-journal",
    ]
    assert "symbolic link" in findings[0].message
    assert "does not have the schema its sidecar records" in findings[1].message
    assert "restore the file" in (findings[1].fix or "")


def test_sh401_a_sidecar_in_the_wrong_directory_is_reported_alone(project: Project) -> None:
    world = project.world()
    with world.instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        inst.freeze("original", "Renamed after freezing.")
    fixtures = project.root / "fixtures"
    (fixtures / "original").rename(fixtures / "renamed")
    # A companion too: SH401 goes first and alone, so SH405 says nothing about this fixture.
    (fixtures / "renamed" / "state.sqlite-shm").write_bytes(b"")
    (finding,) = project.check()
    assert (finding.code, finding.location) == ("SH401", "fixtures/renamed/fixture.yaml")
    assert "'original'" in finding.message and "'renamed'" in finding.message


def test_sh405_and_sh402_name_the_node_of_a_composite_fixture(project: Project) -> None:
    project.write(
        {
            "src/PKG/vendor.py": (
                "import seahaven\n\n"
                "vendor = seahaven.World(\n"
                '    name="vendor",\n'
                '    version="1.0.0",\n'
                '    schema="CREATE TABLE accounts (id TEXT PRIMARY KEY) STRICT;",\n'
                '    state_format="seahaven.state/1",\n'
                ")\n"
            ),
            "src/PKG/world.py": WORLD
            + '\nfrom PKG.vendor import vendor\n\nworld.add_world(vendor, name="vendor")\n',
        }
    )
    world = project.world()
    with world.instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        inst.freeze("both", "Two stores.")
    folder = project.root / "fixtures" / "both"
    (folder / "state.vendor.sqlite-shm").write_bytes(b"")
    node_file = folder / "state.vendor.sqlite"
    node_file.chmod(0o644)
    with node_file.open("ab") as handle:
        handle.write(b"edited")
    findings = project.check()
    assert [f"{finding.code} {finding.location}" for finding in findings] == [
        "SH402 fixtures/both/state.vendor.sqlite",
        "SH405 fixtures/both/state.vendor.sqlite-shm",
    ]
    assert all("node 'vendor'" in finding.message for finding in findings)


def test_an_unsealed_world_keeps_the_root_half_of_sh403_and_loses_the_tree_rules(
    project: Project,
) -> None:
    vendor = (
        "import seahaven\n\n"
        "vendor = seahaven.World(\n"
        '    name="vendor",\n'
        '    version="1.0.0",\n'
        '    schema="CREATE TABLE accounts (id TEXT PRIMARY KEY) STRICT;",\n'
        '    state_format="seahaven.state/1",\n'
        ")\n"
    )
    project.write(
        {
            "src/PKG/vendor.py": vendor,
            "src/PKG/world.py": WORLD
            + '\nfrom PKG.vendor import vendor\n\nworld.add_world(vendor, name="vendor")\n',
        }
    )
    with project.world().instance(now=FROZEN_AT, clock_mode="fixed") as inst:
        inst.freeze("both", "Two stores.")
    # Both schemas move, and a list now names a tool the vendor does not have: no tree.
    project.write(
        {
            "src/PKG/vendor.py": vendor.replace("PRIMARY KEY)", "PRIMARY KEY, note TEXT)"),
            "src/PKG/schema/002_tags.sql": "CREATE TABLE tags (id TEXT PRIMARY KEY) STRICT;\n",
            "src/PKG/world.py": WORLD
            + "\nfrom PKG.vendor import vendor\n\n"
            + 'world.add_world(vendor, name="vendor", tool_allow_list=["missing"])\n',
        }
    )
    for name in [name for name in sys.modules if name.split(".")[0] == project.package]:
        del sys.modules[name]
    findings = project.check()
    assert [f"{finding.code} {finding.location}" for finding in findings] == [
        "SH403 fixtures/both/fixture.yaml",
        f"SH504 src/{project.package}/world.py:14",
    ]
    assert "the store at 'main'" in findings[0].message
    assert findings[1].message.startswith(
        f"the composition does not seal: add_world(name='vendor') at "
        f"src/{project.package}/world.py:14: tool_allow_list names 'missing'"
    )


def test_sh504_for_two_routes_to_one_name_points_at_the_later_add_world(
    project: Project,
) -> None:
    vendor = (
        "import seahaven\n\n"
        "def make(name):\n"
        "    made = seahaven.World(\n"
        "        name=name,\n"
        '        version="1.0.0",\n'
        '        schema="CREATE TABLE accounts (id TEXT PRIMARY KEY) STRICT;",\n'
        '        state_format="seahaven.state/1",\n'
        "    )\n\n"
        "    @made.tool\n"
        "    def open_account(ctx: seahaven.Ctx) -> str:\n"
        '        """Open an account."""\n'
        "        return ctx.ids.uuid()\n\n"
        "    return made\n"
    )
    project.write(
        {
            "src/PKG/vendor.py": vendor,
            "src/PKG/world.py": WORLD + "\nfrom PKG.vendor import make\n\n"
            'world.add_world(make("east"), name="east")\n'
            'world.add_world(make("west"), name="west")\n',
        }
    )
    (finding,) = project.check()
    assert (finding.code, finding.location) == ("SH504", f"src/{project.package}/world.py:15")
    assert "two routes produce the tool name 'open_account'" in finding.message


# --- plugins -----------------------------------------------------------------------------------


def _name_must_start_with_acme(ctx: CheckContext) -> Iterable[Finding]:
    world = ctx.world
    if world is None or ctx.package is None or world.name.startswith("acme"):
        return
    location = ctx.package.directory
    assert location is not None
    # Deliberately out of order and spread over lines: run sorts and folds.
    yield ACME_NAMES.finding(location / "world.py", 9, f"world {world.name!r}\nis not acme's")
    yield ACME_NAMES.finding(location / "world.py", 3, f"world {world.name!r} is not acme's")


ACME_NAMES = Rule(
    code="ACME001",
    severity="warning",
    title="a world whose name does not start with acme",
    fix="rename the world acme_<something>",
    check=_name_must_start_with_acme,
)


class AcmePlugin:
    """An organisation's plugin, registered the way an entry point would be."""

    def __init__(self, *rules: Rule) -> None:
        self.rules = rules

    @seahaven.hookimpl
    def seahaven_lint_rules(self) -> Iterable[object]:
        return self.rules


def manager_with(plugin: object) -> PluginManager:
    manager = make_plugin_manager(entry_points=False)
    manager.register(plugin, name="acme")
    return manager


def test_a_plugin_rule_runs_through_the_command_beside_the_built_in_ones(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write({"src/PKG/schema/002_loose.sql": "CREATE TABLE loose (id TEXT PRIMARY KEY);\n"})
    monkeypatch.chdir(project.root / "src")
    app = build_app(manager_with(AcmePlugin(ACME_NAMES)))
    result = runner.invoke(app, ["check"])
    world_py = f"src/{project.package}/world.py"
    assert result.stdout.splitlines() == [
        f"ACME001 warning {world_py}:3  world 'checked' is not acme's  "
        "fix: rename the world acme_<something>",
        f"ACME001 warning {world_py}:9  world 'checked' is not acme's  "
        "fix: rename the world acme_<something>",
        f"SH101 error src/{project.package}/schema/002_loose.sql:1  table 'loose' is not STRICT  "
        f"fix: {strict_fix('loose')}",
    ]
    assert result.exit_code == 1


def test_warnings_alone_exit_zero_through_the_command(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    result = runner.invoke(build_app(manager_with(AcmePlugin(ACME_NAMES))), ["check"])
    assert [line.split("  ")[0] for line in result.stdout.splitlines()] == [
        f"ACME001 warning src/{project.package}/world.py:3",
        f"ACME001 warning src/{project.package}/world.py:9",
    ]
    assert result.exit_code == 0


def test_the_built_in_rules_arrive_through_the_hook() -> None:
    codes = [rule.code for rule, _ in collect_rules(make_plugin_manager(entry_points=False))]
    assert codes == [rule.code for rule in BUILTIN_RULES]
    assert len(codes) == len(set(codes)) == 23


def test_a_plugin_claiming_a_built_in_code_is_refused_naming_both(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    impostor = Rule("SH101", "warning", "mine", "do it my way", _name_must_start_with_acme)
    monkeypatch.chdir(project.root)
    result = runner.invoke(build_app(manager_with(AcmePlugin(impostor))), ["check"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "lint code SH101 is claimed by" in result.stderr
    assert "'seahaven.check.plugin'" in result.stderr and "'acme'" in result.stderr


def test_a_plugin_returning_something_else_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="returned a str from seahaven_lint_rules"):
        collect_rules(manager_with(AcmePlugin("ACME001")))  # type: ignore[arg-type]


def test_a_plugin_rule_that_raises_is_one_line_naming_the_rule(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crashes(ctx: CheckContext) -> Iterable[Finding]:
        raise KeyError("boom")

    broken = Rule("ACME002", "error", "crashes", "fix the rule", crashes)
    monkeypatch.chdir(project.root)
    result = runner.invoke(build_app(manager_with(AcmePlugin(broken))), ["check"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: lint rule ACME002 from plugin 'acme' raised KeyError")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"code": "sh101"}, "is not a code"),
        ({"severity": "fatal"}, "neither 'error' nor 'warning'"),
        ({"fix": "  "}, "give it a fix"),
        ({"check": "not callable"}, "check must be a function"),
    ],
)
def test_a_malformed_rule_is_refused_at_construction(
    arguments: dict[str, object], complaint: str
) -> None:
    fields: dict[str, object] = {
        "code": "ACME001",
        "severity": "error",
        "title": "t",
        "fix": "f",
        "check": _name_must_start_with_acme,
        **arguments,
    }
    with pytest.raises(seahaven.WorldBug, match=complaint):
        Rule(**fields)  # type: ignore[arg-type]


def test_the_command_registers_on_any_typer_app(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write({"src/PKG/schema/002_loose.sql": "CREATE TABLE loose (id TEXT PRIMARY KEY);\n"})
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A bare app of the test's own."""

    seahaven_cli(app)
    monkeypatch.chdir(project.root)
    result = runner.invoke(app, ["check", "--world", f"{project.package}.world:world"])
    assert result.exit_code == 1
    assert result.stdout == render(project.check()) + "\n"
    assert result.stdout.startswith(f"SH101 error src/{project.package}/schema/002_loose.sql:1  ")
