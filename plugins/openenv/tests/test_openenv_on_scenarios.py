"""OpenEnv's own code on a served pack: its Task API, its stock client, its harness, its rollouts.

- The Task API routes answer what OpenEnv's own server answers for the same pack
  (``create_fastapi_app`` hosting ``SeahavenEnv``, a ``TaskProvider``), route by route.
- ``GenericEnvClient`` over ``/ws`` plays a scenario-bound episode and reads the reward.
- ``CollectRunner`` and ``build_harness_rollout_func`` (the function TRL takes) complete
  episodes against the served pack with the server's reward: through ``ScenarioSessions``,
  and through OpenEnv's ``StepEnvSessionAdapter`` with its default builders.

A scripted model stands in for the LLM: it reads the scenario from the instructions it is
given and calls the reference solution's tools, one per turn.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import depot
import pytest
from openenv import GenericEnvClient
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.mcp_types import CallToolAction, Tool
from openenv.core.harness import (
    MCPHarnessAdapter,
    ModelStepResult,
    StepEnvSessionAdapter,
    build_harness_rollout_func,
)
from openenv.core.harness.collect import CollectRunner, RolloutSerializer
from openenv.core.llm_client import LLMResponse, ToolCall
from seahaven_openenv.clients.models import SeahavenObservation, SeahavenState
from seahaven_openenv.front import runner

import seahaven
from seahaven.openenv import ScenarioSessions, SeahavenEnv
from seahaven.scenarios import ScenarioSet, submit_listing


@pytest.fixture
def depot_world() -> seahaven.World:
    return depot.make_depot()


@pytest.fixture
def pack(depot_world: seahaven.World) -> ScenarioSet:
    return depot.make_pack(depot_world)


@pytest.fixture
def served(serving, depot_world, pack) -> Any:
    return serving(depot_world, scenarios=[pack])


def http(base: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


@contextmanager
def openenvs_own_server(world: seahaven.World, pack: ScenarioSet | None) -> Iterator[str]:
    """OpenEnv's FastAPI server (its routes, its Task API) hosting SeahavenEnv, on loopback."""
    application = create_fastapi_app(
        lambda: SeahavenEnv(world, scenarios=pack),
        CallToolAction,
        SeahavenObservation,
        env_name=world.name,
        state_cls=SeahavenState,
    )
    server = runner.server_for(application, host="127.0.0.1", port=0, log_level="warning")
    with runner.in_background(server, host="127.0.0.1", port=0) as port:
        yield f"http://127.0.0.1:{port}"


TASK_REQUESTS: list[tuple[str, str, Any]] = [
    ("GET", "/list_environments", None),
    ("GET", "/depot/splits", None),
    ("GET", "/DEPOT/splits", None),
    ("POST", "/depot/tasks", {"split": "train"}),
    ("POST", "/depot/num_tasks", {"split": "test"}),
    ("POST", "/depot/task", {"split": "train", "index": 1}),
    ("POST", "/depot/task_range", {"split": "train", "start": 1}),
    ("POST", "/depot/task_range", {"split": "train", "stop": -1}),
    ("POST", "/depot/task", {"split": "test", "index": 3}),
    ("GET", "/elsewhere/splits", None),
]


def test_the_task_api_answers_what_openenvs_own_server_answers(served, depot_world, pack) -> None:
    with openenvs_own_server(depot_world, pack) as theirs:
        for method, path, body in TASK_REQUESTS:
            assert http(served.base_url, method, path, body) == http(theirs, method, path, body), (
                method,
                path,
                body,
            )
        # A request with a key the route does not take is refused by both (422).
        stray = {"split": "train", "limit": 2}
        assert http(served.base_url, "POST", "/depot/tasks", stray)[0] == 422
        assert http(theirs, "POST", "/depot/tasks", stray)[0] == 422
    status, task = http(served.base_url, "POST", "/depot/task", {"split": "test", "index": 0})
    assert status == 200
    assert task["task"] == {
        "id": "depot/count-apples",
        "split": "test",
        "index": 0,
        "scenario": "depot/count-apples",
        "hash": pack.get("count-apples").hash,
        "pack_version": "1.0.0",
        "world": "depot",
        "instructions": "How many apples are in store? Submit the number.",
        "budget": 3,
        "tags": [],
    }
    # What a task never says: how it is graded, or solved.
    assert not {"grader", "solution"} & set(task["task"])


def test_a_world_served_without_a_pack_answers_501_as_openenv_does(serving, depot_world) -> None:
    ours = serving(depot_world).base_url
    with openenvs_own_server(depot_world, None) as theirs:
        for method, path, body in TASK_REQUESTS[1:4]:
            status, answer = http(ours, method, path, body)
            assert (status, http(theirs, method, path, body)[0]) == (501, 501)
            assert "is not supported for this environment" in answer["detail"]
    assert http(ours, "POST", "/depot/tasks", {"split": "nope"})[0] == 501


def test_a_split_the_pack_lacks_is_a_400_naming_its_splits(served) -> None:
    status, answer = http(served.base_url, "POST", "/depot/num_tasks", {"split": "dev"})
    assert status == 400 and "its splits are train, test" in answer["detail"]


def test_a_server_of_several_worlds_serves_each_worlds_tasks_under_its_path(
    serving, depot_world, pack
) -> None:
    server = serving([depot_world, depot.make_depot("warehouse")], scenarios=[pack])
    base = server.base_url
    assert http(base, "GET", "/worlds/depot/list_environments", None) == (200, ["depot"])
    status, splits = http(base, "GET", "/worlds/depot/depot/splits", None)
    assert status == 200 and [split["name"] for split in splits] == ["train", "test"]
    assert http(base, "GET", "/worlds/warehouse/warehouse/splits", None)[0] == 501


# --- the stock client --------------------------------------------------------------------------


def test_the_stock_generic_client_plays_a_bound_episode(served) -> None:
    with GenericEnvClient(base_url=served.base_url).sync() as env:
        reset = env.reset(split="test", index=0, episode_id="generic-1")
        assert reset.observation["metadata"]["instructions"].startswith("How many apples")
        tools = env.step({"type": "list_tools"}).observation["tools"]
        assert tools[-1]["name"] == "submit"
        counted = env.step(
            {"type": "call_tool", "tool_name": "count", "arguments": {"item": "apples"}}
        )
        assert (counted.reward, counted.done) == (0.0, False)
        submitted = env.step(
            {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "15"}}
        )
        assert (submitted.reward, submitted.done) == (1.0, True)
        assert submitted.metadata["grade"]["passed"] is True
        state = env.state()
        assert state["episode_id"] == "generic-1" and state["step_count"] == 3
        assert state["scenario"]["grade"] == submitted.metadata["grade"]


# --- the harness -------------------------------------------------------------------------------


def scripted_model(pack: ScenarioSet, *, submit_when_done: bool = True) -> Any:
    """A ModelStep playing the reference solution of the scenario its instructions describe."""

    def model_step(messages: list[dict[str, Any]], tools: list[Tool], sampling: Any) -> Any:
        instructions = next(m["content"] for m in messages if m["role"] == "user")
        [scenario] = [s for s in pack if s.instructions == instructions]
        calls = [(c.tool, dict(c.arguments)) for c in scenario.solution or ()]
        if submit_when_done and (not calls or calls[-1][0] != "submit"):
            calls.append(("submit", {"answer": "done"}))
        made = sum(1 for m in messages if m["role"] == "tool")
        offered = {tool.name for tool in tools}
        if made >= len(calls):
            return ModelStepResult(response=LLMResponse(content="Finished."))
        name, arguments = calls[made]
        assert name in offered
        call = ToolCall(id=f"call-{made}", name=name, args=arguments)
        return ModelStepResult(response=LLMResponse(content="", tool_calls=[call]))

    return model_step


def test_collect_runner_collects_every_task_with_the_servers_reward(
    served, pack, tmp_path: Path
) -> None:
    status, listed = http(served.base_url, "POST", "/depot/tasks", {"split": "train"})
    assert status == 200
    tasks = [*listed["tasks"], "depot/count-apples"]
    collector = CollectRunner(
        session_factory=ScenarioSessions(served.base_url, system_prompt="Work the depot."),
        harness_adapter=MCPHarnessAdapter(),
        serializer=RolloutSerializer(tmp_path),
        tasks=tasks,
    )
    collected = collector.run(model_step=scripted_model(pack), num_episodes=3)
    assert (collected.num_collected, collected.num_failed) == (3, 0)
    assert collected.avg_reward == 1.0
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [record["reward"] for record in records] == [1.0, 1.0, 1.0]
    first = records[0]
    assert first["messages"][:2] == [
        {"role": "system", "content": "Work the depot."},
        {"role": "user", "content": pack.get("ship-c1").instructions},
    ]
    assert first["done"] is True
    assert first["artifacts"]["scenario"]["ended_by"] == "submit"
    assert first["artifacts"]["scenario"]["grade"]["passed"] is True
    # Each step says where the episode stands; only the last carries the reward and grade.
    steps = [entry["result"] for entry in first["tool_trace"]]
    assert [step["metadata"].get("reward") for step in steps] == [None, 1.0]
    assert steps[-1]["metadata"]["grade"]["score"] == 1.0


def test_a_rollout_the_harness_stops_is_graded_where_it_stands(served, pack) -> None:
    # The model never submits: the session's verify ends the episode with a finish step.
    rollout = build_harness_rollout_func(
        session_factory=ScenarioSessions(served.base_url),
        harness_adapter=MCPHarnessAdapter(),
        model_step_builder=lambda trainer, session: scripted_model(pack, submit_when_done=False),
    )
    outcome = rollout(["depot/ship-c1", {"scenario": "depot/restock-pears", "seed": 4}], None)
    assert outcome["env_reward"] == [1.0, 1.0]
    assert [metrics["calls"] for metrics in outcome["verify_metrics"]] == [1, 1]


def test_a_rollout_that_fails_its_task_is_rewarded_zero(served, pack) -> None:
    def wrong(messages: list[dict[str, Any]], tools: list[Tool], sampling: Any) -> Any:
        if any(m["role"] == "tool" for m in messages):
            return ModelStepResult(response=LLMResponse(content="Done."))
        call = ToolCall(id="c", name="submit", args={"answer": "a dozen"})
        return ModelStepResult(response=LLMResponse(content="", tool_calls=[call]))

    rollout = build_harness_rollout_func(
        session_factory=ScenarioSessions(served.base_url),
        harness_adapter=MCPHarnessAdapter(),
        model_step_builder=lambda trainer, session: wrong,
    )
    assert rollout([{"split": "test", "index": 0}], None)["env_reward"] == [0.0]


class StockSessions:
    """A session factory of OpenEnv's pieces alone: its adapter, client and default builders."""

    def __init__(self, url: str) -> None:
        self.url = url
        with GenericEnvClient(base_url=url).sync() as env:
            listing = env.step({"type": "list_tools"}).observation["tools"]
        self.tools = [Tool.model_validate(tool) for tool in [*listing, submit_listing()]]

    def create(self, task: Any, seed: int | None = None, episode_id: str | None = None) -> Any:
        return StepEnvSessionAdapter(
            GenericEnvClient(base_url=self.url),
            task=task,
            seed=seed,
            episode_id=episode_id,
            tool_specs=self.tools,
            action_builder=lambda name, arguments: {
                "type": "call_tool",
                "tool_name": name,
                "arguments": arguments,
            },
            initial_messages_builder=lambda result, task: [
                {"role": "user", "content": result.observation["metadata"]["instructions"]}
            ],
            reset_kwargs={"scenario": task},
        )


def test_openenvs_stock_adapter_and_rollout_function_take_the_servers_reward(
    served, pack, tmp_path: Path
) -> None:
    factory = StockSessions(served.base_url)
    rollout = build_harness_rollout_func(
        session_factory=factory,
        harness_adapter=MCPHarnessAdapter(),
        model_step_builder=lambda trainer, session: scripted_model(pack),
    )
    outcome = rollout(["depot/ship-c1", "depot/count-apples"], None)
    assert outcome["env_reward"] == [1.0, 1.0]
    collected = CollectRunner(
        session_factory=factory,  # type: ignore[arg-type]
        harness_adapter=MCPHarnessAdapter(),
        serializer=RolloutSerializer(tmp_path),
        tasks=["depot/restock-pears"],
    ).run(model_step=scripted_model(pack), num_episodes=1)
    assert (collected.num_collected, collected.avg_reward) == (1, 1.0)


def test_seahaven_env_under_openenvs_own_server_rewards_the_same(depot_world, pack) -> None:
    # SeahavenEnv is the same Session behind OpenEnv's Environment interface: hosted by
    # OpenEnv's server, a bound episode pays what seahaven serve pays. (OpenEnv's server
    # admits only its action class, CallToolAction, so a finish step does not reach it there.)
    with (
        openenvs_own_server(depot_world, pack) as theirs,
        GenericEnvClient(base_url=theirs).sync() as env,
    ):
        reset = env.reset(scenario="depot/count-apples")
        assert reset.observation["metadata"]["budget"] == 3
        count = {"type": "call_tool", "tool_name": "count", "arguments": {"item": "apples"}}
        counted = env.step(count)
        assert (counted.reward, counted.done) == (0.0, False)
        submitted = env.step(
            {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "15"}}
        )
        assert (submitted.reward, submitted.done) == (1.0, True)
        assert submitted.observation["metadata"]["grade"]["passed"] is True
        # The budget's end, the other way an episode ends: three calls for ship-c1.
        env.reset(scenario="depot/ship-c1")
        env.step({"type": "call_tool", "tool_name": "ship", "arguments": {"crate_id": "c1"}})
        assert env.step(count).reward == 0.0
        ended = env.step(count)
        assert (ended.reward, ended.done) == (1.0, True)
        assert ended.observation["metadata"]["ended_by"] == "budget"
