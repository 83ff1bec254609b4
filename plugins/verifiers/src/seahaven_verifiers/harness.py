"""The harness that plays a Seahaven task: a tool-calling chat loop, run in process.

verifiers' built-in harnesses launch a program in a runtime and hand it tools
as MCP servers. A world's episode lives in this process, so this harness runs
its loop here, as ``Harness.launch`` allows ("a harness may run its loop
in-process ... as long as every model call goes through ``endpoint`` +
``secret``"): every model call goes to the rollout's interception endpoint over
the Chat Completions API, which records it in the trace.

One rollout is one ``seahaven.scenarios.Trial``, made when the loop starts and
closed when it ends, however it ends (an answer, the budget, a model that
stops calling tools, an error, a timeout's cancellation). The model is offered
``Trial.tools()`` (the world's tools and ``submit``) as functions; each call
goes through a ``LocalSession``, so it counts against the budget, and a refusal
comes back as the tool message ``{"error": {code, message, details}}``. A reply
without a tool call ends the episode where it stands. Before the trial is
closed the episode is graded and the outcome left in the trace's state, where
the task's rewards read it, and summed up in ``trace.info["seahaven"]`` (the
scenario, seed, score, calls, how it ended, the answer and ``state_sha256``),
which the traces file keeps. A bug in the world fails the rollout (no reward).
"""

from __future__ import annotations

import json
import threading
from typing import Any, ClassVar, cast

import verifiers.v1 as vf
from openai import AsyncOpenAI
from pydantic import Field

from seahaven.errors import ToolError
from seahaven.evaluation import LocalSession, trial_seed
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack, split_reference
from seahaven_verifiers.tasks import SeahavenData, SeahavenState

__all__ = ["SeahavenHarness", "SeahavenHarnessConfig", "find_task_scenario", "live_trials"]


class SeahavenHarnessConfig(vf.HarnessConfig):
    """The in-process loop's settings."""

    id: str = "seahaven-verifiers"
    max_turns: int | None = Field(None, ge=1)
    """Model turns at most (default: twice the scenario's budget)."""


_packs: dict[str, ScenarioSet] = {}
_packs_lock = threading.Lock()
_live: set[int] = set()
_live_lock = threading.Lock()


def live_trials() -> int:
    """How many rollouts of this process hold a trial now."""
    with _live_lock:
        return len(_live)


def find_task_scenario(data: SeahavenData) -> Scenario:
    """The scenario a task names, loaded from its pack's source; it must have the task's hash."""
    pack_name, scenario_id = split_reference(data.scenario)
    source = data.pack_source or pack_name
    with _packs_lock:
        pack = _packs.get(source)
        if pack is None:
            pack = _packs[source] = load_pack(source)
    scenario = pack.get(scenario_id)
    if scenario.hash != data.scenario_hash:
        raise vf.TaskError(
            f"scenario {data.scenario!r} has changed since the task was made (hash "
            f"{scenario.hash[:12]}, the task's {data.scenario_hash[:12]}); load the taskset again"
        )
    return scenario


def _function(listing: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": listing["name"],
            "description": listing["description"],
            "parameters": listing["input_schema"],
        },
    }


class SeahavenHarness(vf.Harness[SeahavenHarnessConfig]):
    """Plays one scenario's episode with the model, in this process."""

    APPENDS_SYSTEM_PROMPT: ClassVar[bool] = True
    SUPPORTS_MCP: ClassVar[bool] = False
    EXECUTES_CODE: ClassVar[bool] = False
    NEEDS_CONTAINER: ClassVar[bool] = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Play the episode to its end and leave its grade in the trace's state."""
        task = SeahavenData.model_validate(data.model_dump())
        state = trace.state
        if not isinstance(state, SeahavenState):
            raise vf.HarnessError(
                "the seahaven harness plays seahaven-verifiers tasks only; this trace is of "
                f"{type(state).__name__}"
            )
        scenario = find_task_scenario(task)
        pack_name, _ = split_reference(task.scenario)
        trial = Trial(scenario, seed=trial_seed(pack_name, scenario.id, 0), storage=task.storage)
        with _live_lock:
            _live.add(id(trial))
        session = LocalSession(trial)
        try:
            await self._play(ctx, endpoint, secret, task, trial, session)
        finally:
            try:
                if session.failure is None:
                    _record(state, trial)
                    trace.info["seahaven"] = _summary(task, state)
            finally:
                trial.close()
                with _live_lock:
                    _live.discard(id(trial))
        if session.failure is not None:
            raise vf.HarnessError(session.failure.message)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def _play(
        self,
        ctx: vf.ModelContext,
        endpoint: str,
        secret: str,
        task: SeahavenData,
        trial: Trial,
        session: LocalSession,
    ) -> None:
        system, prompt = self.resolve_prompt(task)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        tools = [_function(listing) for listing in session.tools()]
        turns = self.config.max_turns or 2 * trial.budget
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            for _ in range(turns):
                # Plain dicts, as the wire carries them; the SDK's TypedDicts describe the same.
                reply = await client.chat.completions.create(
                    model=ctx.model, messages=cast(Any, messages), tools=cast(Any, tools)
                )
                message = reply.choices[0].message
                calls = list(message.tool_calls or ())
                messages.append(message.model_dump(exclude_none=True))
                if not calls:
                    return  # the model stopped: the episode ends where it stands
                for call in calls:
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": _answer(session, call)}
                    )
                    if trial.done or session.failure is not None:
                        return


def _answer(session: LocalSession, call: Any) -> str:
    """One tool call through the session, as the tool message's text."""
    name = call.function.name
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except ValueError as error:
        return json.dumps({"error": {"code": "invalid_json", "message": str(error)}})
    if not isinstance(arguments, dict):
        return json.dumps(
            {"error": {"code": "invalid_json", "message": "the arguments are not an object"}}
        )
    try:
        result = session.call(name, **arguments)
    except ToolError as refused:
        return json.dumps({"error": refused.to_dict()}, ensure_ascii=False)
    except Exception as bug:  # the world's: kept as the session's failure, the rollout fails
        return json.dumps({"error": {"code": "internal", "message": type(bug).__name__}})
    return json.dumps(result, ensure_ascii=False)


def _summary(task: SeahavenData, state: SeahavenState) -> dict[str, Any]:
    """What a ``seahaven eval`` result line says of the trial, for the trace's ``info``."""
    return {
        "scenario": task.scenario,
        "scenario_hash": task.scenario_hash,
        "seed": state.seed,
        "score": state.score,
        "passed": state.passed,
        "calls": state.calls,
        "ended_by": state.ended_by,
        "answer": state.answer,
        "state_sha256": state.state_sha256,
    }


def _record(state: SeahavenState, trial: Trial) -> None:
    """Grade the episode (ended where it stands if it has not ended) into the trace's state."""
    grade = trial.finish()
    state.graded = True
    state.score = grade.score
    state.passed = grade.passed
    state.checks = [check.to_dict() for check in grade.checks]
    state.calls = trial.calls_made
    state.ended_by = trial.ended_by
    state.answer = trial.answer
    state.seed = trial.seed
    state.state_sha256 = trial.state_sha256()
