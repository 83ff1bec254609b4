"""``seahaven fixture list|freeze|fork|create|verify``, through Typer's test runner.

Each test gets a throwaway project (``pyproject.toml``, a world package and a
generator module) in ``tmp_path`` and runs from inside it, as an author would.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result
from world_packages import NOW, composite, fresh_module, write_module, write_world

import seahaven
from seahaven import cli, fixtures
from seahaven.fixtures import preparation
from seahaven.registry import plugins
from seahaven.registry.discovery import import_world

runner = CliRunner()

GENERATOR = """
def seed(instance):
    instance.call("add_notes", id="n1", body="first")


def more(instance):
    instance.call("add_notes", id="n2", body="second")


def fails(instance):
    instance.call("add_notes", id="n1", body="first")
    raise ValueError("the generator ran out of notes")


def calls_badly(instance):
    instance.call("add_notes", id="n1", body="first")
    instance.call("add_notes", id="n1", body="the same id again")


NOT_A_FUNCTION = 3
"""


@dataclass
class Project:
    """A world's project directory, as the tests lay it out."""

    root: Path
    module: str
    generator: str

    @property
    def spec(self) -> str:
        return f"{self.module}:world"

    @property
    def fixtures(self) -> Path:
        return self.root / "fixtures"

    def world(self) -> seahaven.World:
        return import_world(self.spec)[0]

    def freeze(self, fixture_id: str, *notes: str, parent: str | None = None) -> None:
        """Freeze a fixture through the API, on a fixed clock, holding ``notes``."""
        with self.world().instance(parent, now=None if parent else NOW, clock_mode="fixed") as inst:
            for note in notes:
                inst.call("add_notes", id=note, body=f"body of {note}")
            inst.freeze(fixture_id, f"Holds {', '.join(notes) or 'nothing'}.")

    def notes_in(self, fixture_id: str) -> list[str]:
        with self.world().instance(fixture_id) as inst:
            return [row["id"] for row in inst.db.rows("SELECT id FROM notes ORDER BY id")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """A project with a world ``notes`` and a generator module, as the working directory."""
    root = tmp_path / "project"
    root.mkdir()
    module = fresh_module("notes")
    (root / "pyproject.toml").write_text(f'[project]\nname = "{module}"\nversion = "1.0"\n')
    write_world(root, module, name="notes", fixtures_dir=root / "fixtures")
    generator = fresh_module("generate")
    write_module(root, generator, GENERATOR)
    monkeypatch.chdir(root)
    # The command puts the project on sys.path, as a console script must; undo it afterwards.
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    yield Project(root, module, generator)


def run(*argv: str) -> Result:
    return runner.invoke(cli.build_app(plugins.make_plugin_manager(entry_points=False)), argv)


def assert_one_line_failure(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: ")
    for fragment in fragments:
        assert fragment in result.stderr
    assert "Traceback" not in result.output


def sidecar(directory: Path) -> dict[str, object]:
    loaded = yaml.safe_load((directory / "fixture.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


# --- list ----------------------------------------------------------------------------------------


def test_list_prints_each_fixture_tab_separated(project: Project) -> None:
    project.freeze("base", "n1")
    project.freeze("child", "n2", parent="base")
    (project.fixtures / "base" / "fixture.yaml").write_text(
        (project.fixtures / "base" / "fixture.yaml")
        .read_text()
        .replace("description: Holds n1.", "description: |-\n  Holds n1,\n  on two lines.")
    )

    result = run("fixture", "list")

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        f"base\t-\t{NOW}\tHolds n1, on two lines.",
        f"child\tbase\t{NOW}\tHolds n2.",
    ]


def test_list_prints_nothing_for_a_world_with_no_fixtures(project: Project) -> None:
    result = run("fixture", "list", "--world", project.spec)

    assert result.exit_code == 0
    assert result.output == ""


def test_list_fails_in_one_line_without_a_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert_one_line_failure(run("fixture", "list"), "no pyproject.toml", "--world")
    assert_one_line_failure(
        run("fixture", "list", "--world", "nothing-registered-by-this-name"),
        "no world is registered as 'nothing-registered-by-this-name'",
    )


def test_list_fails_in_one_line_on_an_unreadable_sidecar(project: Project) -> None:
    project.freeze("base")
    (project.fixtures / "base" / "fixture.yaml").write_text("format_version: 7\n")

    assert_one_line_failure(run("fixture", "list"), "format_version 7")


# --- freeze --------------------------------------------------------------------------------------


def test_freeze_runs_the_generator_on_a_blank_instance_and_freezes_it(project: Project) -> None:
    result = run(
        "fixture",
        "freeze",
        "base",
        "--run",
        f"{project.generator}:seed",
        "--description",
        "One note.",
        "--now",
        NOW,
    )

    assert result.exit_code == 0, result.output
    directory = project.fixtures / "base"
    assert result.stdout.startswith("froze fixture 'base' (parent -, now 2026-06-01T09:00:")
    assert result.stdout.endswith(f"into {directory}\n")
    written = sidecar(directory)
    assert written["description"] == "One note."
    assert written["parent_id"] is None
    # The world's default clock is running, so now is --now plus the time the work took.
    assert str(written["now"]).startswith("2026-06-01T09:0")
    assert project.notes_in("base") == ["n1"]


def test_freeze_finds_the_world_by_module_attr_from_anywhere(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (elsewhere / f"{project.generator}_here.py").write_text(GENERATOR)

    result = run(
        "fixture",
        "freeze",
        "base",
        "--world",
        project.spec,
        "--run",
        f"{project.generator}_here:seed",
        "--description",
        "d",
        "--now",
        NOW,
    )

    assert result.exit_code == 0, result.output
    assert project.notes_in("base") == ["n1"]


def test_freeze_refuses_an_existing_id_before_running_anything(project: Project) -> None:
    project.freeze("base", "n1")

    result = run(
        "fixture", "freeze", "base", "--run", f"{project.generator}:fails", "--description", "d"
    )

    assert_one_line_failure(result, "fixture 'base' already exists", "choose a new id")
    assert project.notes_in("base") == ["n1"]


@pytest.mark.parametrize(
    ("function", "fragments"),
    [
        ("fails", ("raised ValueError: the generator ran out of notes", "fix the generator")),
        ("calls_badly", ("made a call that failed with DbError db_error",)),
        ("NOT_A_FUNCTION", ("is a int, not a function",)),
        ("missing", ("has no attribute 'missing'", "--run")),
    ],
)
def test_freeze_fails_in_one_line_and_leaves_no_fixture_when_the_generator_fails(
    project: Project, function: str, fragments: tuple[str, ...]
) -> None:
    result = run(
        "fixture",
        "freeze",
        "base",
        "--run",
        f"{project.generator}:{function}",
        "--description",
        "d",
        "--now",
        NOW,
    )

    assert_one_line_failure(result, *fragments)
    assert not (project.fixtures / "base").exists()
    assert list(project.fixtures.glob(".pending-*")) == []


def test_freeze_fails_in_one_line_when_the_generator_module_is_missing(project: Project) -> None:
    result = run(
        "fixture", "freeze", "base", "--run", "no_such_generator:seed", "--description", "d"
    )

    assert_one_line_failure(result, "cannot import the generator module 'no_such_generator'")


def test_freeze_fails_in_one_line_when_the_generator_module_raises(project: Project) -> None:
    write_module(project.root, "broken_generator", "raise KeyError('no config')\n")

    result = run(
        "fixture", "freeze", "base", "--run", "broken_generator:seed", "--description", "d"
    )

    assert_one_line_failure(result, "importing the generator module", "KeyError")


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["base", "--description", "d"], "Missing option '--run'"),
        (["base", "--run", "gen:seed"], "Missing option '--description'"),
        (["--run", "gen:seed", "--description", "d"], "Invalid value for ID: missing"),
        (["base", "--run", "no_colon", "--description", "d"], "does not name a generator"),
        (["base", "--run", "g:f", "--description", "d", "--now", "noon"], "not an ISO-8601"),
        (["a/b", "--run", "g:f", "--description", "d"], "not a fixture id"),
    ],
)
def test_freeze_usage_errors_exit_2(project: Project, argv: list[str], complaint: str) -> None:
    result = run("fixture", "freeze", *argv)

    assert result.exit_code == 2
    assert complaint in result.stderr
    assert not project.fixtures.exists()


# --- fork ----------------------------------------------------------------------------------------


def test_fork_fills_an_instance_of_the_parent_and_records_it(project: Project) -> None:
    project.freeze("base", "n1")

    result = run(
        "fixture",
        "fork",
        "base",
        "child",
        "--run",
        f"{project.generator}:more",
        "--description",
        "Two notes.",
    )

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("froze fixture 'child' (parent base, now 2026-06-01T09:00:")
    written = sidecar(project.fixtures / "child")
    assert written["parent_id"] == "base"
    assert written["description"] == "Two notes."
    assert str(written["now"]) >= NOW
    assert project.notes_in("child") == ["n1", "n2"]
    assert project.notes_in("base") == ["n1"]


def test_fork_fails_in_one_line_for_an_unknown_parent(project: Project) -> None:
    result = run(
        "fixture",
        "fork",
        "nope",
        "child",
        "--run",
        f"{project.generator}:more",
        "--description",
        "d",
    )

    assert_one_line_failure(result, "has no fixture 'nope'")
    assert not (project.fixtures / "child").exists()


def test_fork_refuses_an_existing_id(project: Project) -> None:
    project.freeze("base", "n1")
    project.freeze("child", "n9")

    result = run(
        "fixture",
        "fork",
        "base",
        "child",
        "--run",
        f"{project.generator}:more",
        "--description",
        "d",
    )

    assert_one_line_failure(result, "fixture 'child' already exists")
    assert project.notes_in("child") == ["n9"]


def test_fork_takes_no_now(project: Project) -> None:
    project.freeze("base")

    result = run(
        "fixture",
        "fork",
        "base",
        "child",
        "--run",
        f"{project.generator}:more",
        "--description",
        "d",
        "--now",
        NOW,
    )

    assert result.exit_code == 2
    assert "No such option: --now" in result.stderr


# --- create --------------------------------------------------------------------------------------


@pytest.fixture
def company(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A composite world with a fixture 'acme'; returns its module:attr."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    modules = composite(site, tmp_path / "company-fixtures")
    spec = f"{modules['company']}:world"
    world = import_world(spec)[0]
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.call("add_staff", id="s1", body="ada")
        inst.call("add_charges", id="c1", body="payroll")
        inst.call("add_messages", id="m1", body="hello")
        inst.call("eu_add_charges", id="e1", body="vat")
        inst.freeze("acme", "A small company.")
    return spec


def rows_of(path: Path, table: str) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute(f"SELECT id FROM {table} ORDER BY id")]


def tamper(state_file: Path) -> None:
    """Change a frozen file after the fact, as a careless hand would."""
    state_file.chmod(0o644)
    with state_file.open("ab") as handle:
        handle.write(b"\0" * 16)


def test_create_copies_one_file_per_store_and_prints_each(company: str, tmp_path: Path) -> None:
    into = tmp_path / "out" / "acme"

    result = run("fixture", "create", company, "acme", "--into", str(into))

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert [line.split("\t") for line in result.stdout.splitlines()] == [
        [str(into / "state.sqlite"), "main", "company 3.1.0"],
        [str(into / "state.payments.sqlite"), "payments", "payments 1.0.0"],
        [str(into / "state.chat.sqlite"), "chat", "chat 1.0.0"],
        [str(into / "state.eu_payments.sqlite"), "eu_payments", "payments 1.0.0"],
    ]
    assert sorted(path.name for path in into.iterdir()) == [
        "state.chat.sqlite",
        "state.eu_payments.sqlite",
        "state.payments.sqlite",
        "state.sqlite",
    ]
    assert rows_of(into / "state.sqlite", "staff") == ["s1"]
    assert rows_of(into / "state.payments.sqlite", "charges") == ["c1"]
    assert rows_of(into / "state.chat.sqlite", "messages") == ["m1"]
    assert rows_of(into / "state.eu_payments.sqlite", "charges") == ["e1"]
    # Byte-for-byte the frozen files, and the copies are the caller's to change.
    frozen = fixtures.load(import_world(company)[0].fixtures_dir / "acme")
    for path, (file, expected) in frozen.files().items():
        copy = into / file.name
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == expected, path
    with closing(sqlite3.connect(into / "state.sqlite")) as conn, conn:
        conn.execute("INSERT INTO staff (id, body) VALUES ('s2', 'grace')")
    assert rows_of(into / "state.sqlite", "staff") == ["s1", "s2"]


def test_create_accepts_an_existing_empty_directory(company: str, tmp_path: Path) -> None:
    into = tmp_path / "empty"
    into.mkdir()

    result = run("fixture", "create", company, "acme", "--into", str(into))

    assert result.exit_code == 0, result.output
    assert len(list(into.iterdir())) == 4


def test_create_refuses_a_directory_that_is_not_empty(company: str, tmp_path: Path) -> None:
    into = tmp_path / "busy"
    into.mkdir()
    (into / "notes.txt").write_text("mine")

    result = run("fixture", "create", company, "acme", "--into", str(into))

    assert_one_line_failure(result, f"{into} is not empty")
    assert [path.name for path in into.iterdir()] == ["notes.txt"]


def test_create_refuses_a_file(company: str, tmp_path: Path) -> None:
    into = tmp_path / "a-file"
    into.write_text("")

    assert_one_line_failure(
        run("fixture", "create", company, "acme", "--into", str(into)), "is not a directory"
    )


def test_create_fails_on_an_unknown_fixture_and_makes_nothing(company: str, tmp_path: Path) -> None:
    into = tmp_path / "out"

    result = run("fixture", "create", company, "nope", "--into", str(into))

    assert_one_line_failure(result, "has no fixture 'nope'")
    assert not into.exists()


def test_create_runs_the_checksum_check_and_makes_nothing_on_a_mismatch(
    company: str, tmp_path: Path
) -> None:
    acme = import_world(company)[0].fixtures_dir / "acme"
    tamper(acme / "state.chat.sqlite")
    into = tmp_path / "out"

    result = run("fixture", "create", company, "acme", "--into", str(into))

    assert_one_line_failure(result, "node 'chat'", "does not match its file_sha256")
    assert not into.exists()


@pytest.mark.parametrize("existing", [False, True])
def test_create_leaves_nothing_behind_when_a_copy_fails(
    company: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    import seahaven.cli.fixture

    copied: list[Path] = []

    def copy_until_the_disk_fills(source: Path, target: Path) -> None:
        if copied:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))
        preparation.copy_state_file(source, target)
        copied.append(target)

    monkeypatch.setattr(seahaven.cli.fixture, "copy_state_file", copy_until_the_disk_fills)
    into = tmp_path / "out"
    if existing:
        into.mkdir()

    result = run("fixture", "create", company, "acme", "--into", str(into))

    assert_one_line_failure(result, "No space left on device", "state.payments.sqlite")
    assert copied == [into / "state.sqlite"]
    assert into.exists() is existing
    if existing:
        assert list(into.iterdir()) == []


def test_create_usage_errors_exit_2(company: str) -> None:
    assert run("fixture", "create", company, "acme").exit_code == 2
    assert run("fixture", "create", company, "a/b", "--into", "x").exit_code == 2


def test_create_fails_in_one_line_for_a_world_whose_import_raises(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    module = fresh_module("raising")
    write_module(site, module, "raise RuntimeError('cannot start')\n")
    sys.path.insert(0, str(site))
    try:
        result = run("fixture", "create", f"{module}:world", "acme", "--into", str(tmp_path / "o"))
    finally:
        sys.path.remove(str(site))

    assert_one_line_failure(result, f"importing {module!r} raised RuntimeError: cannot start")


# --- verify --------------------------------------------------------------------------------------


def test_verify_reports_every_fixture_ok(project: Project) -> None:
    project.freeze("base", "n1")
    project.freeze("child", "n2", parent="base")

    result = run("fixture", "verify", project.spec)

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["base: ok", "child: ok"]
    assert result.stderr == ""


def test_verify_one_fixture(project: Project) -> None:
    project.freeze("base", "n1")
    project.freeze("child", "n2", parent="base")

    result = run("fixture", "verify", project.spec, "child")

    assert result.exit_code == 0
    assert result.stdout == "child: ok\n"


def test_verify_reports_each_problem_on_its_own_line_and_exits_1(project: Project) -> None:
    project.freeze("base", "n1")
    project.freeze("good", "n3")
    tamper(project.fixtures / "base" / "state.sqlite")

    result = run("fixture", "verify", project.spec)

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[1] == "good: ok"
    assert lines[0].startswith("base: fixture 'base', node 'main' (state.sqlite) does not match")
    assert len(lines) == 2


def test_verify_itemises_shape_and_schema_problems(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fixture of the composite company, checked against a company that has since dropped
    # chat (so payments lost its alias) and whose payments changed its schema: four lines.
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    shared = tmp_path / "shared-fixtures"
    modules = composite(site, shared)
    with import_world(f"{modules['company']}:world")[0].instance(now=NOW) as inst:
        inst.freeze("acme", "d")
    payments_v2, company_v2 = fresh_module("payments"), fresh_module("company")
    write_world(site, payments_v2, name="payments", table="invoices")
    write_world(
        site,
        company_v2,
        name="company",
        table="staff",
        fixtures_dir=shared,
        adds=[
            (payments_v2, "world", {"name": "payments"}),
            (payments_v2, "world", {"name": "eu_payments", "store": "eu", "tool_prefix": "eu_"}),
        ],
    )

    result = run("fixture", "verify", f"{company_v2}:world", "acme")

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert all(line.startswith("acme: ") for line in lines)
    assert len(lines) == 4, lines
    assert sum("node removed" in line and "'chat'" in line for line in lines) == 1
    assert sum("shape changed" in line and "chat/payments" in line for line in lines) == 1
    assert sum("schema drifted" in line for line in lines) == 2


def test_verify_an_unknown_fixture_is_a_problem(project: Project) -> None:
    result = run("fixture", "verify", project.spec, "nope")

    assert result.exit_code == 1
    assert result.stdout.startswith("nope: world 'notes' has no fixture 'nope'")


def test_verify_a_world_with_no_fixtures_says_so_and_passes(project: Project) -> None:
    result = run("fixture", "verify", project.spec)

    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == f"world 'notes' has no fixtures in {project.fixtures}\n"


def test_verify_fails_in_one_line_without_a_world(project: Project) -> None:
    assert_one_line_failure(
        run("fixture", "verify", "no_such_module_at_all:world"),
        "cannot import 'no_such_module_at_all'",
    )
    assert run("fixture", "verify", "one", "two", "three").exit_code == 2
