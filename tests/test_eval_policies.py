"""Policies: async ones are awaited, what is not a policy is refused, and every line names one.

An ``async def`` policy plays its episodes to the end (in process, inside a
running event loop too, and through ``run_trial_async``); anything that is not a
policy is refused before the first trial, naming what was given; each result
line records the policy that played it, and resuming a file with another policy
is refused naming both.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, shop_pack

import seahaven
from seahaven.evaluation import (
    PolicySession,
    TrialResult,
    TrialSpec,
    check_policy,
    describe_policy,
    evaluate,
    plan,
    run_in_process,
    run_trial,
    run_trial_async,
    solution_policy,
)


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


async def async_solution(session: PolicySession) -> None:
    """The reference solution, played by an async policy that yields between calls."""
    for step in session.scenario.solution or ():
        await asyncio.sleep(0)
        if step.tool == "submit":
            session.submit(step.arguments["answer"])
            return
        session.call(step.tool, **step.arguments)


STABLE = ("scenario", "trial", "seed", "score", "passed", "checks", "calls", "state_sha256")


def stable(results: Sequence[TrialResult]) -> list[dict[str, Any]]:
    return [result.model_dump(include=set(STABLE)) for result in results]


def test_an_async_policy_is_awaited_and_scores_what_the_sync_one_does(
    shop: seahaven.World,
) -> None:
    pack = shop_pack(shop)
    summary, results = evaluate(pack, async_solution, trials=2)
    assert summary.mean == 1.0 and all(result.error is None for result in results)
    _, synchronous = evaluate(pack, solution_policy, trials=2)
    assert stable(results) == stable(synchronous)


def test_an_async_policy_is_awaited_inside_a_running_event_loop(shop: seahaven.World) -> None:
    pack = shop_pack(shop)

    async def notebook() -> list[TrialResult]:
        # A notebook or an async application calling the synchronous API.
        return evaluate(pack, async_solution, trials=1)[1]

    results = asyncio.run(notebook())
    assert [result.score for result in results] == [1.0, 1.0]


def test_run_trial_async_gives_the_result_run_trial_gives(shop: seahaven.World) -> None:
    specs = plan(shop_pack(shop), trials=2)

    async def all_of_them() -> list[TrialResult]:
        return [await run_trial_async(spec, async_solution) for spec in specs]

    awaited = asyncio.run(all_of_them())
    assert stable(awaited) == stable([run_trial(spec, solution_policy) for spec in specs])
    assert stable(awaited) == stable([run_trial(spec, async_solution) for spec in specs])


def test_an_async_policy_that_raises_is_the_policys_error(shop: seahaven.World) -> None:
    async def crashes(session: PolicySession) -> None:
        await asyncio.sleep(0)
        session.call("set_status", order_id="o1", status="shipped")
        raise RuntimeError("the model went quiet")

    _, [result] = evaluate(shop_pack(shop), crashes, scenarios=["ship-ada"])
    assert result.error is not None and result.error.kind == "policy" and not result.errored
    assert result.error.message == "RuntimeError: the model went quiet" and result.calls == 1


def two_parameters(session: PolicySession, model: str) -> None:
    """Not a policy: it needs a second argument."""


class Agent:
    """A policy's class, which is not a policy until it is made."""

    def __call__(self, session: PolicySession) -> None:
        solution_policy(session)


def refusals() -> list[tuple[Any, str]]:
    coroutine = async_solution  # called below, in the test, so that it can be closed
    return [
        (42, "the policy 42 is of type int, not a function"),
        (Agent, "is a class; give an instance of it"),
        (lambda: None, "takes (), and a policy is called with one argument, the session"),
        (two_parameters, "takes (session: 'PolicySession', model: 'str')"),
        (coroutine, "is an awaitable (an async function already called"),
        ("nowhere_at_all:play", "cannot import 'nowhere_at_all'"),
        ("seahaven:__version__", "is of type str, not a function"),
    ]


@pytest.mark.parametrize(("given", "said"), refusals())
def test_what_is_not_a_policy_is_refused_before_the_first_trial(
    shop: seahaven.World, tmp_path: Path, given: Any, said: str
) -> None:
    if given is async_solution:
        given = async_solution(None)  # type: ignore[arg-type]
    started: list[int] = []

    def runner(specs: Sequence[TrialSpec], policy: Any) -> Iterator[TrialResult]:
        started.append(len(specs))
        yield from run_in_process(specs, policy)

    out = tmp_path / "results.jsonl"
    try:
        with pytest.raises(seahaven.WorldBug) as refused:
            evaluate(shop_pack(shop), given, out=out, runner=runner)
    finally:
        if asyncio.iscoroutine(given):
            given.close()
    assert said in str(refused.value)
    assert started == [] and not out.exists()


def test_policies_that_are_policies_pass_the_check() -> None:
    def with_defaults(session: PolicySession, model: str = "small", *rest: Any) -> None:
        pass

    for policy in (solution_policy, async_solution, Agent(), with_defaults, print):
        assert check_policy(policy) is policy
    assert check_policy(functools.partial(two_parameters, model="big")) is not None


def test_every_line_names_the_policy_that_played_it(shop: seahaven.World, tmp_path: Path) -> None:
    class ModelAgent:
        def describe(self) -> str:
            return "chat:gpt-test (temperature 0)"

        def __call__(self, session: PolicySession) -> None:
            solution_policy(session)

    pack = shop_pack(shop)
    _, [result] = evaluate(pack, solution_policy, scenarios=["ship-ada"])
    assert result.policy == "seahaven.evaluation.policies:solution_policy"
    assert describe_policy(solution_policy) == result.policy
    # The same function named as module:attr is the same policy.
    _, [named] = evaluate(pack, "seahaven.evaluation:solution_policy", scenarios=["ship-ada"])
    assert named.policy == result.policy
    out = tmp_path / "results.jsonl"
    evaluate(pack, ModelAgent(), trials=2, out=out)
    assert {json.loads(line)["policy"] for line in out.read_text().splitlines()} == {
        "chat:gpt-test (temperature 0)"
    }
    assert describe_policy(functools.partial(two_parameters, model="x")).endswith(":two_parameters")
    assert describe_policy(Agent()) == f"{__name__}:Agent"


def test_resuming_with_another_policy_is_refused_naming_both(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    out = tmp_path / "results.jsonl"

    def other(session: PolicySession) -> None:
        solution_policy(session)

    evaluate(pack, solution_policy, trials=1, out=out)
    with pytest.raises(seahaven.WorldBug) as refused:
        evaluate(pack, other, trials=2, out=out, resume=True)
    message = str(refused.value)
    assert "played by the policy 'seahaven.evaluation.policies:solution_policy'" in message
    assert f"this run's policy is '{describe_policy(other)}'" in message
    assert len(out.read_text().splitlines()) == 2  # nothing written
    # The same policy resumes; lines of an older release (naming no policy) resume too.
    summary, _ = evaluate(pack, solution_policy, trials=2, out=out, resume=True)
    assert summary.results == 4
    old = [json.loads(line) for line in out.read_text().splitlines()]
    for line in old:
        del line["policy"]
    out.write_text("".join(json.dumps(line) + "\n" for line in old))
    summary, _ = evaluate(pack, other, trials=2, out=out, resume=True)
    assert summary.results == 4


def test_a_describe_that_names_nothing_is_refused(shop: seahaven.World) -> None:
    class Nameless:
        def describe(self) -> str:
            return " "

        def __call__(self, session: PolicySession) -> None:
            pass

    with pytest.raises(seahaven.WorldBug, match=r"describe\(\) returned ' '"):
        evaluate(shop_pack(shop), Nameless())
