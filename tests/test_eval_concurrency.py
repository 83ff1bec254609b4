"""Trials several at once in this process: the same results, time limits, stopping and resuming."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, ship_scenario, shop_pack

import seahaven
from seahaven.evaluation import (
    DEFAULT_CONCURRENCY,
    InProcessRunner,
    LocalSession,
    PolicySession,
    ResultsFile,
    evaluate,
    in_process,
    is_async_policy,
    plan,
    run_concurrently,
    run_trial_async,
    solution_policy,
)

# What may differ between two runs of the same trials: how long they took, and where.
TIMINGS = {"seconds", "episode_seconds", "grade_seconds", "runner"}


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


def comparable(path: Path) -> list[dict[str, Any]]:
    """A results file's lines without their timings, in the plan's order."""
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    for line in lines:
        for key in TIMINGS:
            line.pop(key)
    return sorted(lines, key=lambda line: (line["scenario"], line["trial"]))


async def async_solution(session: PolicySession) -> None:
    """The reference solution, with a pause before each call as a model's answer would take."""
    for step in session.scenario.solution or ():
        await asyncio.sleep(0.002)
        if step.tool == "submit":
            session.submit(step.arguments["answer"])
            return
        session.call(step.tool, **step.arguments)


def test_several_at_once_give_the_lines_one_at_a_time_gives(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    for policy in (solution_policy, async_solution):
        one, eight = (
            tmp_path / f"{policy.__name__}-1.jsonl",
            tmp_path / f"{policy.__name__}-8.jsonl",
        )
        evaluate(pack, policy, trials=6, out=one, runner=in_process(concurrency=1))
        summary, results = evaluate(
            pack, policy, trials=6, out=eight, runner=in_process(concurrency=8)
        )
        assert comparable(one) == comparable(eight)
        assert summary.mean == 1.0 and len(results) == 12
        # Returned in the plan's order, however they ended.
        assert [result.key for result in results] == [spec.key for spec in plan(pack, trials=6)]


def test_an_async_policy_runs_several_at_once_by_default(shop: seahaven.World) -> None:
    running = 0
    most = 0

    async def counted(session: PolicySession) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.02)
        running -= 1
        await async_solution(session)

    assert is_async_policy(counted) and not is_async_policy(solution_policy)
    summary, _ = evaluate(shop_pack(shop), counted, trials=8)
    assert summary.mean == 1.0
    assert most == DEFAULT_CONCURRENCY  # 16 trials, 8 at a time
    runner = in_process()
    assert isinstance(runner, InProcessRunner)
    assert runner.concurrency_for(counted) == DEFAULT_CONCURRENCY
    assert runner.concurrency_for(solution_policy) == 1


def test_a_plain_policy_runs_on_threads_when_given_more_than_one(shop: seahaven.World) -> None:
    threads: set[str] = set()

    def noted(session: PolicySession) -> None:
        threads.add(threading.current_thread().name)
        time.sleep(0.01)
        solution_policy(session)

    summary, _ = evaluate(shop_pack(shop), noted, trials=4, runner=in_process(concurrency=4))
    assert summary.mean == 1.0
    assert threading.main_thread().name not in threads and len(threads) > 1


def test_a_trial_past_its_time_limit_is_the_agents_failure_scored_0(
    shop: seahaven.World,
) -> None:
    async def stalls(session: PolicySession) -> None:
        session.call("set_status", order_id="o1", status="shipped")
        await asyncio.sleep(3600)

    summary, results = evaluate(
        shop_pack(shop), stalls, runner=in_process(trial_timeout=0.2, concurrency=2)
    )
    for result in results:
        assert result.error is not None and result.error.kind == "timeout"
        assert "time limit of 0.2 seconds" in result.error.message
        assert not result.errored and result.score == 0.0 and not result.passed
        assert result.calls == 1 and result.checks  # graded where it stood, scored 0
    assert summary.errored == 0 and summary.results == 2


def test_a_plain_policy_past_its_time_limit_stops_at_its_next_call(
    shop: seahaven.World,
) -> None:
    calls = 0
    stopped = threading.Event()

    def busy(session: PolicySession) -> None:
        nonlocal calls
        try:
            while True:
                session.call("total_for", customer="ada")
                calls += 1
                time.sleep(0.01)
        except seahaven.ToolError as refused:
            assert refused.code == "episode_over"
            stopped.set()

    # A budget the policy does not spend before its time is up.
    pack = seahaven.scenarios.ScenarioSet("big", "1.0.0", [ship_scenario(shop, budget=100_000)])
    _, results = evaluate(pack, busy, runner=in_process(trial_timeout=0.1))
    assert results[0].error is not None and results[0].error.kind == "timeout"
    assert stopped.wait(10), "the policy was not stopped at its next call"
    assert 0 < calls < 100_000


def test_a_trial_that_cannot_start_stops_the_run_and_keeps_what_finished(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    ship = pack.get("ship-ada")
    # Its start names a fixture the world does not have: the trial cannot start.
    broken = ship_scenario(shop, id="broken", start={"fixture": "nowhere"})
    mixed = seahaven.scenarios.ScenarioSet("mixed", "1.0.0", [ship, broken])
    out = tmp_path / "r.jsonl"
    with pytest.raises(seahaven.WorldBug, match="cannot start"):
        evaluate(mixed, async_solution, trials=3, out=out, runner=in_process(concurrency=1))
    kept = ResultsFile(out).read()
    assert [result.scenario for result in kept] == ["ship-ada"] * 3


def test_stopping_mid_run_keeps_every_finished_trial_once_and_resume_runs_the_rest(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    out = tmp_path / "r.jsonl"
    transcripts = tmp_path / "r.transcripts.jsonl"

    def stop_after_five(result: Any, done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(
            pack,
            async_solution,
            trials=10,
            out=out,
            transcripts=transcripts,
            runner=in_process(concurrency=4),
            progress=stop_after_five,
        )
    # The loop's thread is gone, and the trials that ended are in both files, once each.
    assert not any(thread.name == "seahaven-trials" for thread in threading.enumerate())
    first = [result.key for result in ResultsFile(out).read()]
    assert len(first) == 5 == len(set(first))
    assert len(transcripts.read_text().splitlines()) == 5
    summary, _ = evaluate(
        pack, async_solution, trials=10, out=out, transcripts=transcripts, resume=True
    )
    keys = [result.key for result in ResultsFile(out).read()]
    assert sorted(keys) == sorted(spec.key for spec in plan(pack, trials=10))
    recorded = [json.loads(line) for line in transcripts.read_text().splitlines()]
    assert sorted((r["scenario"], r["trial"]) for r in recorded) == sorted(keys)
    assert summary.mean == 1.0


def test_the_policys_aclose_is_awaited_on_its_loop_once_the_trials_are_done(
    shop: seahaven.World,
) -> None:
    class Agent:
        def __init__(self) -> None:
            self.loops: set[int] = set()
            self.closed: list[int] = []

        async def __call__(self, session: PolicySession) -> None:
            self.loops.add(id(asyncio.get_running_loop()))
            await async_solution(session)

        async def aclose(self) -> None:
            self.closed.append(id(asyncio.get_running_loop()))

    agent = Agent()
    evaluate(shop_pack(shop), agent, trials=3, runner=in_process(concurrency=3))
    assert len(agent.loops) == 1 and agent.closed == list(agent.loops)
    # One at a time, the trials of an async policy share one loop too.
    alone = Agent()
    evaluate(shop_pack(shop), alone, trials=3, runner=in_process(concurrency=1))
    assert len(alone.loops) == 1 and alone.closed == list(alone.loops)


def test_the_runner_refuses_options_that_cannot_be(shop: seahaven.World) -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(seahaven.WorldBug, match="concurrency is a whole number"):
            in_process(concurrency=bad)  # type: ignore[arg-type]
    for bad_timeout in (0, -2, "soon"):
        with pytest.raises(seahaven.WorldBug, match="trial_timeout is a number of seconds"):
            in_process(trial_timeout=bad_timeout)  # type: ignore[arg-type]
    with pytest.raises(seahaven.WorldBug, match="concurrency"):
        list(run_concurrently(plan(shop_pack(shop)), solution_policy, concurrency=0))


def test_run_trial_async_hands_the_pack_policy_document_to_the_session(
    shop: seahaven.World,
) -> None:
    pack = shop_pack(shop)
    seen: list[str | None] = []

    async def reads(session: PolicySession) -> None:
        assert isinstance(session, LocalSession)
        seen.append(session.policy_document)

    [spec] = plan(pack, scenarios=["ada-total"])
    asyncio.run(run_trial_async(spec, reads))
    # A pack with a policy document (an attribute a pack of this release may carry).
    pack.policy = "Never refund more than was charged."  # type: ignore[attr-defined]
    [spec] = plan(pack, scenarios=["ada-total"])
    asyncio.run(run_trial_async(spec, reads))
    assert seen == [None, "Never refund more than was charged."]
