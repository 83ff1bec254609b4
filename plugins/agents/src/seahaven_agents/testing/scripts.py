"""Scripts for the scripted server: a model that plays the reference solutions, and failures.

``solution_script(pack)`` is a model that knows every scenario's reference
solution: it finds the scenario by the instructions in the conversation's first
user message and answers each turn with the solution's next tool calls, then
with the solution's answer in plain text (or through ``submit``). The reference
solutions score 1 (``seahaven scenarios check`` holds them to it), so a run
with it scores 1 on every trial: what a pack's offline test of the whole harness
wants. ``flaky(script, every=3)`` fails every third request with an error
(429 with a ``Retry-After``, 500, ...) before the script answers, to watch the
retries.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from seahaven import WorldBug
from seahaven.scenarios import SUBMIT_TOOL, ScenarioSet
from seahaven_agents.testing.replies import ChatRequest, Reply, answer, call, error, tool_calls

__all__ = ["flaky", "solution_script"]

# What the solution script answers for a scenario whose solution submits no answer.
DONE = "done"


def solution_script(
    pack: ScenarioSet, *, calls_per_turn: int = 1, submit_with_tool: bool = False
) -> Callable[[ChatRequest], Reply]:
    """A script playing each scenario's reference solution, ``calls_per_turn`` calls a turn.

    The answer goes as plain text (which the agent submits), or with the
    ``submit`` tool when ``submit_with_tool``. Two scenarios of the pack with the
    same instructions and different solutions are a ``WorldBug``: the script
    could not tell which one a conversation plays.
    """
    if calls_per_turn < 1:
        raise WorldBug(f"calls_per_turn is 1 or more; got {calls_per_turn!r}")
    plays: dict[str, tuple[list[list[Any]], str | None]] = {}
    owners: dict[str, str] = {}
    for scenario in pack:
        steps = list(scenario.solution or ())
        submitted: str | None = None
        calls: list[Any] = []
        for step in steps:
            if step.tool == SUBMIT_TOOL:
                submitted = str(step.arguments.get("answer", ""))
                break
            calls.append(call(step.tool, dict(step.arguments)))
        turns = [calls[at : at + calls_per_turn] for at in range(0, len(calls), calls_per_turn)]
        key = " ".join(scenario.instructions.split())
        if key in plays and plays[key] != (turns, submitted):
            raise WorldBug(
                f"scenarios {owners[key]!r} and {scenario.id!r} of pack {pack.name!r} have the "
                "same instructions and different solutions; the script cannot tell them apart"
            )
        plays[key] = (turns, submitted)
        owners[key] = scenario.id

    def script(request: ChatRequest) -> Reply:
        key = " ".join((request.instructions or "").split())
        found = plays.get(key)
        if found is None:
            return error(400, f"no scenario of pack {pack.name!r} has these instructions")
        turns, submitted = found
        turn = request.turn
        if turn < len(turns):
            return tool_calls(*turns[turn])
        text = submitted if submitted is not None else DONE
        if submit_with_tool and turn == len(turns):
            return tool_calls(call(SUBMIT_TOOL, {"answer": text}))
        return answer(text)

    return script


def flaky(
    script: Callable[[ChatRequest], Reply],
    *,
    every: int = 3,
    status: int = 500,
    retry_after: float | None = None,
    message: str = "the scripted server failed on purpose",
) -> Callable[[ChatRequest], Reply]:
    """``script``, but every ``every``-th request (the 1st, then every ``every``) fails first.

    A request that failed is answered when it comes again: the retry of a
    failed call always goes through, so a client that retries at all gets every
    answer, however the requests of concurrent conversations interleave (with a
    plain count, one conversation's retries could keep landing on the failing
    turns of the count).
    """
    if every < 1:
        raise WorldBug(f"every is 1 or more; got {every!r}")
    count = 0
    failed: set[str] = set()
    lock = threading.Lock()

    def failing(request: ChatRequest) -> Reply:
        nonlocal count
        key = json.dumps(request.body, sort_keys=True, ensure_ascii=False)
        with lock:
            if key in failed:
                failed.discard(key)
                fails = False
            else:
                count += 1
                fails = (count - 1) % every == 0
                if fails:
                    failed.add(key)
        if fails:
            return error(status, message, retry_after=retry_after)
        return script(request)

    return failing
