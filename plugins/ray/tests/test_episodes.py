"""Episodes and results as data, and the in-process runner: no Ray needed here."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from episode_cases import ExpenseReviewer, Explodes, mixed, policy_driven, principal, scripted
from pydantic import ValidationError
from seahaven_ray import (
    CallOutcome,
    Episode,
    EpisodeResult,
    ToolCall,
    WorldLoader,
    run_episode,
    run_in_process,
)

import seahaven


def test_a_scripted_episode_runs_every_call_and_keeps_tool_errors_as_observations() -> None:
    episode = scripted(5)  # acts as marcus, and ends with a call to a tool that is not there
    result = run_episode(episode)

    assert result.ok and result.error is None
    assert [call.tool for call in result.calls] == [call.tool for call in episode.calls or []]
    unknown = result.calls[-1]
    assert unknown.error is not None and unknown.error.type == "tool_not_found"
    assert unknown.error.code == "unknown_tool"
    # A call to a tool that is not there is refused before dispatch, so it is not counted.
    assert result.state is not None and result.state["call_count"] == len(result.calls) - 1
    assert result.state["fixture"]["id"] == "acme"
    # The document names the episode, not the instance that ran it.
    assert result.state["episode_id"] == episode.episode_id
    assert result.worker == "in-process" and result.attempts == 1
    assert result.timings.total_seconds >= result.timings.calls_seconds > 0


def test_the_same_episode_twice_gives_the_same_calls_and_state_document() -> None:
    from episode_cases import comparable

    for episode in (scripted(5), policy_driven(1)):
        first, second = run_episode(episode), run_episode(episode)
        assert comparable(first) == comparable(second)
        assert first.state is not None and first.state["state"]["db"]["log"]


def test_an_episode_in_memory_and_on_disk_gives_the_same_calls_and_state_document() -> None:
    from episode_cases import comparable

    episode = scripted(3)
    memory = run_episode(episode.model_copy(update={"storage": "memory"}))
    disk = run_episode(episode.model_copy(update={"storage": "disk"}))
    assert memory.ok and comparable(memory) == comparable(disk)
    with pytest.raises(ValidationError, match="storage"):
        Episode(episode_id="e", world="company", calls=[], storage="tape")  # type: ignore[arg-type]


def test_a_call_dumps_with_result_or_error_never_both() -> None:
    result = run_episode(scripted(5))
    lines = [json.loads(call.model_dump_json()) for call in result.calls]
    assert set(lines[0]) == {"tool", "arguments", "result"}
    assert set(lines[-1]) == {"tool", "arguments", "error"}
    returned_none = CallOutcome(tool="noop", result=None)
    assert json.loads(returned_none.model_dump_json()) == {
        "tool": "noop",
        "arguments": {},
        "result": None,
    }


def test_a_result_round_trips_through_json() -> None:
    for episode in (scripted(2), policy_driven(1)):
        result = run_episode(episode)
        text = result.model_dump_json()
        again = EpisodeResult.model_validate_json(text)
        assert again.model_dump_json() == text
        assert json.loads(text)["episode_id"] == episode.episode_id


def test_a_policy_episode_is_written_with_its_name_and_cannot_run_from_json_alone() -> None:
    episode = policy_driven(1)
    dumped = json.loads(episode.model_dump_json())
    assert "policy" not in dumped
    assert dumped["policy_name"] == "episode_cases:ExpenseReviewer"
    loaded = Episode.model_validate(dumped)
    result = run_episode(loaded)
    assert result.status == "failed" and result.error is not None
    assert result.error.kind == "policy"
    assert "pass the callable as policy=" in result.error.message


def test_the_policy_sees_the_tools_and_every_observation_so_far() -> None:
    seen_lengths: list[int] = []

    def policy(tools: list[dict[str, Any]], seen: list[CallOutcome]) -> dict[str, Any] | None:
        assert any(tool["name"] == "whoami" for tool in tools)
        seen_lengths.append(len(seen))
        if len(seen) == 3:
            return None
        return {"tool": "whoami", "arguments": {}}

    episode = Episode(episode_id="p", world="company", fixture="acme", policy=policy)
    result = run_episode(episode)
    assert result.ok and seen_lengths == [0, 1, 2, 3]
    assert [call.result["email"] for call in result.calls] == ["dana@acme-robotics.test"] * 3


def test_a_policy_driven_review_decides_from_what_it_observed() -> None:
    result = run_episode(policy_driven(0))  # dana, an admin, with a limit of 5000
    assert result.ok
    tools = [call.tool for call in result.calls]
    assert tools[:2] == ["whoami", "list_expenses"]
    assert {"approve_expense", "reject_expense"} <= set(tools[2:])
    # Aiko has no reimbursement account on file, so approving hers is refused: an observation.
    refusals = {call.error.code for call in result.calls if call.error is not None}
    assert refusals == {"INVALID_STATE"}


def test_a_policy_that_raises_fails_its_episode_and_keeps_what_it_did() -> None:
    episode = Episode(episode_id="boom", world="company", fixture="acme", policy=Explodes())
    result = run_episode(episode)
    assert result.status == "failed" and result.error is not None
    assert result.error.kind == "policy"
    assert "RuntimeError: the policy lost its train of thought" in result.error.message
    assert [call.tool for call in result.calls] == ["whoami"]
    assert result.state is not None and result.state["call_count"] == 1


def test_a_policy_that_returns_something_else_or_never_stops_fails_its_episode() -> None:
    def odd(tools: list[dict[str, Any]], seen: list[CallOutcome]) -> Any:
        return "whoami"

    def chatty(tools: list[dict[str, Any]], seen: list[CallOutcome]) -> ToolCall:
        return ToolCall(tool="whoami")

    def malformed(tools: list[dict[str, Any]], seen: list[CallOutcome]) -> Any:
        return {"tool": "whoami", "args": {}}

    odd_result = run_episode(Episode(episode_id="a", world="company", policy=odd))
    assert odd_result.error is not None and "returned a str" in odd_result.error.message
    bad = run_episode(Episode(episode_id="b", world="company", policy=malformed))
    assert bad.error is not None and "is not a call" in bad.error.message
    long = run_episode(Episode(episode_id="c", world="company", policy=chatty, max_calls=4))
    assert long.error is not None and long.error.kind == "policy"
    assert "max_calls=4" in long.error.message and len(long.calls) == 4


def test_world_errors_are_results_not_exceptions() -> None:
    unknown_fixture = run_episode(
        Episode(episode_id="f", world="company", fixture="nowhere", calls=[])
    )
    assert unknown_fixture.status == "failed" and unknown_fixture.error is not None
    assert unknown_fixture.error.kind == "world" and "nowhere" in unknown_fixture.error.message
    assert unknown_fixture.state is None and unknown_fixture.calls == []

    stranger = run_episode(
        Episode(
            episode_id="s",
            world="company",
            fixture="acme",
            startup={"principal": "nobody@example.test"},
            calls=[],
        )
    )
    assert stranger.error is not None and "not on the company's staff" in stranger.error.message

    no_world = run_episode(Episode(episode_id="w", world="no-such-world", calls=[]))
    assert no_world.error is not None and no_world.error.kind == "world"
    assert "no world is registered as 'no-such-world'" in no_world.error.message


def test_an_exception_from_world_code_ends_the_episode_as_a_world_error() -> None:
    world = seahaven.World(
        name="brittle",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def crack(ctx: seahaven.Ctx) -> None:
        """Fail the way a bug does."""
        raise ValueError("a bug in the tool")

    loader = WorldLoader({"brittle": world})
    calls = [ToolCall(tool="crack"), ToolCall(tool="crack")]
    result = run_episode(Episode(episode_id="x", world="brittle", calls=calls), worlds=loader)
    assert result.status == "failed" and result.error is not None
    assert result.error.kind == "world" and "ValueError: a bug in the tool" in result.error.message
    assert len(result.calls) == 1 and result.calls[0].error is not None
    assert result.calls[0].error.type == "world_bug"
    assert result.state is not None and result.state["call_count"] == 1


def test_an_episode_has_calls_or_a_policy_and_sane_fields() -> None:
    with pytest.raises(ValidationError, match="neither calls nor a policy"):
        Episode(episode_id="e", world="company")
    with pytest.raises(ValidationError, match="both calls and a policy"):
        Episode(episode_id="e", world="company", calls=[], policy=ExpenseReviewer(1))
    with pytest.raises(ValidationError, match="clock_mode"):
        Episode.model_validate({"episode_id": "e", "world": "w", "calls": [], "clock_mode": "x"})
    with pytest.raises(ValidationError, match="seed"):
        Episode(episode_id="e", world="company", calls=[], seed=-1)
    with pytest.raises(ValidationError, match="extra"):
        ToolCall.model_validate({"tool": "whoami", "args": {}})


def test_run_in_process_yields_one_result_per_episode_in_order() -> None:
    episodes = mixed(12)
    results = list(run_in_process(episodes))
    assert [result.episode_id for result in results] == [e.episode_id for e in episodes]
    assert all(result.ok for result in results)


def test_an_episode_id_given_twice_is_refused() -> None:
    twice = [scripted(1), scripted(1)]
    results = run_in_process(twice)
    assert next(results).episode_id == "scripted-1"
    with pytest.raises(seahaven.WorldBug, match="given twice"):
        next(results)


def test_a_world_loader_loads_each_world_once_across_threads() -> None:
    loader = WorldLoader()
    found: list[seahaven.World] = []

    def load() -> None:
        found.append(loader.load("company"))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(world) for world in found}) == 1
    assert loader.load("company_world:world") is found[0]
    with pytest.raises(seahaven.WorldBug, match="no world is registered"):
        loader.load("nothing-here")


def test_the_principal_helper_names_a_member_of_staff() -> None:
    result = run_episode(
        Episode(episode_id="c", world="company", fixture="acme", startup=principal("carla"),
                calls=[ToolCall(tool="whoami")])
    )  # fmt: skip
    assert result.calls[0].result["role"] == "finance"


def test_a_scripted_call_is_the_cores_tool_call_and_its_old_name_is_gone() -> None:
    import seahaven_ray

    from seahaven.scenarios import ToolCall as CoreToolCall

    assert ToolCall is CoreToolCall
    with pytest.raises(AttributeError, match="'Call'"):
        _ = seahaven_ray.Call  # type: ignore[attr-defined]
