"""What a reset's data and a step's action must look like, and what a reset asks for.

A reset's data is the instance options (``seahaven.InstanceOptions``) and the
session's own keys (``episode_id``, a scenario, ``from_snapshot``); a step's is
one of OpenEnv's actions. ``check_reset`` and ``check_action`` read them as a
client's and refuse what is wrong with a ``FrameError`` naming the fix, carrying
pydantic's ``errors`` bounded; ``reset_schema`` is what ``GET /schema`` says of
a reset.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

import seahaven
from seahaven.declaration.instance_options import InstanceOptions, expected_type, instance_option_names
from seahaven.scenarios import Scenario, ScenarioSet
from seahaven_openenv.wire.echo import bounded, clip, json_type, listed, shown
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.tasks import ServedPack, TaskError, find_for_reset

__all__ = [
    "IGNORED_RESET_KEYS",
    "MAX_EPISODE_ID_LENGTH",
    "MAX_ERRORS",
    "MAX_MESSAGE_CHARACTERS",
    "RESET_KEYS",
    "RESET_TYPES",
    "SCENARIO_KEYS",
    "SNAPSHOT_RESET_KEYS",
    "check_action",
    "check_reset",
    "chosen_scenario",
    "reset_schema",
    "startup_keywords",
]

# The keys only a session takes, beside the instance options (seahaven.InstanceOptions),
# each listed after the option named here, so messages keep the order they always had.
_SESSION_KEYS_AFTER: dict[str, tuple[str, ...]] = {
    "clock_mode": ("episode_id",),
    "setup_sql": ("scenario", "split", "index"),
    "storage": ("from_snapshot",),
}


def _reset_keys() -> tuple[str, ...]:
    keys: list[str] = []
    for name in instance_option_names():
        keys.append(name)
        keys.extend(_SESSION_KEYS_AFTER.get(name, ()))
    return tuple(keys)


# Every key that changes what a reset does, in the order error messages list them: the
# instance options, and the session's own keys among them.
RESET_KEYS: tuple[str, ...] = _reset_keys()
# The keys a reset from a snapshot takes besides ``from_snapshot``: the rest say how an
# episode starts, and a snapshot says that itself.
SNAPSHOT_RESET_KEYS: frozenset[str] = frozenset({"from_snapshot", "episode_id"})
# The keys that bind a session to a scenario: ``scenario``, or ``split`` and ``index``.
SCENARIO_KEYS: tuple[str, ...] = ("scenario", "split", "index")
# The keys that say where an episode starts, which a scenario sets itself.
_START_KEYS: tuple[str, ...] = ("fixture", "now", "clock_mode", "startup", "setup_sql")
# Accepted and ignored: the control tool is the operator's to enable, never the client's.
IGNORED_RESET_KEYS: frozenset[str] = frozenset({"control_tools"})

MAX_EPISODE_ID_LENGTH = 255

# The JSON type of each key only a session takes, as a refusal names it.
_SESSION_TYPES: dict[str, str] = {
    "episode_id": f"a non-empty string of at most {MAX_EPISODE_ID_LENGTH} characters",
    "scenario": "a string (a scenario, as pack/id)",
    "split": "a string (a split of the served pack)",
    "index": "a whole number (a task's place in its split, 0 first)",
    "from_snapshot": "a string (a token a snapshot frame answered)",
}
# Each reset key's JSON type, as a refusal names it; every key may also be null (the default).
# An instance option's is the one seahaven.InstanceOptions gives, so every door says the same.
RESET_TYPES: dict[str, str] = {
    key: _SESSION_TYPES[key] if key in _SESSION_TYPES else expected_type(key) for key in RESET_KEYS
}
# The most pydantic-style entries an error frame's ``errors`` lists.
MAX_ERRORS = 20
# The most characters of an engine's or the framework's message a refusal carries.
MAX_MESSAGE_CHARACTERS = 1000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SessionData(_Strict):
    """The keys of a reset's data only a session takes: the rest are ``InstanceOptions``."""

    episode_id: Annotated[str, Field(min_length=1, max_length=MAX_EPISODE_ID_LENGTH)] | None = (
        Field(
            default=None,
            title="Episode id",
            description="The episode's id; null takes the instance's id",
        )
    )
    scenario: str | None = Field(
        default=None,
        title="Scenario",
        description="The scenario the session is bound to, as pack/id",
    )
    split: str | None = Field(
        default=None,
        title="Split",
        description="A split of the pack served beside the world, with index",
    )
    index: int | None = Field(
        default=None,
        title="Index",
        description="The place of a task in its split, 0 first, with split",
    )
    from_snapshot: str | None = Field(
        default=None,
        title="From snapshot",
        description="A token a snapshot frame answered: the episode goes on from that snapshot",
    )
    control_tools: Any = None


# A reset's data as pydantic checks it: the instance options' fields and the session's own,
# in the order of RESET_KEYS (the order its errors come in).
_RESET_FIELDS = {**InstanceOptions.model_fields, **_SessionData.model_fields}
_ResetData = create_model(  # type: ignore[call-overload]
    "_ResetData",
    __base__=_Strict,
    **{
        key: (_RESET_FIELDS[key].annotation, _RESET_FIELDS[key])
        for key in (*RESET_KEYS, "control_tools")
    },
)


class _CallToolData(_Strict):
    type: Literal["call_tool"]
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class _ListToolsData(_Strict):
    type: Literal["list_tools"]
    metadata: dict[str, Any] = Field(default_factory=dict)


class _FinishData(_Strict):
    type: Literal["finish"]
    metadata: dict[str, Any] = Field(default_factory=dict)


# What a reset's data and a step's action may be, as pydantic checks them: a reset's is checked
# with it, and a step's (checked by hand, which is quicker) only to describe one refused.
_RESET: TypeAdapter[Any] = TypeAdapter(_ResetData)


def reset_schema() -> dict[str, Any]:
    """The JSON Schema of a reset's data: the instance options and the session's own keys.

    ``control_tools``, accepted and ignored, is left out: it is not the client's to set.
    """
    schema: dict[str, Any] = _ResetData.model_json_schema()
    schema["properties"].pop("control_tools", None)
    schema["title"] = "ResetData"
    schema["description"] = (
        "A reset's data: every key may be left out or null. The instance options are "
        "seahaven.InstanceOptions's; episode_id, scenario, split, index and from_snapshot "
        "are the session's own."
    )
    return schema


_ACTION: TypeAdapter[Any] = TypeAdapter(
    Annotated[_CallToolData | _ListToolsData | _FinishData, Field(discriminator="type")]
)
_ACTION_KEYS = {
    "call_tool": frozenset({"type", "tool_name", "arguments", "metadata"}),
    "list_tools": frozenset({"type", "metadata"}),
    "finish": frozenset({"type", "metadata"}),
}


class _ActionType(BaseModel):
    """An action's ``type`` alone, so pydantic itself describes one it does not know."""

    model_config = ConfigDict(extra="ignore", strict=True)

    type: Literal["call_tool", "list_tools", "finish"]


_ACTION_TYPE: TypeAdapter[Any] = TypeAdapter(_ActionType)


def check_action(data: Any) -> str:
    """The action type of a step's ``data``, or ``FrameError`` with pydantic's ``errors``."""
    if not isinstance(data, dict):
        _refuse_action(data, f"a step's data must be an action object, not {json_type(data)}")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in _ACTION_KEYS:
        # pydantic's own entries (a literal_error, or missing), as OpenEnv's server sends them
        # for an action type its model does not take: ctx, input, loc, msg and type.
        raise FrameError(
            "VALIDATION_ERROR",
            f"unknown action type {shown(kind)}; a step is call_tool, list_tools or finish",
            # Only the type is judged: an action of many keys keeps its type in view.
            errors=_errors(_ACTION_TYPE, {"type": kind} if "type" in data else data, whole=True),
        )
    allowed = _ACTION_KEYS[kind]
    stray = sorted(key for key in data if key not in allowed)
    if stray:
        _refuse_action(
            data, f"{kind} does not take {listed(stray)}; it takes {', '.join(sorted(allowed))}"
        )
    if not isinstance(data.get("metadata", {}), dict):
        _refuse_action(data, f"{kind}'s metadata must be an object")
    if kind == "call_tool":
        if not isinstance(data.get("tool_name"), str):
            _refuse_action(data, "call_tool needs tool_name, a string")
        if not isinstance(data.get("arguments", {}), dict):
            _refuse_action(data, "call_tool's arguments must be an object of name: value")
    return kind


def _refuse_action(data: Any, message: str) -> NoReturn:
    raise FrameError("VALIDATION_ERROR", message, errors=_errors(_ACTION, data))


def _errors(adapter: TypeAdapter[Any], data: Any, *, whole: bool = False) -> list[dict[str, Any]]:
    """Pydantic's errors for ``data``, each ``{type, loc, msg}`` and a scalar ``input``, bounded.

    A value the client sent is repeated only when it is a scalar, and shortened;
    an object or an array is left out, so the list never grows with the frame.
    ``whole`` keeps every key of pydantic's entry instead (``ctx`` and ``input``
    always), each value the client sent shortened by ``bounded``.
    """
    if isinstance(data, dict) and len(data) > MAX_ERRORS:
        data = dict(itertools.islice(data.items(), MAX_ERRORS))
    try:
        adapter.validate_python(data)
    except ValidationError as error:
        found = error.errors(include_url=False, include_context=whole)
    else:
        return []
    listed_errors = []
    for item in found[:MAX_ERRORS]:
        entry: dict[str, Any] = {
            "type": item["type"],
            "loc": [clip(part) if isinstance(part, str) else part for part in item["loc"]],
            "msg": clip(item["msg"], MAX_MESSAGE_CHARACTERS),
        }
        value = item.get("input")
        if whole:
            entry["input"] = bounded(value)
            if "ctx" in item:
                entry["ctx"] = {str(key): bounded(text) for key, text in item["ctx"].items()}
        elif value is None or isinstance(value, int | float):
            entry["input"] = value
        elif isinstance(value, str):
            entry["input"] = clip(value)
        listed_errors.append(entry)
    return listed_errors


def check_reset(
    data: Any,
    world: seahaven.World,
    pack: ServedPack | None,
    packs: Mapping[str, ScenarioSet],
) -> tuple[dict[str, Any], str | None, tuple[ScenarioSet, Scenario] | None]:
    """A reset's ``data`` checked: the instance's arguments, the episode id, the scenario chosen.

    ``world`` is the served world, ``pack`` the pack served beside it and ``packs``
    every pack a ``scenario`` may name. A refused reset is a ``FrameError``
    naming what to change, with pydantic's ``errors``.
    """
    if not isinstance(data, dict):
        raise FrameError(
            "VALIDATION_ERROR",
            f"a reset's data must be an object, not {json_type(data)}",
            errors=_errors(_RESET, data),
        )
    stray = sorted(key for key in data if key not in RESET_KEYS and key not in IGNORED_RESET_KEYS)
    if stray:
        startup_keys = [key for key in stray if key in startup_keywords(world)]
        if startup_keys:
            what = "a startup keyword" if len(startup_keys) == 1 else "startup keywords"
            raise FrameError(
                "VALIDATION_ERROR",
                f"{listed(startup_keys)}: {what} of world {world.name!r} goes inside "
                f'startup, as {{"startup": {{"{clip(startup_keys[0])}": ...}}}}',
                errors=_errors(_RESET, data),
            )
        raise FrameError(
            "VALIDATION_ERROR",
            f"reset does not take {listed(stray)}; it takes {', '.join(RESET_KEYS)}",
            errors=_errors(_RESET, data),
        )
    errors = _errors(_RESET, data)
    wrong = [
        f"{key} must be {expected} or null, not {json_type(data[key])}"
        for key, expected in RESET_TYPES.items()
        if any(error["loc"][:1] == [key] for error in errors)
    ]
    if wrong:
        raise FrameError("VALIDATION_ERROR", f"reset's {'; '.join(wrong)}", errors=errors)
    arguments = {
        key: data[key]
        for key in RESET_KEYS
        if key in data and key not in ("episode_id", "from_snapshot") and key not in SCENARIO_KEYS
    }
    return arguments, data.get("episode_id"), chosen_scenario(data, world, pack, packs)


def chosen_scenario(
    data: dict[str, Any],
    world: seahaven.World,
    pack: ServedPack | None,
    packs: Mapping[str, ScenarioSet],
) -> tuple[ScenarioSet, Scenario] | None:
    """The pack and scenario a reset binds the session to, or ``None`` for a free episode."""
    reference: str | None = data.get("scenario")
    split: str | None = data.get("split")
    index: int | None = data.get("index")
    if reference is None and split is None and index is None:
        return None
    if reference is not None and (split is not None or index is not None):
        raise FrameError(
            "VALIDATION_ERROR",
            "a reset names its scenario once: scenario (pack/id), or split and index",
        )
    given = [key for key in _START_KEYS if data.get(key) is not None]
    if given:
        raise FrameError(
            "VALIDATION_ERROR",
            f"a scenario sets where its episode starts, so a reset naming one does not take "
            f"{', '.join(given)}; it takes seed, episode_id and state_format beside it",
        )
    served = pack
    try:
        if reference is not None:
            return find_for_reset(reference, world, packs)
        if split is None or index is None:
            missing = "index" if index is None else "split"
            raise FrameError(
                "VALIDATION_ERROR",
                f"split and index go together (the index-th task of a split); {missing} is missing",
            )
        if served is None:
            raise TaskError(
                f"world {world.name!r} is served without a pack of scenarios, so "
                "split and index name nothing; name the scenario (scenario: pack/id), or "
                "serve a pack with seahaven serve --scenarios PACK"
            )
        return served.pack, served.scenario_at(split, index)
    except TaskError as error:
        raise FrameError("VALIDATION_ERROR", clip(error.message, MAX_MESSAGE_CHARACTERS)) from None


def startup_keywords(world: seahaven.World) -> frozenset[str]:
    """Every keyword a startup hook of ``world`` (or of a world it composes) accepts."""
    keywords: set[str] = set()
    for node in world.composition().nodes:
        keywords |= node.world.accepted_startup_kwargs
    return frozenset(keywords)
