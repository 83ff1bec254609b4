"""Model-backed agents for Seahaven evals: ``seahaven.agents``.

``ChatAgent(model, base_url=...)`` is a policy that plays each episode with a
model on any OpenAI-compatible Chat Completions endpoint (vLLM, SGLang,
llama.cpp's server, Ollama, LiteLLM's proxy, the hosted APIs), through the
official ``openai`` SDK: ``seahaven eval PACK --model NAME`` runs it.
``AgentLoop`` is its loop, with hooks a custom policy overrides, on a
``ModelClient`` that retries what is worth retrying and records every model
call in the trial's transcript. ``seahaven_agents.testing`` holds a scripted
Chat Completions server for offline tests.

Importing this package does not import the ``openai`` SDK's network stack until
a model is asked.
"""

from __future__ import annotations

from seahaven_agents.agent import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, ChatAgent
from seahaven_agents.client import (
    DEFAULT_BASE_URL,
    ModelClient,
    ModelFailure,
    ModelReply,
    ToolCallRequest,
)
from seahaven_agents.loop import DEFAULT_MAX_TURNS, DEFAULT_SYSTEM_PROMPT, AgentLoop, play
from seahaven_agents.retries import RetryPolicy
from seahaven_agents.schemas import ToolNames, function_schemas

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TIMEOUT",
    "AgentLoop",
    "ChatAgent",
    "ModelClient",
    "ModelFailure",
    "ModelReply",
    "RetryPolicy",
    "ToolCallRequest",
    "ToolNames",
    "__version__",
    "function_schemas",
    "play",
]
