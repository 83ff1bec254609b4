"""``seahaven episodes run`` with a script: its printed outcomes and the summary of its document."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result
from world_packages import fresh_module, write_world

from seahaven import cli
from seahaven.cli.episode import summarise
from seahaven.registry import plugins

runner = CliRunner()

# A world whose one tool refuses a body that is too long, so a script can show a
# product error in the middle of an episode.
EXTRA = '''

class TooLong(seahaven.ToolError):
    """The body is longer than the product allows."""

    def __init__(self, size: int) -> None:
        super().__init__("TOO_LONG", f"a body of {size} characters is over the limit", None)


@world.tool
def add_checked(ctx: seahaven.Ctx, id: str, body: str) -> dict[str, str]:
    """Add a row whose body is at most ten characters."""
    if len(body) > 10:
        raise TooLong(len(body))
    ctx.db.execute("INSERT INTO ledger_lines (id, body) VALUES (?, ?)", id, body)
    return {"id": id, "state": ctx.state.get("shelf", "none")}


@world.instance_startup
def choose_shelf(ctx: seahaven.Ctx, *, shelf: str = "none") -> None:
    """Which shelf this session files on."""
    ctx.state["shelf"] = shelf


def _shelf_number(text: str) -> int:
    return int(text)  # the line a world's bug raises on


@world.tool
def file_on_shelf(ctx: seahaven.Ctx, shelf: str) -> int:
    """File on a numbered shelf; the world forgot that an agent may send a name."""
    return _shelf_number(shelf)
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throwaway world package importable as ``<module>:world``."""
    name = fresh_module("episodes")
    write_world(tmp_path, name, name="episodes", table="ledger_lines", extra=EXTRA)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.chdir(tmp_path)
    yield name


def run(*argv: str, stdin: str | None = None) -> Result:
    app = cli.build_app(plugins.make_plugin_manager(entry_points=False))
    return runner.invoke(app, list(argv), input=stdin)


def script(*calls: tuple[str, dict[str, object]]) -> str:
    return json.dumps([{"tool": tool, "arguments": arguments} for tool, arguments in calls])


def test_an_episode_prints_every_call_and_goes_on_after_a_product_error(module: str) -> None:
    calls = script(
        ("add_checked", {"id": "a", "body": "short"}),
        ("add_checked", {"id": "b", "body": "far too long to file"}),
        ("add_ledger_lines", {"id": "c", "body": "plain"}),
    )
    result = run(
        "episodes", "run", f"{module}:world", "--clock-mode", "tick", "--seed", "4", stdin=calls
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == '[0] add_checked(id="a", body="short") -> {"id":"a","state":"none"}'
    assert lines[1].endswith("-> TOO_LONG: a body of 20 characters is over the limit")
    assert lines[2] == '[2] add_ledger_lines(id="c", body="plain") -> "c"'
    assert "3 calls, clock tick at" in lines[3]
    assert "change log: 2 records" in result.stdout
    assert "  main.ledger_lines: 2 inserts" in lines


def test_startup_keywords_reach_the_hooks_and_json_values_are_parsed(module: str) -> None:
    calls = script(("add_checked", {"id": "a", "body": "x"}))
    result = run("episodes", "run", f"{module}:world", "--startup", "shelf=top", stdin=calls)
    assert result.exit_code == 0, result.output
    assert '"state":"top"' in result.stdout


def test_the_document_is_written_whole_when_asked(module: str, tmp_path: Path) -> None:
    target = tmp_path / "document.json"
    calls = script(("add_ledger_lines", {"id": "z", "body": "kept"}))
    result = run("episodes", "run", f"{module}:world", "--document", str(target), stdin=calls)
    assert result.exit_code == 0, result.output
    document = json.loads(target.read_text())
    assert document["format"] == "seahaven.state/1"
    assert [record["key"] for record in document["state"]["db"]["log"]] == [{"id": "z"}]
    assert f"wrote {target}" in result.stdout


def test_the_episode_id_names_the_document(module: str, tmp_path: Path) -> None:
    target = tmp_path / "document.json"
    calls = script(("add_ledger_lines", {"id": "z", "body": "kept"}))
    result = run(
        "episodes", "run", f"{module}:world", "--episode-id", "refunds-017",
        "--document", str(target), stdin=calls,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(target.read_text())
    assert document["episode_id"] == "refunds-017"
    # Without it, the document carries the instance's id, as before.
    run("episodes", "run", f"{module}:world", "--document", str(target), stdin=calls)
    assert json.loads(target.read_text())["episode_id"].startswith("inst-")


@pytest.mark.parametrize("value", ["", "x" * 256])
def test_an_episode_id_a_server_would_refuse_is_a_usage_error(module: str, value: str) -> None:
    result = run("episodes", "run", f"{module}:world", "--episode-id", value, stdin="[]")
    assert result.exit_code == 2
    assert "--episode-id" in result.stderr and "at most 255 characters" in result.stderr


def test_a_script_file_is_read_from_disk(module: str, tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    path.write_text(script(("add_ledger_lines", {"id": "f", "body": "from a file"})))
    result = run("episodes", "run", f"{module}:world", "--calls", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("[0] add_ledger_lines(")


@pytest.mark.parametrize(
    ("stdin", "complaint"),
    [
        ("not json at all", "is not JSON"),
        ('[{"arguments": {}}]', "must be an object with a string 'tool'"),
        ('[{"tool": "x", "arguments": [1]}]', "'arguments' must be an object"),
        ('[{"tool": "x", "when": 3}]', "has when"),
    ],
)
def test_a_malformed_script_fails_in_one_line_as_a_bad_episode_file_does(
    module: str, stdin: str, complaint: str
) -> None:
    # The script is read, not parsed off the command line: exit 1, as for episodes run.
    result = run("episodes", "run", f"{module}:world", stdin=stdin)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and complaint in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_missing_script_file_fails_in_one_line(module: str) -> None:
    result = run("episodes", "run", f"{module}:world", "--calls", "nowhere.json")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot read --calls nowhere.json")
    assert result.stderr.count("\n") == 1


def test_an_author_mistake_fails_in_one_line_without_a_traceback(module: str) -> None:
    result = run("episodes", "run", f"{module}:world", "--startup", "shlef=top", stdin="[]")
    assert result.exit_code == 1
    assert "unknown startup keyword 'shlef'" in result.stderr
    assert "Traceback" not in result.output


def test_a_tool_that_raises_is_blamed_on_the_worlds_line_in_one_line(
    module: str, tmp_path: Path
) -> None:
    calls = script(
        ("add_checked", {"id": "a", "body": "short"}), ("file_on_shelf", {"shelf": "top"})
    )
    result = run("episodes", "run", f"{module}:world", stdin=calls)
    assert result.exit_code == 1
    assert result.stdout.startswith("[0] add_checked(")
    source = (tmp_path / module / "__init__.py").read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(source, 1) if "a world's bug" in text)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        "error: tool 'file_on_shelf' raised ValueError: invalid literal"
    )
    assert f"at {module}/__init__.py:{line} (in _shelf_number)" in result.stderr
    assert "the world's code raised it, not seahaven" in result.stderr
    assert "bug in seahaven" not in result.stderr


def test_an_unknown_tool_is_a_product_error_like_any_other(module: str) -> None:
    result = run("episodes", "run", f"{module}:world", stdin=script(("no_such_tool", {})))
    assert result.exit_code == 0, result.output
    assert "[-] no_such_tool() -> unknown_tool: unknown tool: no_such_tool" in result.stdout


def test_the_summary_counts_records_by_store_table_and_operation() -> None:
    document = {
        "format": "seahaven.state/1",
        "world": {"name": "w", "version": "2"},
        "fixture": None,
        "call_count": 2,
        "clock_mode": "fixed",
        "now": "2031-03-14T10:00:00.000Z",
        "composition": {"main": {}, "ledger": {}},
        "state": {
            "db": {
                "log": [
                    {"world": "main", "table": "t", "op": "insert"},
                    {"world": "ledger", "table": "e", "op": "update"},
                    {"world": "main", "table": "t", "op": "insert"},
                ]
            }
        },
    }
    assert summarise(document) == [
        "state document seahaven.state/1: world w 2, fixture (blank), 2 calls, clock fixed at "
        "2031-03-14T10:00:00.000Z",
        "stores: main, ledger",
        "change log: 3 records",
        "  ledger.e: 1 update",
        "  main.t: 2 inserts",
    ]


def test_the_storage_option_changes_nothing_the_document_holds(module: str, tmp_path: Path) -> None:
    calls = script(("add_ledger_lines", {"id": "z", "body": "kept"}))
    documents = {}
    for storage in ("memory", "disk"):
        target = tmp_path / f"{storage}.json"
        result = run(
            "episodes", "run", f"{module}:world", "--storage", storage, "--seed", "2",
            "--clock-mode", "fixed", "--episode-id", "same", "--document", str(target),
            stdin=calls,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        document = json.loads(target.read_text())
        # A blank instance's clock starts at the moment it is made.
        document.pop("now")
        documents[storage] = document
    assert documents["memory"] == documents["disk"]
    result = run("episodes", "run", f"{module}:world", "--storage", "tape", stdin=calls)
    assert result.exit_code == 1
    assert "storage must be 'memory' or 'disk'" in result.output


FIXED = ("--seed", "4", "--clock-mode", "fixed", "--now", "2026-06-01T09:00:00.000Z")


def test_the_old_name_is_gone(module: str) -> None:
    calls = script(("add_ledger_lines", {"id": "z", "body": "kept"}))
    old = run("episode", f"{module}:world", *FIXED, stdin=calls)
    assert old.exit_code == 2
    assert "No such command 'episode'" in old.stderr


def test_a_file_option_without_episodes_is_a_usage_error(module: str, tmp_path: Path) -> None:
    result = run("episodes", "run", f"{module}:world", "--out", str(tmp_path / "o"), stdin="[]")
    assert result.exit_code == 2
    assert "--out" in result.stderr and "--episodes FILE" in result.stderr


def test_a_script_option_with_episodes_is_a_usage_error(module: str, tmp_path: Path) -> None:
    episodes = tmp_path / "in.jsonl"
    episodes.write_text('{"calls": []}\n')
    result = run(
        "episodes", "run", f"{module}:world", "--episodes", str(episodes),
        "--out", str(tmp_path / "out.jsonl"), "--seed", "3",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--seed" in result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_file_of_episodes_runs_in_process_without_the_ray_plugin(
    module: str, tmp_path: Path
) -> None:
    episodes = tmp_path / "in.jsonl"
    line = {"calls": [{"tool": "add_ledger_lines", "arguments": {"id": "z", "body": "kept"}}]}
    episodes.write_text(json.dumps({"episode_id": "one", **line}) + "\n")
    out = tmp_path / "out.jsonl"
    result = run(
        "episodes", "run", f"{module}:world", "--episodes", str(episodes), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"1 episodes run (1 ok, 0 failed); results in {out}"
    [written] = [json.loads(text) for text in out.read_text().splitlines()]
    assert written["episode_id"] == "one" and written["status"] == "ok"


def test_ray_without_a_runner_names_the_extra_to_install(module: str, tmp_path: Path) -> None:
    from seahaven.registry.extras import EXTRAS

    episodes = tmp_path / "in.jsonl"
    episodes.write_text('{"calls": []}\n')
    out = tmp_path / "out.jsonl"
    result = run(
        "episodes", "run", f"{module}:world", "--episodes", str(episodes), "--out", str(out),
        "--ray", "local",
    )  # fmt: skip
    assert result.exit_code == 1
    assert EXTRAS["seahaven.ray"].install_command in result.stderr
    assert not out.exists()
