"""Test a pack, an agent or a harness offline: a scripted model behind a Chat Completions server.

``ScriptedChatServer(script)`` listens on 127.0.0.1 and answers the Chat
Completions requests of any client (the ``openai`` SDK's, an eval framework's)
from a script: a list of replies, or a function of each request. The replies
are made with ``answer``, ``tool_calls`` and ``call``, ``error``, ``hang`` and
``drop``; ``solution_script(pack)`` plays every scenario's reference solution
and ``flaky(script, ...)`` adds failures. ``python -m seahaven_agents.testing
PACK`` serves the solution script of an installed pack from the shell.
"""

from __future__ import annotations

from seahaven_agents.testing.replies import (
    ChatRequest,
    Reply,
    ScriptedCall,
    answer,
    call,
    drop,
    error,
    hang,
    tool_calls,
)
from seahaven_agents.testing.scripts import flaky, solution_script
from seahaven_agents.testing.server import MAX_BODY, Script, ScriptedChatServer

__all__ = [
    "MAX_BODY",
    "ChatRequest",
    "Reply",
    "Script",
    "ScriptedCall",
    "ScriptedChatServer",
    "answer",
    "call",
    "drop",
    "error",
    "flaky",
    "hang",
    "solution_script",
    "tool_calls",
]
