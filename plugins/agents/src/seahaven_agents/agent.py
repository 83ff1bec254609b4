"""``ChatAgent``: a model on any OpenAI-compatible endpoint, as a policy.

``ChatAgent("gpt-4.1-mini")`` (or ``ChatAgent("qwen3-8b",
base_url="http://127.0.0.1:8000/v1")``) is an ``async`` policy:
``seahaven eval PACK --model NAME`` makes one, and
``seahaven.evaluation.evaluate(pack, ChatAgent(...))`` takes one. Each trial
is played by ``AgentLoop`` on one shared ``ModelClient``: trials running at
once on one event loop share its connections, and ``aclose()`` (which the
runners await when the loop is done) closes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seahaven import WorldBug
from seahaven_agents.client import ModelClient
from seahaven_agents.loop import DEFAULT_MAX_TURNS, AgentLoop

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_TIMEOUT", "ChatAgent"]

# Tries after a failed model call (429, 5xx, a timeout, a dropped connection).
DEFAULT_MAX_RETRIES = 4
# Seconds a model call may take before it counts as failed (and is tried again).
DEFAULT_TIMEOUT = 120.0


class ChatAgent:
    """A policy that plays each episode with a model on a Chat Completions endpoint.

    ``model`` is the model's name on the server; ``base_url`` the server's
    (``https://api.openai.com/v1`` by default, or ``OPENAI_BASE_URL``);
    ``api_key`` the key, else the environment variable ``api_key_env``
    (never shown anywhere; a server of one's own needs none). ``system_prompt``
    replaces the default one; ``temperature`` and ``max_tokens`` go with every
    request (the server's defaults when ``None``), and so does ``extra_body``
    (a server's own options, such as vLLM's). A trial ends after ``max_turns``
    model calls at most. A failed model call is tried ``max_retries`` more
    times (``timeout`` seconds each) before the trial is errored.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        system_prompt: str | None = None,
        temperature: float | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        retry_backoff: float = 1.0,
    ) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise WorldBug(f"max_retries is a whole number, 0 or more; got {max_retries!r}")
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, int | float)
        ):
            raise WorldBug(f"temperature is a number; got {temperature!r}")
        self.client = ModelClient.sampling(
            model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            temperature=temperature,
            max_tokens=max_tokens,
            extra_body=extra_body,
        )
        # Checked now, so that a bad value fails before the first trial.
        self.loop = AgentLoop(self.client, system_prompt=system_prompt, max_turns=max_turns)

    @property
    def model(self) -> str:
        """The model's name on its server."""
        return self.client.model

    def describe(self) -> str:
        """How results name this agent: the model and its server's host, never the key."""
        return f"chat:{self.client.describe()}"

    def __repr__(self) -> str:
        return f"ChatAgent({self.client.model!r}, endpoint={self.client.endpoint!r})"

    async def __call__(self, session: Any) -> None:
        """Play one episode on ``session``."""
        await self.loop.play(session)

    async def aclose(self) -> None:
        """Close the model client's connections on the running event loop."""
        await self.client.aclose()
