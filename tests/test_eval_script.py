"""``seahaven eval`` and ``seahaven scenarios check`` as a new user meets them: the console script.

Each test runs the installed ``seahaven`` script in a folder of the user's own
files (a policy, a world, a pack, a grader), nothing installed, as someone
trying the project from a fresh clone would: ``module:attr`` imports from the
working directory, a folder holding ``pack.yaml`` is a pack, and what is wrong
is said in one line before any trial runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("seahaven")

WORLD = '''
import seahaven

world = seahaven.World(
    name="memo-pad",
    version="1.0.0",
    schema="CREATE TABLE memos (memo_id INTEGER PRIMARY KEY, content TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def write_memo(ctx: seahaven.Ctx, content: str) -> None:
    """Jot a memo down."""
    ctx.db.execute("INSERT INTO memos (content) VALUES (?)", content)
'''

GRADERS = '''
def wrote_milk(episode):
    """A grader of the user's own, in a module beside the shell: one memo, saying milk."""
    written = list(episode.changes)
    return len(written) == 1 and written[0].after == {"memo_id": 1, "content": "milk"}
'''

AGENT = """
import asyncio

from seahaven.evaluation import solution_policy


def play(session):
    solution_policy(session)


async def play_async(session):
    await asyncio.sleep(0)
    for step in session.scenario.solution or ():
        if step.tool == "submit":
            session.submit(step.arguments["answer"])
            return
        session.call(step.tool, **step.arguments)
        await asyncio.sleep(0)


def two_arguments(session, model):
    solution_policy(session)


class Agent:
    def __call__(self, session):
        solution_policy(session)
"""

PACK = """
name: memos
version: "1.0.0"
world: memo_world:world
splits:
  test: [milk, bread]
"""

TASKS = """
- id: milk
  instructions: Jot down a memo that says milk.
  grader: {python: memo_graders:wrote_milk}
  solution: [{tool: write_memo, arguments: {content: milk}}]
- id: bread
  instructions: "Jot down a memo that says bread #2."
  grader:
    all_of:
      - count: {table: memos, where: {content: "bread #2"}, equals: 1}
      - nothing_else_changed: {allow: [{table: memos, where: {content: "bread #2"}}]}
  solution: [{tool: write_memo, arguments: {content: "bread #2"}}]
"""

MODULE_PACK = """
from pathlib import Path

from seahaven.scenarios import ScenarioSet

pack = ScenarioSet.from_directory(Path(__file__).parent / "memos")
"""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A folder holding a user's files, none of them installed."""
    if not SCRIPT.exists():
        pytest.fail(f"{SCRIPT} is missing; install the project so its console script exists")
    folder = tmp_path / "work"
    (folder / "memos").mkdir(parents=True)
    (folder / "memo_world.py").write_text(textwrap.dedent(WORLD), encoding="utf-8")
    (folder / "memo_graders.py").write_text(textwrap.dedent(GRADERS), encoding="utf-8")
    (folder / "my_agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (folder / "mypack.py").write_text(textwrap.dedent(MODULE_PACK), encoding="utf-8")
    (folder / "memos" / "pack.yaml").write_text(PACK, encoding="utf-8")
    (folder / "memos" / "tasks.yaml").write_text(TASKS, encoding="utf-8")
    return folder


def seahaven(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run the console script in ``folder``, with nothing of the folder on ``PYTHONPATH``."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.pop("COLUMNS", None)
    return subprocess.run(
        [str(SCRIPT), *argv],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_eval_and_check_import_the_users_modules_from_the_current_directory(here: Path) -> None:
    checked = seahaven(here, "scenarios", "check", "mypack:pack")
    assert checked.returncode == 0, checked.stderr
    assert "all 2 scenarios of memos 1.0.0 are sound" in checked.stdout
    ran = seahaven(here, "eval", "mypack:pack", "--policy", "my_agent:play", "--out", "r.jsonl")
    assert ran.returncode == 0, ran.stderr
    results = lines(here / "r.jsonl")
    assert [(line["scenario"], line["score"]) for line in results] == [
        ("milk", 1.0),
        ("bread", 1.0),
    ]
    assert {line["policy"] for line in results} == {"my_agent:play"}


def test_a_folder_holding_pack_yaml_is_a_pack(here: Path) -> None:
    checked = seahaven(here, "scenarios", "check", "./memos")
    assert checked.returncode == 0, checked.stderr
    ran = seahaven(here, "eval", "memos/", "--policy", "my_agent:play", "--out", "r.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert len(lines(here / "r.jsonl")) == 2
    # A bare word is an installed pack's name; the folder of that name is pointed out.
    bare = seahaven(here, "eval", "memos", "--policy", "my_agent:play", "--out", "s.jsonl")
    assert bare.returncode == 1
    assert "./memos holds a pack.yaml: write ./memos to load that folder" in bare.stderr
    assert not (here / "s.jsonl").exists()


def test_an_async_policy_is_awaited(here: Path) -> None:
    argv = ("eval", "./memos", "--policy", "my_agent:play_async", "-k", "2", "--out", "r.jsonl")
    ran = seahaven(here, *argv)
    assert ran.returncode == 0, ran.stderr
    assert "never awaited" not in ran.stderr
    assert {line["score"] for line in lines(here / "r.jsonl")} == {1.0}


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        ("my_agent:Agent", "'my_agent:Agent' is a class; give an instance of it"),
        ("my_agent:two_arguments", "'my_agent:two_arguments' takes (session, model)"),
    ],
)
def test_what_is_not_a_policy_is_refused_before_any_trial(
    here: Path, policy: str, said: str
) -> None:
    ran = seahaven(here, "eval", "./memos", "--policy", policy, "--out", "r.jsonl")
    assert ran.returncode == 1
    assert said in ran.stderr, ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
    assert not (here / "r.jsonl").exists()


def test_an_unknown_scenario_lists_the_packs_ids(here: Path) -> None:
    argv = ("eval", "./memos", "--policy", "my_agent:play", "--scenario", "eggs")
    ran = seahaven(here, *argv, "--out", "r.jsonl")
    assert ran.returncode == 1
    assert "pack 'memos' has no scenario 'eggs'; its scenarios are milk, bread" in ran.stderr
    assert not (here / "r.jsonl").exists()


def test_a_pack_whose_world_does_not_import_fails_as_it_loads(here: Path) -> None:
    (here / "memos" / "pack.yaml").write_text(
        PACK.replace("memo_world:world", "no_such_world:world"), encoding="utf-8"
    )
    ran = seahaven(here, "eval", "./memos", "--policy", "my_agent:play", "--out", "r.jsonl")
    assert ran.returncode == 1
    [line] = ran.stderr.strip().splitlines()
    assert "pack 'memos' cannot run, as its world does not load" in line
    assert "cannot import 'no_such_world'" in line
    assert not (here / "r.jsonl").exists()


def test_check_catches_an_instruction_a_yaml_comment_cut_short(here: Path) -> None:
    (here / "memos" / "tasks.yaml").write_text(
        TASKS.replace(
            '"Jot down a memo that says bread #2."', "Jot down a memo that says bread #2."
        ),
        encoding="utf-8",
    )
    checked = seahaven(here, "scenarios", "check", "./memos")
    assert checked.returncode == 1
    [failed] = [line for line in checked.stdout.splitlines() if line.startswith("FAIL")]
    assert failed.startswith("FAIL  bread: ")
    assert "tasks.yaml:7: its instructions stop where an unquoted ' #' starts" in failed
    assert "told only 'Jot down a memo that says bread'" in failed
