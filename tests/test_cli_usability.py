"""What a new user meets on the command line: numbering, usage errors, outputs checked first,
finding the world from a checkout, two worlds in one project, and the help's notation."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result
from world_packages import fresh_module, write_world

import seahaven
from seahaven import cli
from seahaven.check import run as run_check
from seahaven.registry import plugins

runner = CliRunner()
REPOSITORY = Path(__file__).resolve().parents[1]
NOW = "2026-06-01T09:00:00.000Z"


def run(*argv: str, stdin: str | None = None) -> Result:
    app = cli.build_app(plugins.make_plugin_manager(entry_points=False))
    return runner.invoke(app, list(argv), input=stdin)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throwaway world package importable as ``<module>:world``, with no pyproject."""
    name = fresh_module("usable")
    write_world(tmp_path, name, name="usable", table="slips", fixtures_dir=tmp_path / "fx")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.chdir(tmp_path)
    yield name


def script(*calls: tuple[str, dict[str, object]]) -> str:
    return json.dumps([{"tool": tool, "arguments": arguments} for tool, arguments in calls])


# --- 11: episode numbers what the state document numbers ------------------------------------------


def test_episode_numbers_dispatched_calls_as_the_state_document_does(
    module: str, tmp_path: Path
) -> None:
    target = tmp_path / "state.json"
    calls = script(
        ("no_such_tool", {}),
        ("add_slips", {"id": "a", "body": "one"}),
        ("add_slips", {"id": 7}),
        ("add_slips", {"id": "b", "body": "two"}),
    )
    result = run(
        "episodes", "run", f"{module}:world", "--document", str(target), "--clock-mode", "fixed",
        stdin=calls,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[-] no_such_tool() -> unknown_tool")
    assert lines[1].startswith("[0] add_slips(")
    assert lines[2].startswith("[1] add_slips(") and "invalid_arguments" in lines[2]
    assert lines[3].startswith("[2] add_slips(")
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["call_count"] == 3
    assert [record["i"] for record in document["state"]["db"]["log"]] == [0, 2]
    assert "3 calls" in lines[4]


def test_the_summary_says_one_call_and_one_record(module: str) -> None:
    result = run(
        "episodes", "run", f"{module}:world", stdin=script(("add_slips", {"id": "a", "body": "x"}))
    )
    assert result.exit_code == 0, result.output
    assert ", 1 call, " in result.stdout
    assert "change log: 1 record\n" in result.stdout
    assert "main.slips: 1 insert\n" in result.stdout


# --- 12: malformed options are usage errors; outputs are checked before running ---------------


def test_a_bad_clock_mode_is_a_usage_error(module: str) -> None:
    result = run("episodes", "run", f"{module}:world", "--clock-mode", "slow", stdin="[]")
    assert result.exit_code == 2
    assert "slow" in result.output and "fixed" in result.output


def test_a_bad_now_is_a_usage_error(module: str) -> None:
    result = run("episodes", "run", f"{module}:world", "--now", "yesterday", stdin="[]")
    assert result.exit_code == 2


def test_an_unwritable_document_is_refused_before_the_episode_runs(
    module: str, tmp_path: Path
) -> None:
    calls = script(("add_slips", {"id": "a", "body": "x"}))
    result = run(
        "episodes", "run", f"{module}:world",
        "--document", str(tmp_path / "nowhere" / "state.json"), stdin=calls,
    )  # fmt: skip
    # A path that cannot be written is a failure of the work (1), found before any call runs.
    assert result.exit_code == 1
    assert "add_slips" not in result.stdout
    assert result.stderr.startswith("error: --document ") and result.stderr.count("\n") == 1
    assert "nowhere" in result.stderr and "create" in result.stderr
    result = run("episodes", "run", f"{module}:world", "--document", str(tmp_path), stdin=calls)
    assert result.exit_code == 1
    assert "is a directory" in result.stderr


class TerminalInput(io.StringIO):
    """Standard input as a terminal gives it: it says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_episode_reading_a_terminal_says_what_it_waits_for(
    module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", TerminalInput("[]"))
    status = cli.main(["episodes", "run", f"{module}:world"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "reading the calls from standard input" in captured.err
    assert "Ctrl-D" in captured.err


# --- 14: the framework's own checkout is not a world ----------------------------------------------


def test_the_framework_checkout_is_not_taken_for_a_world(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPOSITORY)
    result = run("fixture", "list")
    assert result.exit_code == 1
    assert "--world" in result.stderr
    assert "is a module, not a seahaven.World" not in result.stderr


def test_check_from_the_framework_checkout_lints_no_framework_code() -> None:
    findings = run_check(None, REPOSITORY)
    assert [finding.code for finding in findings] == ["SH501"]
    assert "--world" in findings[0].message + (findings[0].fix or "")


def test_a_module_that_is_not_a_world_says_how_to_name_one(module: str) -> None:
    result = run("worlds", "show", f"{module}:add_slips")
    assert result.exit_code == 1
    assert "--world" in result.stderr or "module:attr" in result.stderr


# --- 15: two module worlds share one fixtures directory -------------------------------------------


@pytest.fixture
def two_worlds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, Path]]:
    """A project with two world modules and no fixtures_dir: both use its fixtures/."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "pair"\nversion = "0"\n')
    first, second = fresh_module("first"), fresh_module("second")
    write_world(project, first, name="first", table="apples")
    write_world(project, second, name="second", table="pears")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(project)
    assert run("--version").exit_code == 0
    from seahaven.registry.discovery import find_world

    for module_name, table in ((first, "apples"), (second, "pears")):
        world = find_world(f"{module_name}:world").world
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            inst.call(f"add_{table}", id="a", body="x")
            inst.freeze(f"{table}-one", f"One row of {table}.")
    yield first, second, project / "fixtures"
    for name in (first, second):
        sys.modules.pop(name, None)


def test_fixture_list_and_verify_tell_two_worlds_fixtures_apart(
    two_worlds: tuple[str, str, Path],
) -> None:
    first, second, folder = two_worlds
    assert sorted(p.name for p in folder.iterdir()) == ["apples-one", "pears-one"]
    listed = run("fixture", "list", "--world", f"{first}:world")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.startswith("apples-one\t")
    assert "pears-one" not in listed.stdout
    assert "World(fixtures_dir=" in listed.stderr and "second" in listed.stderr
    verified = run("fixture", "verify", f"{second}:world")
    assert verified.exit_code == 0, verified.output
    assert verified.stdout == "pears-one: ok\n"
    assert "World(fixtures_dir=" in verified.stderr


def test_check_does_not_report_the_other_worlds_fixtures(
    two_worlds: tuple[str, str, Path],
) -> None:
    first, _, folder = two_worlds
    findings = run_check(f"{first}:world", folder.parent)
    assert [f.code for f in findings if f.code.startswith("SH4")] == []


def test_a_fixture_of_the_other_world_names_the_shared_directory(
    two_worlds: tuple[str, str, Path],
) -> None:
    first, _, _ = two_worlds
    from seahaven.registry.discovery import find_world

    world = find_world(f"{first}:world").world
    with pytest.raises(seahaven.WorldBug, match=r"World\(fixtures_dir=\.\.\.\)"):
        world.instance("pears-one")


# --- 16: middleware comparing call.name with an unprefixed tool name ------------------------------


MIDDLEWARE_WORLD = '''
import seahaven

world = seahaven.World(
    name="lending",
    version="1.0.0",
    schema="CREATE TABLE loans (id TEXT PRIMARY KEY) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def lend_book(ctx: seahaven.Ctx, id: str) -> None:
    """Lend one book."""
    ctx.db.execute("INSERT INTO loans (id) VALUES (?)", id)


@world.middleware
def only_on_weekdays(ctx, call, next_):
    if call.name == "lend_book" and ctx.clock.now().weekday() > 4:
        raise seahaven.ToolError("CLOSED", "the library is closed at weekends")
    if call.tool.name == "lend_book" or call.name in ("unrelated", "lend_book"):
        pass
    return next_(ctx, call)
'''


def test_check_warns_about_middleware_comparing_call_name_with_its_own_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "lending"
    package = fresh_module("lending")
    (project / package).mkdir(parents=True)
    (project / "pyproject.toml").write_text(f'[project]\nname = "{package}"\nversion = "0"\n')
    (project / package / "__init__.py").write_text(MIDDLEWARE_WORLD, encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    findings = [f for f in run_check(None, project) if f.code == "SH210"]
    lines = MIDDLEWARE_WORLD.splitlines()
    expected = [
        number
        for number, line in enumerate(lines, start=1)
        if 'call.name == "lend_book"' in line or "call.name in (" in line
    ]
    assert [(f.severity, f.line) for f in findings] == [("warning", n) for n in expected]
    assert "'lend_book'" in findings[0].message
    assert findings[0].fix is not None and "call.tool.name" in findings[0].fix
    sys.modules.pop(package, None)


# --- 17: module:attr imports from the working directory, as --run does ----------------------------


def test_module_attr_imports_from_the_working_directory_without_a_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = fresh_module("loose")
    write_world(tmp_path, name, name="loose", table="things")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.chdir(tmp_path)
    result = run("worlds", "show", f"{name}:world")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("loose 1.0.0")
    sys.modules.pop(name, None)


# --- 18: the small things -------------------------------------------------------------------------


def every_command(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        yield (*prefix, name)
        if hasattr(command, "commands"):
            yield from every_command(command, (*prefix, name))


def test_every_help_text_uses_one_notation() -> None:
    app = cli.build_app(plugins.make_plugin_manager(entry_points=False))
    group = typer.main.get_command(app)
    commands = list(every_command(group))
    assert ("episodes", "run") in commands and ("fixture", "verify") in commands
    for path in commands:
        text = run(*path, "--help").stdout
        usage = text.splitlines()[0]
        words = usage.split("[OPTIONS]", 1)[-1].split()
        for word in words:
            assert re.fullmatch(
                r"\{[A-Z][A-Z_]*\}|\[[A-Z][A-Z_]*\]|COMMAND|\[ARGS\]\.\.\.", word
            ), f"seahaven {' '.join(path)}: {usage}"
        options = text.split("Options:", 1)[-1]
        assert not re.search(r"<\w+>", options), f"seahaven {' '.join(path)}:\n{text}"
        for metavar in re.findall(r"^\s+--[\w-]+ (\S+)", options, re.MULTILINE):
            assert metavar == metavar.upper(), f"seahaven {' '.join(path)}: {metavar}"


def test_worlds_list_json_gives_what_a_world_adds_as_data() -> None:
    from seahaven.cli.worlds import added_worlds

    host = seahaven.World(
        name="host",
        version="1.0.0",
        schema="CREATE TABLE h (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )
    guest = seahaven.World(
        name="guest",
        version="2.0.0",
        schema="CREATE TABLE g (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )
    host.add_world(guest)
    host.add_world(guest, name="eu_guest", tool_prefix="eu_", store="eu")
    assert added_worlds(host) == [
        {"name": "guest", "world": "guest", "version": "2.0.0"},
        {"name": "eu_guest", "world": "guest", "version": "2.0.0"},
    ]


def test_a_read_only_into_names_a_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    from seahaven.registry.discovery import find_world

    world = find_world(f"{module}:world").world
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("base", "Nothing yet.")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    result = run("fixture", "create", f"{module}:world", "base", "--into", str(blocker / "into"))
    assert result.exit_code == 1
    assert "--into" in result.stderr and "write" in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_docs_give_the_worlds_real_counts() -> None:
    from seahaven.registry import registry

    worlds = {name: registry().load(name) for name in ("chat", "company", "payments")}
    stores = len(worlds["company"].composition().nodes)
    word = {3: "three", 4: "four", 5: "five"}[stores]
    docs = REPOSITORY / "docs"
    for page in ("index.md", "composition.md"):
        text = " ".join((docs / page).read_text(encoding="utf-8").split())
        assert f"all {word} stores" in text, page
    cli_doc = (docs / "cli.md").read_text(encoding="utf-8")
    for name, world in worlds.items():
        row = re.search(rf"^{name} +\S+ +\S+ \S+ +(\d+) +(\d+) ", cli_doc, re.MULTILINE)
        assert row is not None, name
        assert int(row[1]) == len(world.composition().surface), name
        assert int(row[2]) == len(world.fixtures()), name


def test_the_demo_prints_no_path_its_exit_trap_deletes() -> None:
    demo = (REPOSITORY / "scripts" / "demo").read_text(encoding="utf-8")
    trapped = re.findall(r"trap '.*rm -rf \"\$(\w+)\"", demo)
    for variable in trapped:
        assert f'--document "${variable}' not in demo
        assert f'--document "${{{variable}}}' not in demo


def _setup_checkout(tmp_path: Path, *, uv_status: int | None) -> Path:
    """A checkout of three projects; its ``.venv`` python (and uv, unless None) record asks."""
    checkout = tmp_path / "checkout"
    for project in ("plugins/one", "plugins/two", "worlds/three"):
        (checkout / project).mkdir(parents=True)
        (checkout / project / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    stand_ins = {"python": 0} if uv_status is None else {"python": 0, "uv": uv_status}
    for name, status in stand_ins.items():
        program = bin_dir / name
        program.write_text(
            f'#!/bin/sh\necho "$@" >> "$(dirname "$0")/asked-{name}"\nexit {status}\n',
            encoding="utf-8",
        )
        program.chmod(0o755)
    return checkout


def _source_setup(checkout: Path, **environment: str) -> tuple[list[str], dict[str, str]]:
    """Source ``scripts/_venv.sh`` in the checkout: its stderr lines, what each program got."""
    import subprocess

    result = subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {REPOSITORY / 'scripts' / '_venv.sh'}"],
        cwd=checkout,
        env={**os.environ, "SEAHAVEN_INSTALLER": "uv", **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    asked = {
        path.name.removeprefix("asked-"): path.read_text(encoding="utf-8")
        for path in (checkout / ".venv" / "bin").glob("asked-*")
    }
    return result.stderr.splitlines(), asked


def test_the_setup_says_what_it_installs_before_the_long_install(tmp_path: Path) -> None:
    """``scripts/_venv.sh`` (the demo and the tests source it) announces each step; uv installs."""
    lines, asked = _source_setup(_setup_checkout(tmp_path, uv_status=0))
    assert lines[0].startswith(
        "setup: installing seahaven and its 3 plugins, worlds and examples into .venv, editable"
    )
    assert re.fullmatch(r"setup: \.venv is ready \(\d+ s\)", lines[-1])
    assert asked["uv"].startswith("pip install --quiet --python .venv/bin/python -e .[dev] ")
    assert "-e plugins/one/ -e plugins/two/ -e worlds/three/" in asked["uv"]
    assert "python" not in asked


def test_the_setup_installs_with_pip_when_asked_to_or_when_uv_fails(tmp_path: Path) -> None:
    """``SEAHAVEN_INSTALLER=pip`` never runs uv; an install uv cannot do is done again by pip."""
    lines, asked = _source_setup(
        _setup_checkout(tmp_path / "asked", uv_status=0), SEAHAVEN_INSTALLER="pip"
    )
    assert "uv" not in asked
    pip_install = "-m pip install --quiet --disable-pip-version-check"
    assert asked["python"].startswith(f"{pip_install} -e .[dev]")
    assert re.fullmatch(r"setup: \.venv is ready \(\d+ s\)", lines[-1])

    lines, asked = _source_setup(_setup_checkout(tmp_path / "failing", uv_status=1))
    assert asked["uv"].startswith("pip install --quiet --python .venv/bin/python -e .[dev] ")
    assert "setup: uv could not install; trying pip" in lines
    assert "-e plugins/one/ -e plugins/two/ -e worlds/three/" in asked["python"]
    assert re.fullmatch(r"setup: \.venv is ready \(\d+ s\)", lines[-1])


def test_the_setup_puts_uv_into_the_environment_with_pip_first(tmp_path: Path) -> None:
    """With no uv in ``.venv`` yet, pip is asked for it; here it brings none, so pip installs."""
    lines, asked = _source_setup(_setup_checkout(tmp_path, uv_status=None))
    first, second = asked["python"].splitlines()
    assert first.startswith("-m pip install --quiet --disable-pip-version-check uv>=")
    assert "setup: pip could not install uv into .venv; installing with pip instead" not in lines
    assert second.startswith("-m pip install --quiet --disable-pip-version-check -e .[dev]")


def test_the_install_commands_the_docs_give_name_the_checkouts_own_distributions() -> None:
    """No package index has these distributions yet, so every documented install is local."""
    for page in ("README.md", "docs/quickstart.md"):
        text = (REPOSITORY / page).read_text(encoding="utf-8")
        blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
        commands = [
            line.split("#", 1)[0].split()
            for block in blocks
            for line in block.splitlines()
            if line.strip().startswith("pip install")
        ]
        assert commands, page
        for words in commands:
            targets = [word for word in words[2:] if word != "-e"]
            assert words.count("-e") == len(targets), f"{page}: {' '.join(words)}"
            for target in targets:
                assert (REPOSITORY / target / "pyproject.toml").is_file(), f"{page}: {target}"
