"""Scenarios: tasks on reward-free worlds, packed, published, bound to episodes and graded.

``Scenario`` (a start, instructions, a grader, a budget, a solution),
``ScenarioSet`` (a named, versioned pack with splits, in Python or YAML),
the ``seahaven.scenarios`` entry-point group that finds packs by name, and
``Trial``, the one scenario-bound episode every door drives. A scenario may
have people in it: a simulated ``User`` the agent talks to with
``message_user``, and ``Event``s on the world's clock (``users``, ``events``,
and ``people``, which runs them in a trial).
"""

from __future__ import annotations

from seahaven.scenarios.events import Event
from seahaven.scenarios.model import (
    DEFAULT_BUDGET,
    SUBMIT_TOOL,
    Accept,
    Scenario,
    Start,
    ToolCall,
    read_calls,
)
from seahaven.scenarios.pack import PACK_FILE, ScenarioSet
from seahaven.scenarios.people import Cast
from seahaven.scenarios.registry import (
    SCENARIOS_GROUP,
    PackSpec,
    find_scenario,
    import_pack,
    is_pack_path,
    load_pack,
    pack_folder,
    pack_specs,
    refresh_packs,
    split_reference,
)
from seahaven.scenarios.trial import EpisodeOver, Replay, Trial, replay_solution, submit_listing
from seahaven.scenarios.users import (
    MESSAGE_USER_TOOL,
    STOP_MARKER,
    PythonUser,
    ScriptedUser,
    User,
    UserContext,
    UserPlayer,
    UserReply,
    UserTurn,
    When,
    message_user_listing,
)

__all__ = [
    "DEFAULT_BUDGET",
    "MESSAGE_USER_TOOL",
    "PACK_FILE",
    "SCENARIOS_GROUP",
    "STOP_MARKER",
    "SUBMIT_TOOL",
    "Accept",
    "Cast",
    "EpisodeOver",
    "Event",
    "PackSpec",
    "PythonUser",
    "Replay",
    "Scenario",
    "ScenarioSet",
    "ScriptedUser",
    "Start",
    "ToolCall",
    "Trial",
    "User",
    "UserContext",
    "UserPlayer",
    "UserReply",
    "UserTurn",
    "When",
    "find_scenario",
    "import_pack",
    "is_pack_path",
    "load_pack",
    "message_user_listing",
    "pack_folder",
    "pack_specs",
    "read_calls",
    "refresh_packs",
    "replay_solution",
    "split_reference",
    "submit_listing",
]
