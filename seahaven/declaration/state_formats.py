"""The built-in state formats: what each puts under the state document's ``state``.

A format is a function ``(world, instance or None) -> dict``. The built-in ones
read the change log the instance rendered when each call committed
(``instance.calls.log``, where each call's records are found by its ordinal),
so they cost serialisation and no database work, and the last step costs the
size of the last call. The envelope
around ``state`` is ``seahaven.state``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic_core import to_jsonable_python

from seahaven.stores.changelog import CallRecord, ChangeLog, published

__all__ = [
    "BUILTIN_FORMATS",
    "BUILTIN_JSON",
    "WHOLE_LOG_FORMATS",
    "LoggedInstance",
    "carries_whole_log",
    "encode_json",
    "encode_values",
]


class Logs(Protocol):
    """An instance's two logs, as the built-in formats read them (its ``Calls``)."""

    @property
    def log(self) -> ChangeLog:
        """The change log."""
        ...

    @property
    def call_log(self) -> Sequence[CallRecord]:
        """The call log."""
        ...


class LoggedInstance(Protocol):
    """What the built-in formats read of an instance: its logs and how many calls it took.

    A protocol, so the declaration names nothing of the instance's.
    """

    @property
    def calls(self) -> Logs:
        """The owner of its calls and logs."""
        ...

    @property
    def call_count(self) -> int:
        """How many calls it has recorded."""
        ...


def _whole_log(world: object, instance: LoggedInstance | None) -> dict[str, Any]:
    """``seahaven.state/1``: every record of the change log."""
    if instance is None:
        return {"db": {"log": []}}
    return {"db": {"log": instance.calls.log.published_all()}}


def _last_step(world: object, instance: LoggedInstance | None) -> dict[str, Any]:
    """``seahaven.state+last_step/1``: the records of the most recent call only."""
    if instance is None or instance.call_count == 0:
        return {"db": {"log": []}}
    records, _ = instance.calls.log.of_call(instance.call_count - 1)
    return {"db": {"log": published(records)}}


def _with_calls(world: object, instance: LoggedInstance | None) -> dict[str, Any]:
    """``seahaven.state+calls/1``: the whole log, plus the call log."""
    state = _whole_log(world, instance)
    state["calls"] = [] if instance is None else [r.to_dict() for r in instance.calls.call_log]
    return state


BUILTIN_FORMATS: dict[str, Callable[[Any, Any], dict[str, Any]]] = {
    "seahaven.state/1": _whole_log,
    "seahaven.state+last_step/1": _last_step,
    "seahaven.state+calls/1": _with_calls,
}
"""Every format the framework publishes, by name; a world registers its own beside them."""

WHOLE_LOG_FORMATS: frozenset[Callable[[Any, Any], dict[str, Any]]] = frozenset(
    {_whole_log, _with_calls}
)
"""The built-in formats whose ``state`` holds the whole change log.

An instance in one of these has its log build each record's published dict
as the record is appended (``ChangeLog(prepare=True)``), so the first state
document of an episode hands out dicts already built instead of copying
every record when it is read.
"""


class FormatResolver(Protocol):
    """What names a state format's function: a world, or a sealed composition."""

    def resolve_state_format(self, name: str) -> Callable[..., dict[str, Any]]:
        """The formatter ``name`` answers to."""
        ...


def carries_whole_log(world: FormatResolver, state_format: str) -> bool:
    """Whether ``state_format``, as ``world`` resolves it, is one of ``WHOLE_LOG_FORMATS``."""
    return world.resolve_state_format(state_format) in WHOLE_LOG_FORMATS


# Compact JSON: how the state document's text is written (see ``Instance.state_json``), and
# every frame and body a door sends. NaN and infinities are refused, as JSON has none.
_COMPACT: dict[str, Any] = {"separators": (",", ":"), "ensure_ascii": False, "allow_nan": False}

encode_json: Callable[[Any], str] = json.JSONEncoder(**_COMPACT).encode
"""Compact JSON text of a value made of JSON's own types; anything else is a ``TypeError``."""

encode_values: Callable[[Any], str] = json.JSONEncoder(
    **_COMPACT, default=to_jsonable_python
).encode
"""Compact JSON text of a value that may hold models, dates and such, rendered as pydantic does."""


def _log_text(texts: list[str]) -> str:
    return '{"db":{"log":[' + ",".join(texts) + "]}"


def _whole_log_json(instance: LoggedInstance) -> str:
    return _log_text(instance.calls.log.texts) + "}"


def _last_step_json(instance: LoggedInstance) -> str:
    if instance.call_count == 0:
        return _log_text([]) + "}"
    _, texts = instance.calls.log.of_call(instance.call_count - 1)
    return _log_text(texts) + "}"


def _with_calls_json(instance: LoggedInstance) -> str:
    calls = encode_json([record.to_dict() for record in instance.calls.call_log])
    return _log_text(instance.calls.log.texts) + ',"calls":' + calls + "}"


BUILTIN_JSON: dict[Callable[[Any, Any], dict[str, Any]], Callable[[LoggedInstance], str]] = {
    _whole_log: _whole_log_json,
    _last_step: _last_step_json,
    _with_calls: _with_calls_json,
}
"""Each built-in format's function, to the function writing the same ``state`` as JSON text.

The text is assembled from the JSON each change-log record was given when its
call ended, so the document's text costs a join, not an encoding.
"""
