"""``seahaven.inspect.task`` in process: samples, tools, any solver, the budget, failures.

The models are Inspect's own ``mockllm/model`` given outputs (each with its
usage, so nothing counts tokens with a tokenizer to download) and the plugin's
``seahaven/solution``. After every run no trial is left: the cleanup released
each sample's instance however the sample ended.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.tool import ToolChoice, ToolInfo
from shop import shelf_pack

import seahaven.inspect as seahaven_inspect
from seahaven.evaluation import trial_seed
from seahaven.scenarios import SUBMIT_TOOL


def run(tmp: Path, task: Any, model: Any = "seahaven/solution", **options: Any) -> EvalLog:
    logs = inspect_eval(task, model=model, log_dir=str(tmp / "logs"), display="none", **options)
    assert len(logs) == 1
    assert seahaven_inspect.live_episodes() == 0  # every sample's trial was released
    return logs[0]


def scripted(*calls: tuple[str, dict[str, Any]] | str) -> Any:
    """A mockllm model replying with these tool calls (or texts), each with a usage."""

    def outputs(
        input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        turn = sum(1 for message in input if message.role == "assistant")
        step = calls[turn] if turn < len(calls) else "done"
        if isinstance(step, str):
            output = ModelOutput.from_content("mockllm", step)
        else:
            output = ModelOutput.for_tool_call("mockllm", step[0], step[1])
        output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return output

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def only(log: EvalLog) -> EvalSample:
    assert log.samples is not None and len(log.samples) == 1
    return log.samples[0]


def test_one_sample_per_scenario_of_the_split_with_its_metadata() -> None:
    made = seahaven_inspect.task(shelf_pack, split="train")
    samples = list(made.dataset)
    assert [sample.id for sample in samples] == ["fill-plum"]
    sample = samples[0]
    assert sample.metadata == {
        "scenario": "jar-shelf/fill-plum",
        "scenario_hash": shelf_pack.get("fill-plum").hash,
        "tags": [],
        "pack": "jar-shelf",
        "pack_version": "1.0.0",
        "world": "jar-shelf",
        "budget": 3,
    }
    assert isinstance(sample.input, list)
    assert sample.input[-1].text == "Fill the plum jar, j1, and nothing else."
    assert len(list(seahaven_inspect.task(shelf_pack).dataset)) == 2


def test_an_unknown_split_or_scenario_is_refused_naming_what_the_pack_holds() -> None:
    from seahaven.errors import WorldBug

    with pytest.raises(WorldBug, match="no split 'dev'"):
        seahaven_inspect.task(shelf_pack, split="dev")
    with pytest.raises(WorldBug, match="fill-plum, count-jars"):
        seahaven_inspect.task(shelf_pack, scenarios=["nope"])


def test_the_tools_keep_the_worlds_schemas_and_submit_comes_last(tmp_path: Path) -> None:
    seen: dict[str, list[ToolInfo]] = {}

    def outputs(
        input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        seen["tools"] = tools
        output = ModelOutput.from_content("mockllm", "nothing to do")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    run(tmp_path, seahaven_inspect.task(shelf_pack, split="train"), model)
    tools = {tool.name: tool for tool in seen["tools"]}
    assert list(tools) == ["fill", "relabel", "wobble", SUBMIT_TOOL]
    assert tools["fill"].description == "Fill a jar."
    assert tools["fill"].parameters.required == ["jar_id"]
    # The label's $ref is written out in place: the model sees the nested object whole.
    label = tools["relabel"].parameters.properties["label"]
    assert label.type == "object" and label.properties is not None
    assert set(label.properties) == {"fruit", "note"}
    assert label.description  # every parameter has a description Inspect accepts
    assert tools[SUBMIT_TOOL].parameters.required == ["answer"]


def test_the_default_agent_plays_and_the_scorer_explains_every_check(tmp_path: Path) -> None:
    model = scripted(("fill", {"jar_id": "j2"}), ("submit", {"answer": "filled"}))
    log = run(tmp_path, seahaven_inspect.task(shelf_pack, split="train"), model)
    score = only(log).scores["seahaven_grader"]
    assert score.value == 0.0
    assert score.answer == "filled"
    assert score.metadata["ended_by"] == "submit"
    assert score.metadata["calls"] == 1
    assert score.metadata["seed"] == trial_seed("jar-shelf", "fill-plum", 0)
    lines = score.explanation.splitlines()
    assert lines[0].startswith("failed")
    assert any(line.startswith("FAIL changed jars where id=") for line in lines)
    assert any(line.startswith("FAIL left jars where id=") for line in lines)


def test_a_refusal_reaches_the_model_as_a_tool_error_with_the_worlds_triple(
    tmp_path: Path,
) -> None:
    model = scripted(("fill", {"jar_id": "j9"}), ("fill", {"jar_id": "j1"}))
    log = run(tmp_path, seahaven_inspect.task(shelf_pack, split="train"), model)
    sample = only(log)
    errors = [m.error for m in sample.messages if m.role == "tool" and m.error is not None]
    assert len(errors) == 1
    assert '"code": "NOT_FOUND"' in errors[0].message
    assert "there is no jar j9" in errors[0].message
    score = sample.scores["seahaven_grader"]
    assert score.value == 1.0  # the model read the refusal and filled the right jar
    assert score.metadata["calls"] == 2  # the refused call counted against the budget


def test_the_budget_ends_the_episode_and_the_loop(tmp_path: Path) -> None:
    model = scripted(*([("fill", {"jar_id": "j9"})] * 10))
    log = run(tmp_path, seahaven_inspect.task(shelf_pack, split="train"), model)
    sample = only(log)
    score = sample.scores["seahaven_grader"]
    assert score.metadata["ended_by"] == "budget"
    assert score.metadata["calls"] == 3
    # The loop stopped at the end of the episode: three calls, no fourth turn.
    assert sum(1 for m in sample.messages if m.role == "assistant") == 3


@solver
def straight_to_generate() -> Solver:
    """Inspect's own generate() tool loop, on the tools the setup put in state.tools."""
    loop = generate(tool_calls="loop")

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        assert [tool.__name__ for tool in state.tools]  # the setup handed them over
        return await loop(state, generate_)

    return solve


def test_any_solver_plays_the_episode_the_setup_made(tmp_path: Path) -> None:
    made = seahaven_inspect.task(shelf_pack, solver=straight_to_generate(), epochs=2)
    log = run(tmp_path, made)
    assert log.samples is not None and len(log.samples) == 4
    for sample in log.samples:
        score = sample.scores["seahaven_grader"]
        assert score.value == 1.0, sample.id
        assert score.metadata["seed"] == trial_seed("jar-shelf", str(sample.id), sample.epoch - 1)


@solver
def failing(how: str) -> Solver:
    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        if how == "raise":
            raise RuntimeError("the solver gave up")
        await anyio.sleep(60)  # cancelled by the sample's time limit
        return state

    return solve


@pytest.mark.parametrize(
    ("solver_factory", "options"),
    [
        (lambda: failing("raise"), {}),
        (lambda: failing("hang"), {"time_limit": 1}),
    ],
    ids=["a-solver-that-raises", "a-sample-cancelled-by-its-time-limit"],
)
def test_the_trial_is_released_however_the_sample_ends(
    tmp_path: Path, solver_factory: Callable[[], Solver], options: dict[str, Any]
) -> None:
    made = seahaven_inspect.task(shelf_pack, split="train", solver=solver_factory(), **options)
    log = run(tmp_path, made, fail_on_error=False)
    sample = only(log)
    assert sample.error is not None or sample.limit is not None


def test_a_bug_in_the_world_fails_the_sample_instead_of_scoring_it(tmp_path: Path) -> None:
    model = scripted(("wobble", {}), ("fill", {"jar_id": "j1"}))
    made = seahaven_inspect.task(shelf_pack, split="train")
    log = run(tmp_path, made, model, fail_on_error=False)
    sample = only(log)
    assert sample.error is not None
    assert "the shelf fell over" in sample.error.message
    assert "seahaven_grader" not in (sample.scores or {})
