"""Which kind of work a frame is, for the session pool's scheduler, and whether it is gated.

A kind (``reset <fixture>``, ``tool <name>``, ``state``...) is what the pool
times on the event loop; ``None`` always runs on a worker thread.
"""

from __future__ import annotations

from typing import Any

from seahaven.scenarios import MESSAGE_USER_TOOL, SUBMIT_TOOL
from seahaven_openenv.sessions.reset_data import SCENARIO_KEYS
from seahaven_openenv.sessions.session import Session
from seahaven_openenv.sessions.session_pool import SessionPool

__all__ = ["call_work", "mcp_work", "reset_work", "step_work"]


def reset_work(data: Any) -> str | None:
    """The kind of work a reset is; ``setup_sql`` may run for seconds, so it is never inline.

    Nor is a reset naming a scenario: it may load a pack, and a scenario's start
    usually runs ``setup_sql``.
    """
    if not isinstance(data, dict) or data.get("setup_sql") is not None:
        return None
    if data.get("from_snapshot") is not None:
        # A restore writes every store's file.
        return None
    if any(data.get(key) is not None for key in SCENARIO_KEYS):
        return None
    fixture = data.get("fixture")
    return f"reset {fixture}" if fixture is None or isinstance(fixture, str) else None


def step_work(data: Any, hub: SessionPool, session: Session) -> tuple[str | None, bool]:
    """The kind of work a step is, and whether it takes a call slot: a call and a finish do."""
    if isinstance(data, dict) and data.get("type") == "call_tool":
        return call_work(data.get("tool_name"), hub, session), True
    if isinstance(data, dict) and data.get("type") == "finish":
        # Grading reads every store, and may replay the scenario's solution.
        return ("finish" if hub.inline_calls else None), True
    return "list_tools", False


def mcp_work(data: Any, hub: SessionPool, session: Session) -> tuple[str | None, bool]:
    """The kind of work an MCP request is: ``tools/call`` is its tool's, the rest is quick."""
    if isinstance(data, dict) and data.get("method") == "tools/call":
        params = data.get("params")
        return call_work(
            params.get("name") if isinstance(params, dict) else None, hub, session
        ), True
    return "mcp", False


def call_work(name: Any, hub: SessionPool, session: Session) -> str | None:
    """A call's kind of work: its tool's when the world has that tool; an unknown one is quick."""
    if not hub.inline_calls:
        return None
    if session.service.serves(name) or (
        name in (SUBMIT_TOOL, MESSAGE_USER_TOOL) and session.trial is not None
    ):
        return f"tool {name}"
    return "tool (unknown)"
