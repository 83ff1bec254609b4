"""Errored trials: failures that are not the agent's are kept out of the scores, and re-run.

A world whose tool has a bug, a grader that raises, a policy that swallows the
world's exception: each trial is **errored** (``errored: true``), left out of
the mean, pass@k and pass^k, listed apart in the summary, and run again by
``resume``, whose new line supersedes the old. Several in a row stop the eval
with one line naming the cause. The agent's own failures (a policy that
raises) are scored as failures, as before.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, shop_pack
from typer.testing import CliRunner

import seahaven
from seahaven import cli
from seahaven.evaluation import (
    DEFAULT_MAX_CONSECUTIVE_ERRORS,
    EvalStopped,
    PolicySession,
    ResultsFile,
    TrialResult,
    TrialSpec,
    evaluate,
    run_in_process,
    solution_policy,
)
from seahaven.scenarios import ScenarioSet


@pytest.fixture
def shop() -> seahaven.World:
    """The shop, with one tool that has a bug in it."""
    world = make_shop()

    @world.tool
    def jam(ctx: seahaven.Ctx) -> None:
        """Jam the till (a bug in the world, for the tests)."""
        raise RuntimeError("the till jammed")

    return world


def jams_odd_seeds(session: PolicySession) -> None:
    """Solve every trial; on odd seeds, first call the tool with the bug (and let it raise)."""
    if (getattr(session, "seed", 0) or 0) % 2:
        session.call("jam")
    solution_policy(session)


def test_a_world_bug_errors_the_trial_and_leaves_it_out_of_the_scores(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    out = tmp_path / "results.jsonl"
    summary, results = evaluate(pack, jams_odd_seeds, trials=4, out=out)
    jammed = [result for result in results if result.seed is not None and result.seed % 2]
    assert jammed and len(jammed) < len(results)
    for result in jammed:
        assert result.errored and result.error is not None and result.error.kind == "world"
        assert "the call to jam failed in the world: RuntimeError: the till jammed" in (
            result.error.message
        )
        assert (result.score, result.passed) == (0.0, False)
    assert all(not result.errored for result in results if result not in jammed)
    # Only the trials the agent played to the end count: every one of them passed.
    assert summary.mean == 1.0 and summary.pass_at[1] == 1.0
    assert summary.errored == len(jammed) and summary.results == len(results)
    assert {(item["scenario"], item["trial"]) for item in summary.errored_trials} == {
        result.key for result in jammed
    }
    text = summary.render()
    assert f"{len(jammed)} trials errored (not the agent's failure" in text
    assert "world: the call to jam failed in the world" in text
    # The lines say so, and a reader of an older release still sees a score of 0.
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(1 for line in written if line["errored"]) == len(jammed)
    assert all(line["error"]["kind"] == "world" for line in written if line["errored"])


def test_resume_runs_the_errored_trials_again_and_the_new_line_supersedes(
    shop: seahaven.World, tmp_path: Path
) -> None:
    class Agent:
        """One agent (one name in the file) whose world gets mended between the runs."""

        broken = True

        def describe(self) -> str:
            return "the-agent"

        def __call__(self, session: PolicySession) -> None:
            if self.broken:
                jams_odd_seeds(session)
            else:
                solution_policy(session)

    agent = Agent()
    pack = shop_pack(shop)
    out = tmp_path / "results.jsonl"
    _, first = evaluate(pack, agent, trials=4, out=out)
    errored = {result.key for result in first if result.errored}
    assert errored
    ran: list[tuple[str, int]] = []

    def recording(specs: Sequence[TrialSpec], policy: Any) -> Iterator[TrialResult]:
        ran.extend(spec.key for spec in specs)
        yield from run_in_process(specs, policy)

    # The world is mended (the agent no longer meets the bug): only the errored trials run.
    agent.broken = False
    summary, results = evaluate(pack, agent, trials=4, out=out, resume=True, runner=recording)
    assert set(ran) == errored
    assert summary.errored == 0 and summary.mean == 1.0 and summary.results == 8
    assert len(results) == 8 and not any(result.errored for result in results)
    kept = ResultsFile(out).read()
    assert len(kept) == 8 + len(errored)  # the old lines stay; the last line of a trial counts
    assert not any(result.errored for result in ResultsFile(out).read()[8:])


def test_errored_trials_in_a_row_stop_the_eval_naming_the_cause(
    shop: seahaven.World, tmp_path: Path
) -> None:
    def always_jams(session: PolicySession) -> None:
        session.call("jam")

    out = tmp_path / "results.jsonl"
    pack = shop_pack(shop)
    with pytest.raises(EvalStopped) as stopped:
        evaluate(pack, always_jams, trials=4, out=out)
    message = str(stopped.value)
    assert message.startswith(
        f"stopped after {DEFAULT_MAX_CONSECUTIVE_ERRORS} errored trials in a row, the last "
        "ada-total #0 (world: the call to jam failed in the world: RuntimeError: the till "
        "jammed)"
    )
    assert f"the finished trials are in {out}" in message and "--resume" in message
    assert len(out.read_text().splitlines()) == DEFAULT_MAX_CONSECUTIVE_ERRORS
    with pytest.raises(EvalStopped, match="stopped after 2 errored trials in a row"):
        evaluate(pack, always_jams, trials=4, max_consecutive_errors=2)
    # Never stopping: every trial runs, and none is scored.
    summary, results = evaluate(pack, always_jams, trials=4, max_consecutive_errors=None)
    assert len(results) == 8 and summary.errored == 8 and summary.pass_at == {}
    assert "no scored trials yet" in summary.render()
    with pytest.raises(seahaven.WorldBug, match="max_consecutive_errors is a whole number"):
        evaluate(pack, always_jams, max_consecutive_errors=0)


def test_a_world_bug_the_policy_swallows_still_errors_the_trial(shop: seahaven.World) -> None:
    def careless(session: PolicySession) -> None:
        # An agent that turns every exception into a message to its model.
        with contextlib.suppress(Exception):
            session.call("jam")
        solution_policy(session)

    _, [result] = evaluate(shop_pack(shop), careless, scenarios=["ship-ada"])
    assert result.errored and result.error is not None and result.error.kind == "world"


def test_a_grader_that_raises_errors_the_trial(shop: seahaven.World) -> None:
    def broken(episode: seahaven.grading.Episode) -> bool:
        raise KeyError("no such column")

    pack = shop_pack(shop)
    scenario = pack.get("ada-total").model_copy(update={"grader": seahaven.grading.python(broken)})
    broken_pack = ScenarioSet("shop", "1.0.0", [scenario])
    _, [submitted] = evaluate(broken_pack, solution_policy)
    _, [idle] = evaluate(broken_pack, lambda session: None)
    for result in (submitted, idle):
        assert result.errored and result.error is not None and result.error.kind == "world"
        assert "grading raised" in result.error.message or "raised KeyError" in result.error.message


def test_the_agents_own_failures_are_scored(shop: seahaven.World) -> None:
    def gives_up(session: PolicySession) -> None:
        raise RuntimeError("the model ran out of ideas")

    def misuses_the_session(session: PolicySession) -> None:
        session.call(42)  # type: ignore[arg-type]

    _, [misused] = evaluate(shop_pack(shop), misuses_the_session, scenarios=["ship-ada"])
    assert misused.error is not None and misused.error.kind == "policy" and not misused.errored
    assert "session.call takes the tool's name, a string; got 42" in misused.error.message

    summary, results = evaluate(shop_pack(shop), gives_up, trials=2)
    assert all(not result.errored and result.error is not None for result in results)
    assert summary.errored == 0 and summary.errors == 4 and summary.mean == 0.0
    assert summary.pass_at[1] == 0.0
    assert "4 trials ended in the policy's error and scored as failed" in summary.render()


def test_result_lines_stay_readable_both_ways(shop: seahaven.World, tmp_path: Path) -> None:
    """A line of an older release (no errored, policy or split seconds) reads, with its error."""
    _, [result] = evaluate(shop_pack(shop), jams_odd_seeds, scenarios=["ada-total"])
    old = result.model_dump(
        mode="json", exclude={"errored", "policy", "episode_seconds", "grade_seconds"}
    )
    old["error"] = {"kind": "world", "message": "a bug"}
    read = TrialResult.model_validate_json(json.dumps(old))
    assert read.errored and read.policy is None and read.grade_seconds is None
    # Every key an older reader knows is still written, with the meaning it had.
    assert set(old) <= set(json.loads(result.line()))
    with pytest.raises(ValueError, match="errored is True, but an error of kind None"):
        TrialResult.model_validate({**old, "error": None, "errored": True})


def test_the_command_line_stops_in_one_line_and_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "jamming.py"
    module.write_text(
        "import seahaven\n"
        "from grading_worlds import make_shop, shop_pack\n\n"
        "world = make_shop()\n\n\n"
        "@world.tool\n"
        "def jam(ctx: seahaven.Ctx) -> None:\n"
        '    """Jam."""\n'
        "    raise RuntimeError('the till jammed')\n\n\n"
        "pack = shop_pack(world)\n\n\n"
        "def play(session):\n"
        "    session.call('jam')\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "r.jsonl"
    argv = ["eval", "jamming:pack", "--policy", "jamming:play", "-k", "3", "--out", str(out)]
    ran = CliRunner().invoke(cli.build_app(), [*argv, "--max-errors-in-a-row", "2"])
    assert ran.exit_code == 1
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("error: stopped after 2 errored trials in a row, the last ship-ada #1")
    assert "RuntimeError: the till jammed" in line and "--resume" in line
    assert len(out.read_text().splitlines()) == 2


def test_the_command_lines_default_is_the_librarys() -> None:
    from seahaven.cli import evaluate as command

    assert command._MAX_ERRORS == DEFAULT_MAX_CONSECUTIVE_ERRORS
