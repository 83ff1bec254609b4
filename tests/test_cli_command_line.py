"""One command line: the world spelled either way, -h, the help's order, pipes, clean output.

Every command that acts on a world takes it as its first argument or as
``--world`` (both, when they agree); ``-h`` is help everywhere; the help lists
whole summaries in a deliberate order; a reader that stops reading (``| head``)
gets no error; ``check`` says when all is clean; ``worlds list`` says how to
install a world when there is none; ``worlds show`` can say what a tool takes.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result
from world_packages import fresh_module, write_world

from seahaven import cli
from seahaven.registry import plugins

runner = CliRunner()
NOW = "2026-06-01T09:00:00.000Z"


def app() -> typer.Typer:
    """The command line with every installed plugin: serve, mcp and episodes included."""
    return cli.build_app(plugins.make_plugin_manager())


def run(*argv: str, stdin: str | None = None) -> Result:
    return runner.invoke(app(), list(argv), input=stdin)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throwaway world importable as ``<module>:world``, with a fixture ``base``."""
    name = fresh_module("spelled")
    write_world(tmp_path, name, name="spelled", table="slips", fixtures_dir=tmp_path / "fx")
    (tmp_path / "gen_spelled.py").write_text(
        "def fill(instance):\n    instance.call('add_slips', id='a', body='one')\n\n\n"
        "def more(instance):\n    instance.call('add_slips', id='b', body='two')\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.chdir(tmp_path)
    yield name


# --- the world, either way ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "rest",
    [
        ["worlds", "show"],
        ["fixture", "list"],
        ["fixture", "verify"],
        ["fixture", "verify", "small_shop"],
        ["check"],
        ["episodes", "run", "empty", "--clock-mode", "fixed", "--now", NOW, "--seed", "3"],
    ],
)
def test_a_world_argument_and_the_world_option_are_the_same_command(rest: list[str]) -> None:
    command, tail = rest[:2] if rest[0] in {"worlds", "fixture", "episodes"} else rest[:1], rest
    tail = rest[len(command) :]
    positional = run(*command, "payments", *tail, stdin="[]")
    option = run(*command, "--world", "payments", *tail, stdin="[]")
    both = run(*command, "payments", "--world", "payments", *tail, stdin="[]")
    assert positional.exit_code == 0, positional.output
    assert positional.stdout == option.stdout == both.stdout
    assert positional.exit_code == option.exit_code == both.exit_code


def test_freeze_fork_and_create_take_the_world_either_way(module: str, tmp_path: Path) -> None:
    world = f"{module}:world"
    making = ["--run", "gen_spelled:fill", "--description", "d", "--now", NOW]
    assert run("fixture", "freeze", world, "base", *making).exit_code == 0
    assert run("fixture", "freeze", "other", "--world", world, *making).exit_code == 0
    forking = ["--run", "gen_spelled:more", "--description", "d"]
    assert run("fixture", "fork", world, "base", "child", *forking).exit_code == 0
    assert run("fixture", "fork", "base", "sibling", "--world", world, *forking).exit_code == 0
    listed = run("fixture", "list", world).stdout.splitlines()
    assert [line.split("\t")[:2] for line in listed] == [
        ["base", "-"],
        ["child", "base"],
        ["other", "-"],
        ["sibling", "base"],
    ]
    one = run("fixture", "create", world, "base", "--into", str(tmp_path / "one"))
    two = run("fixture", "create", "base", "--world", world, "--into", str(tmp_path / "two"))
    assert one.exit_code == two.exit_code == 0, one.output + two.output
    assert (tmp_path / "one" / "state.sqlite").read_bytes() == (
        tmp_path / "two" / "state.sqlite"
    ).read_bytes()


@pytest.mark.parametrize(
    "argv",
    [
        ["worlds", "show", "payments", "--world", "chat"],
        ["fixture", "list", "payments", "--world", "chat"],
        ["fixture", "verify", "payments", "small_shop", "--world", "chat"],
        ["fixture", "create", "payments", "small_shop", "--world", "chat", "--into", "x"],
        [
            "fixture",
            "freeze",
            "payments",
            "x",
            "--world",
            "chat",
            "--run",
            "a:b",
            "--description",
            "d",
        ],
        ["episodes", "run", "payments", "empty", "--world", "chat"],
        ["check", "payments", "--world", "chat"],
        ["mcp", "payments", "--world", "chat"],
        ["serve", "payments", "--world", "chat"],
        ["episodes", "run", "payments", "--world", "chat", "--episodes", "e", "--out", "o"],
    ],
)
def test_two_different_worlds_are_a_usage_error(argv: list[str]) -> None:
    result = run(*argv, stdin="[]")
    assert result.exit_code == 2, result.output
    assert "given twice" in result.stderr
    assert "'payments'" in result.stderr or " payments " in result.stderr


def test_too_many_arguments_are_a_usage_error() -> None:
    result = run("fixture", "verify", "payments", "small_shop", "extra")
    assert result.exit_code == 2
    assert "unexpected extra argument" in result.stderr


def test_serve_takes_worlds_as_arguments_and_all_with_them_is_a_usage_error() -> None:
    result = run("serve", "--all", "payments")
    assert result.exit_code == 2
    assert "--all" in result.stderr
    # The same worlds spelled both ways are one request, not two.
    result = run("serve", "payments", "chat", "--world", "chat", "--world", "payments")
    assert result.exit_code == 2 and "given twice" in result.stderr


def test_serve_takes_openenvs_spelling_and_the_dashed_one() -> None:
    for spelling in ("--max_concurrent_envs", "--max-concurrent-envs"):
        result = run("serve", "payments", spelling, "0")
        # Refused for its value (the least is 1), so the option itself is known.
        assert result.exit_code == 2
        assert "No such option" not in result.stderr
        assert "--max-concurrent-envs" in result.stderr


# --- help -------------------------------------------------------------------------------------


def every_command(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        yield (*prefix, name)
        if hasattr(command, "commands"):
            yield from every_command(command, (*prefix, name))


def test_dash_h_is_help_on_every_command() -> None:
    group = typer.main.get_command(app())
    commands = list(every_command(group))
    assert {("serve",), ("mcp",), ("episodes", "run"), ("fixture", "freeze")} <= set(commands)
    for path in [(), *commands]:
        short, long = run(*path, "-h"), run(*path, "--help")
        assert short.exit_code == 0, (path, short.output)
        assert short.stdout == long.stdout
        assert short.stdout.startswith("Usage: seahaven")


def test_every_group_lists_whole_summaries() -> None:
    group = typer.main.get_command(app())
    for path in [(), *(path for path in every_command(group) if len(path) == 1)]:
        text = run(*path, "-h").stdout
        if "Commands:" in text:
            assert "..." not in text.split("Commands:", 1)[1], path


# --- output --------------------------------------------------------------------------------------


class ClosedPipe(io.TextIOBase):
    """Standard output whose reader has gone away, as ``| head`` leaves it once it has a line."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


def test_a_reader_that_stops_reading_gets_no_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A real pipe here may hold more than any command prints, so the reader's leaving is
    # played by a stream that refuses the first write, as a closed pipe does.
    for argv in (["worlds", "show", "company"], ["episodes", "run", "payments", "empty"]):
        monkeypatch.setattr(sys, "stdin", io.StringIO("[]"))
        monkeypatch.setattr(sys, "stdout", ClosedPipe())
        status = cli.main(argv)
        monkeypatch.undo()
        assert status == 141, argv  # 128 + SIGPIPE, as a program stopped by the signal
        assert capsys.readouterr().err == "", argv


def test_check_says_when_all_is_clean() -> None:
    result = run("check", "payments")
    assert result.exit_code == 0
    assert result.stdout == "no findings: every lint passed\n"


def test_worlds_list_with_no_worlds_says_how_to_install_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import seahaven.registry.worlds as registry

    monkeypatch.setattr(registry.importlib_metadata, "entry_points", lambda **_: [])
    result = runner.invoke(
        cli.build_app(plugins.make_plugin_manager(entry_points=False)), ["worlds", "list"]
    )
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "no worlds are installed" in result.stderr
    assert "pip install -e worlds/payments" in result.stderr and "seahaven new" in result.stderr


def test_worlds_show_json_gives_each_tools_description_and_input_schema() -> None:
    from seahaven.registry import registry

    result = run("worlds", "show", "company", "--json")
    assert result.exit_code == 0
    shown = {tool["name"]: tool for tool in json.loads(result.stdout)["tools"]}
    with registry().load("company").instance() as inst:
        listed = {tool["name"]: tool for tool in inst.tools()}
    assert set(shown) == set(listed)
    for name, tool in listed.items():
        assert shown[name]["description"] == tool["description"]
        assert shown[name]["input_schema"] == tool["input_schema"]
    assert shown["pay_create_charge"]["owner"] == "payments"
    assert shown["pay_create_charge"]["tool"] == "create_charge"


def test_worlds_show_tool_says_what_one_tool_takes() -> None:
    result = run("worlds", "show", "company", "--tool", "list_staff")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "list_staff"
    assert "  List the people on staff, alphabetically by full name (ties broken by id)." in lines
    start = lines.index("arguments (6):")
    assert lines[start + 1].startswith('  department: "executive" | "engineering"')
    assert lines[start + 1].endswith("| null (default null)")
    assert lines[start + 2].startswith("      Only people in this department")
    added = run("worlds", "show", "company", "--tool", "pay_create_charge").stdout.splitlines()
    assert added[0] == "pay_create_charge  (from payments)"
    assert "  customer_id: string (required)" in added
    json_one = json.loads(run("worlds", "show", "company", "--tool", "whoami", "--json").stdout)
    assert json_one["input_schema"]["properties"] == {}


def test_worlds_show_tool_names_close_tools_for_a_wrong_name() -> None:
    result = run("worlds", "show", "payments", "--tool", "charge")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "no tool 'charge'" in result.stderr and "create_charge" in result.stderr
