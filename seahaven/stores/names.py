"""The spelling rules for every name the framework accepts.

A world's name, a fixture id and a node's state file become path components
that travel between machines, so they share one portable rule. Tool names,
child names and state-format names have rules of their own.
"""

from __future__ import annotations

import re

from seahaven.errors import WorldBug

__all__ = [
    "AGENT",
    "EVENT_PREFIX",
    "RESERVED_TOOL_NAMES",
    "SETUP",
    "USER",
    "check_actor",
    "check_child_name",
    "check_fixture_id",
    "check_scenario_name",
    "check_state_format_name",
    "check_tool_name",
    "check_world_name",
    "portable_name_problem",
]

CONTROL_TOOL_NAME = "controller_run_sql"
# OpenEnv's own verbs, plus the framework's control tool.
RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close", CONTROL_TOOL_NAME})

AGENT = "agent"
"""The actor of a call made the ordinary way: the agent's."""
USER = "user"
"""The actor of what a scenario's simulated user does with its own tools."""
SETUP = "setup"
"""The actor of a ``bulk()`` block's own writes: rows loaded by the harness, not by a call."""
EVENT_PREFIX = "event:"
"""An event's actor is this prefix and the event's name: ``event:card-declined``."""

_PORTABLE_CHARS = re.compile(r"[A-Za-z0-9 ._-]+")
_WINDOWS_DEVICES = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?", re.IGNORECASE)
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
_CHILD_NAME = re.compile(r"[a-z][a-z0-9_]*")
_SCENARIO_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,99}")
_STATE_FORMAT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._+-]*)/([1-9][0-9]*)")


def portable_name_problem(value: object, *, max_length: int | None = 128) -> str | None:
    """Say which clause of the portable-name rule ``value`` breaks, or ``None`` if it is fine."""
    if not isinstance(value, str):
        return f"it is a {type(value).__name__}, not a string"
    if value == "":
        return "it is empty"
    if max_length is not None and len(value) > max_length:
        return f"it is {len(value)} characters long; the limit is {max_length}"
    if "\x00" in value:
        return "it contains a NUL character"
    if "/" in value or "\\" in value:
        return "it contains a path separator"
    if len(value) >= 2 and value[1] == ":" and value[0].isalpha():
        return "it starts with a drive letter"
    if not _PORTABLE_CHARS.fullmatch(value):
        bad = next(ch for ch in value if not _PORTABLE_CHARS.fullmatch(ch))
        return (
            f"it contains {bad!r}; only ASCII letters, digits, space, '.', '-' and '_' are allowed"
        )
    if value[0] in " ." or value[-1] in " .":
        return "it starts or ends with a space or a dot"
    if _WINDOWS_DEVICES.fullmatch(value):
        return "it is a device name Windows reserves"
    return None


def check_world_name(value: object) -> str:
    """Return ``value`` if it is a valid world name, else raise ``WorldBug``."""
    problem = portable_name_problem(value)
    if problem is not None:
        raise WorldBug(f"not a world name: {value!r}: {problem}")
    assert isinstance(value, str)
    return value


def check_fixture_id(value: object) -> str:
    """Return ``value`` if it is a valid fixture id, else raise ``WorldBug``."""
    problem = portable_name_problem(value)
    if problem is not None:
        raise WorldBug(f"not a fixture id: {value!r}: {problem}")
    assert isinstance(value, str)
    return value


def check_tool_name(value: object, *, what: str = "tool name") -> str:
    """Return ``value`` if it is a valid, unreserved tool name, else raise ``WorldBug``."""
    if not isinstance(value, str) or not _TOOL_NAME.fullmatch(value):
        raise WorldBug(
            f"{value!r} is not a valid {what}: use 1 to 128 of A-Z, a-z, 0-9, '_' and '-'"
        )
    if value in RESERVED_TOOL_NAMES:
        raise WorldBug(
            f"{value!r} is a reserved {what} ({', '.join(sorted(RESERVED_TOOL_NAMES))} "
            f"belong to OpenEnv and the framework); choose another name"
        )
    return value


def child_name_problem(value: object) -> str | None:
    """Say why ``value`` cannot name an added world, or ``None``."""
    if not isinstance(value, str):
        return f"it is a {type(value).__name__}, not a string"
    if not _CHILD_NAME.fullmatch(value):
        return "it must match ^[a-z][a-z0-9_]*$"
    if "__" in value:
        return "it contains '__', which separates path segments in file and schema names"
    if value in ("main", "temp"):
        return f"{value!r} is SQLite's own schema name"
    return None


def check_child_name(value: object) -> str:
    """Return ``value`` if it can name an added world, else raise ``WorldBug``."""
    problem = child_name_problem(value)
    if problem is not None:
        raise WorldBug(f"add_world(name={value!r}) is not a valid name: {problem}")
    assert isinstance(value, str)
    return value


def check_state_format_name(value: object) -> str:
    """Return ``value`` if it is spelled ``<family>/<major>``, else raise ``WorldBug``."""
    if not isinstance(value, str) or not _STATE_FORMAT.fullmatch(value):
        raise WorldBug(
            f"{value!r} is not a state format name: spell it <family>/<major>, "
            f"such as 'myworld.summary/1'"
        )
    return value


def check_actor(value: object) -> str:
    """Who acts: ``agent``, ``user``, ``setup``, or ``event:<name>`` (a scenario-style name)."""
    if value in (AGENT, USER, SETUP):
        return str(value)
    if (
        isinstance(value, str)
        and value.startswith(EVENT_PREFIX)
        and _SCENARIO_NAME.fullmatch(value[len(EVENT_PREFIX) :])
    ):
        return value
    raise WorldBug(
        f"actor {value!r} is none of agent, user, setup or event:<name> (the name 1 to 100 "
        "lower-case letters, digits, '_' or '-')"
    )


def check_scenario_name(value: object, *, what: str = "scenario id") -> str:
    """A scenario's id or a pack's name: lower-case letters, digits, ``_`` and ``-``.

    They are written together as ``pack/id`` on the wire and in result files,
    so neither may hold a ``/``, and they stay short enough to read in a table.
    """
    if not isinstance(value, str) or not _SCENARIO_NAME.fullmatch(value):
        raise WorldBug(
            f"{what} {value!r} must be 1 to 100 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return value
