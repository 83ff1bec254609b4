"""``seahaven new``: what it writes, what it refuses before writing, and that the result works.

The scaffold is what new authors copy, so the world it writes is held to the project's own
standards here: its tests pass, ``seahaven check`` finds nothing, and ruff is clean.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath

import pytest
import typer
from typer.testing import CliRunner

from seahaven import cli
from seahaven.cli import scaffold
from seahaven.errors import ToolError, WorldBug
from seahaven.registry import plugins

runner = CliRunner()

REPOSITORY = Path(__file__).resolve().parent.parent

EXPECTED_FILES = {
    ".gitignore",
    "AGENTS.md",
    "README.md",
    "pyproject.toml",
    "fixtures_src/__init__.py",
    "fixtures_src/generate.py",
    "src/notes/__init__.py",
    "src/notes/errors.py",
    "src/notes/fixtures/README.md",
    "src/notes/middleware/__init__.py",
    "src/notes/middleware/error_handler.py",
    "src/notes/openenv_app.py",
    "src/notes/py.typed",
    "src/notes/schema/001_items.sql",
    "src/notes/tools/__init__.py",
    "src/notes/tools/items.py",
    "src/notes/world.py",
    "tests/test_fixtures.py",
    "tests/test_items.py",
}


def app() -> typer.Typer:
    return cli.build_app(plugins.make_plugin_manager(entry_points=False))


def files_under(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def subprocess_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scaffolded world, shared by the tests that only read it or run it."""
    parent = tmp_path_factory.mktemp("scaffold")
    return scaffold.render("notes", parent).directory


def test_new_writes_the_whole_world_and_prints_the_next_steps(tmp_path: Path) -> None:
    result = runner.invoke(app(), ["new", "notes", "--dir", str(tmp_path)])

    assert result.exit_code == 0, result.output
    project = tmp_path / "notes"
    assert files_under(project) == EXPECTED_FILES
    # Nothing else in the parent: the staging directory was renamed into place.
    assert [path.name for path in tmp_path.iterdir()] == ["notes"]
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Created the world 'notes' in {project}")
    assert "Next:" in lines
    for step in ("pip install -e", "pytest", "seahaven check", "generate.py", "serve", "hub"):
        assert any(step in line for line in lines), step
    assert "seahaven docs" in lines[-1]


def test_new_without_dir_writes_into_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app(), ["new", "notes"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "notes" / "src" / "notes" / "world.py").is_file()


def test_the_distribution_is_shaped_like_the_worlds_in_this_repository(notes: Path) -> None:
    pyproject = tomllib.loads((notes / "pyproject.toml").read_text())
    project = pyproject["project"]
    versions = scaffold.seahaven_range()
    assert project["name"] == "seahaven-world-notes"
    assert project["dependencies"] == [f"seahaven{versions}"]
    assert project["optional-dependencies"]["serve"] == [f"seahaven[serve]{versions}"]
    assert project["optional-dependencies"]["mcp"] == [f"seahaven[mcp]{versions}"]
    assert project["entry-points"]["seahaven.worlds"] == {"notes": "notes:world"}
    package_data = pyproject["tool"]["setuptools"]["package-data"]["notes"]
    assert "fixtures/**/*" in package_data and "schema/*.sql" in package_data
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]
    # The fixtures directory is inside the package, so the fixtures travel in the wheel.
    assert (notes / "src" / "notes" / "fixtures").is_dir()
    assert 'name="notes"' in (notes / "src" / "notes" / "world.py").read_text()
    assert "seahaven docs" in (notes / "AGENTS.md").read_text()


def test_the_names_follow_from_the_one_given() -> None:
    names = scaffold.names_for("Tide-Tables.v2")
    assert (names.world, names.package, names.distribution, names.error_class) == (
        "Tide-Tables.v2",
        "tide_tables_v2",
        "seahaven-world-tide-tables-v2",
        "TideTablesV2Error",
    )
    assert scaffold.names_for("x").error_class == "XError"


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("json", "standard-library module"),
        ("Email", "standard-library module"),
        ("seahaven", "shadow Seahaven's own"),
        ("seahaven_openenv", "shadow Seahaven's own"),
        ("pydantic", "already importable"),
    ],
)
def test_a_name_that_cannot_be_a_world_is_refused_before_anything_is_written(
    tmp_path: Path, name: str, says: str
) -> None:
    result = runner.invoke(app(), ["new", name, "--dir", str(tmp_path)])

    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and says in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("", "not a world name"),
        ("a/b", "not a world name"),
        ("über", "not a world name"),
        ("x" * 65, "not a world name"),
        ("two words", "does not make a Python package name"),
        ("1notes", "does not make a Python package name"),
        ("class", "does not make a Python package name"),
    ],
)
def test_a_name_spelled_so_it_cannot_be_a_world_is_a_usage_error(
    tmp_path: Path, name: str, says: str
) -> None:
    result = runner.invoke(app(), ["new", name, "--dir", str(tmp_path)])

    assert result.exit_code == 2
    assert "Invalid value for NAME" in result.stderr and says in " ".join(result.stderr.split())
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_refused_and_left_alone(tmp_path: Path) -> None:
    existing = tmp_path / "notes"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me")

    result = runner.invoke(app(), ["new", "notes", "--dir", str(tmp_path)])

    assert result.exit_code == 1
    assert "already exists" in result.stderr and "never writes into" in result.stderr
    assert files_under(existing) == {"mine.txt"}
    assert [path.name for path in tmp_path.iterdir()] == ["notes"]


def test_a_missing_dir_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app(), ["new", "notes", "--dir", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert "is not a directory" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_failure_while_writing_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[Path] = []
    original = Path.write_text

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        if len(written) == 5:
            raise OSError(28, "No space left on device")
        written.append(self)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(OSError, match="No space left"):
        scaffold.render("notes", tmp_path)
    assert len(written) == 5
    assert list(tmp_path.iterdir()) == []


def test_the_templates_are_all_rendered_and_leave_no_placeholder(notes: Path) -> None:
    for path in notes.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "__PACKAGE__" not in text and "__WORLD__" not in text, path
            assert "__DIST__" not in text and "__RANGE__" not in text, path
    rendered = {str(PurePosixPath(*Path(p).parts)) for p in files_under(notes)}
    assert rendered == EXPECTED_FILES


def test_the_scaffolded_world_passes_its_own_tests(notes: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=notes,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout


def test_the_scaffolded_worlds_argument_errors_are_invalid_args(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = scaffold.render("tidepool", tmp_path).directory
    monkeypatch.syspath_prepend(str(project / "src"))
    module = importlib.import_module("tidepool")
    try:
        with module.world.instance() as inst:
            for arguments in ({"title": ""}, {"title": 5}, {}):
                with pytest.raises(ToolError) as raised:
                    inst.call("create_item", **arguments)
                assert raised.value.code == "INVALID_INPUT"
                assert raised.value.error_type == "invalid_args", arguments
            with pytest.raises(ToolError) as missing:
                inst.call("get_item", item_id="nope")
            assert missing.value.error_type == "execution_error"
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] == "tidepool"]:
            del sys.modules[name]


def seahaven_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``seahaven`` command line in ``project``, as its author would."""
    return subprocess.run(
        [sys.executable, "-m", "seahaven.cli", *args],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_scaffolded_world_passes_seahaven_check(notes: Path) -> None:
    result = seahaven_in(notes, "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "no findings: every lint passed\n"


def test_after_a_schema_change_the_failures_name_the_generator_and_it_fixes_them(
    tmp_path: Path,
) -> None:
    project = scaffold.render("tidepool", tmp_path).directory
    env = {**subprocess_env(), "PYTHONPATH": str(project / "src")}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *argv],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def fixture_test() -> subprocess.CompletedProcess[str]:
        return run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_fixtures.py")

    assert run("fixtures_src/generate.py", "starter").returncode == 0
    schema = project / "src" / "tidepool" / "schema"
    (schema / "002_tags.sql").write_text(
        "CREATE TABLE tags (item_id TEXT PRIMARY KEY, tag TEXT NOT NULL) STRICT;\n",
        encoding="utf-8",
    )

    stale = fixture_test()
    assert stale.returncode == 1
    assert "rebuild it with python fixtures_src/generate.py starter" in stale.stdout
    assert "SQLite format" not in stale.stdout  # no diff of the database's bytes
    checked = run("-m", "seahaven.cli", "check")
    assert checked.returncode == 1
    (finding,) = checked.stdout.splitlines()
    assert finding.startswith("SH403 error src/tidepool/fixtures/starter/fixture.yaml")
    assert finding.split("  fix: ")[1].startswith(
        "rebuild the fixtures with the project's generator, parents first: python "
        "fixtures_src/generate.py"
    )

    # The fix both name is one that works.
    rebuilt = run("fixtures_src/generate.py")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert run("-m", "seahaven.cli", "check").returncode == 0
    assert fixture_test().returncode == 0


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_the_scaffolded_world_is_ruff_clean(notes: Path) -> None:
    for argv in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *argv],
            cwd=notes,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_names_for_refuses_with_a_world_bug() -> None:
    with pytest.raises(WorldBug, match="such as 'notes'"):
        scaffold.names_for("no way")


def test_the_quickstarts_own_tool_passes_seahaven_check(tmp_path: Path) -> None:
    """docs/quickstart.md says ``check`` finds nothing: so must it after the page's own example."""
    page = (REPOSITORY / "docs" / "quickstart.md").read_text(encoding="utf-8")
    [example] = [
        block for block in re.findall(r"```py\n(.*?)```", page, re.DOTALL) if "@world.tool" in block
    ]
    world = scaffold.render("tidepool", tmp_path).directory
    items = world / "src" / "tidepool" / "tools" / "items.py"
    # The scaffold's module already imports everything the example names.
    items.write_text(items.read_text(encoding="utf-8") + "\n\n" + example, encoding="utf-8")
    result = seahaven_in(world, "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "no findings: every lint passed\n"
    # The example's tool was checked: the world has it, with its parameter.
    listed = seahaven_in(world, "worlds", "show", "--tool", "list_items")
    assert listed.returncode == 0 and "limit" in listed.stdout, listed.stdout + listed.stderr
