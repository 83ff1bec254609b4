"""A scripted model for checking a pack in Inspect: ``--model seahaven/solution``.

It plays each sample's scenario's reference solution, one tool call a turn,
refusals and all, and submits the solution's answer when it has one, exactly
as ``seahaven.evaluation.solution_policy`` plays it for ``seahaven eval``; after
the last call of a solution without an answer it replies without calling a
tool, which ends the episode where it stands. It finds the scenario it plays
by the hash in the metadata of the sample's user message
(``samples.SCENARIO_HASH_KEY``, which no provider sends to a model), among the
samples this process is running, so it plays a pack built in Python as well as
an installed one. It reports a usage for every reply, so
Inspect never counts tokens with a tokenizer it would have to download.

The provider is registered as ``seahaven`` (``registry`` calls ``register``),
the way Inspect documents custom providers: ``@modelapi`` under the package's
``inspect_ai`` entry point.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from seahaven.scenarios import Scenario
from seahaven_inspect.episodes import live_scenario
from seahaven_inspect.samples import SCENARIO_HASH_KEY

__all__ = ["PROVIDER", "SolutionModel", "register"]

#: The provider's name: ``--model seahaven/solution``.
PROVIDER = "seahaven"


class SolutionModel(ModelAPI):
    """A model that plays the reference solution of the scenario it is given."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's own default
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """The next call of the solution (one a turn), or a reply without one at its end."""
        scenario = _scenario_of(input)
        played = sum(
            1
            for message in input
            if isinstance(message, ChatMessageAssistant) and message.tool_calls
        )
        steps = scenario.solution or ()
        if played < len(steps):
            step = steps[played]
            output = ModelOutput.for_tool_call(
                self.model_name, step.tool, dict(step.arguments), tool_call_id=f"call-{played}"
            )
        else:
            output = ModelOutput.from_content(self.model_name, "The solution has been played.")
        output.usage = _usage(input, output)
        return output


def _scenario_of(messages: list[ChatMessage]) -> Scenario:
    for message in messages:
        scenario_hash = (message.metadata or {}).get(SCENARIO_HASH_KEY)
        found = live_scenario(scenario_hash) if isinstance(scenario_hash, str) else None
        if found is not None:
            return found
    raise ValueError(
        "seahaven/solution plays a Seahaven sample's reference solution, and this conversation "
        f"names no scenario this process is running (no message carries metadata "
        f"{SCENARIO_HASH_KEY!r} of a live sample); run it on a task made by "
        "seahaven.inspect.task(...) or inspect eval seahaven/PACK"
    )


def _usage(messages: list[ChatMessage], output: ModelOutput) -> ModelUsage:
    """A usage figure (characters, not tokens): enough for Inspect's accounting."""
    given = sum(len(message.text) for message in messages)
    made = len(output.completion) + sum(
        len(json.dumps(call.arguments)) for call in output.message.tool_calls or ()
    )
    return ModelUsage(input_tokens=given, output_tokens=made, total_tokens=given + made)


def register() -> None:
    """Register the provider with Inspect (once; Inspect loads the entry point once)."""
    modelapi(name=PROVIDER)(SolutionModel)
