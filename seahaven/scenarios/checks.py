"""What ``seahaven scenarios check`` reads of a scenario's people before running anything.

The user's tools and every event's tool must be on the world's surface, a
world with a user cannot have a tool of its own named ``message_user``, and
the functions a user or an event names must import. The agent's surface in
such a scenario is the world's less the user's tools, plus ``message_user``.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import TYPE_CHECKING

from seahaven.errors import WorldBug
from seahaven.registry.targets import import_target
from seahaven.scenarios.users import MESSAGE_USER_TOOL

if TYPE_CHECKING:
    from seahaven.scenarios.model import Scenario

__all__ = ["agent_surface", "not_served", "people_problems"]


def agent_surface(scenario: Scenario, tools: Set[str]) -> set[str]:
    """The tools the agent may call: ``tools`` less the user's own, ``message_user`` with a user."""
    user = scenario.user
    if user is None:
        return set(tools)
    return (set(tools) - set(user.tools)) | {MESSAGE_USER_TOOL}


def not_served(scenario: Scenario, tool: str, world: str) -> str:
    """Why the agent cannot call ``tool``: it is the user's own, or the world lacks it."""
    if scenario.user is not None and tool in scenario.user.tools:
        return "which is the user's own tool, never the agent's"
    if tool == MESSAGE_USER_TOOL:
        return "and the scenario has no user to message"
    return f"which {world!r} does not serve"


def _importable(target: str, what: str) -> str | None:
    try:
        found = import_target(target, label=what, what="a function")
    except WorldBug as error:
        return str(error)
    if not callable(found):
        return f"{what}: {target!r} is not a function"
    return None


def people_problems(scenario: Scenario, tools: Set[str]) -> Iterator[str]:
    """Every problem with the scenario's user and events that reading them can find."""
    user = scenario.user
    if user is not None:
        if MESSAGE_USER_TOOL in tools:
            yield (
                f"the world has a tool named {MESSAGE_USER_TOOL!r}, which a scenario with a user "
                "adds for the agent; rename the world's tool"
            )
        for name in user.tools:
            if name not in tools:
                yield f"user.tools names {name!r}, which the world does not serve"
        if user.python is not None:
            problem = _importable(user.python, "user.python")
            if problem is not None:
                yield problem
    for index, event in enumerate(scenario.events):
        if event.tool is not None and event.tool not in tools:
            yield (
                f"events[{index}] ({event.name}) calls {event.tool!r}, which the world does not "
                "serve"
            )
        if event.python is not None:
            problem = _importable(event.python, f"events[{index}] ({event.name}).python")
            if problem is not None:
                yield problem
