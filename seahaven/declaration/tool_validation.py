"""What a call is checked against at run time: its arguments (the plain-scalar fast
path, which JSON input validates as JSON, and the violations an ``ArgumentError``
lists, clipped) and its result (``check_result``: something the wire can render).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

import pydantic
from pydantic import BaseModel, ValidationError

from seahaven.declaration.tool_signature import JSON_SCALARS, ArgumentField
from seahaven.errors import WorldBug


def json_native(annotation: Any) -> bool:
    """Whether strict Python validation of plain JSON input equals strict JSON validation."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return json_native(get_args(annotation)[0])
    if origin is Literal:
        return all(type(value) in JSON_SCALARS for value in get_args(annotation))
    if origin in (Union, types.UnionType, list, dict):
        return all(json_native(argument) for argument in get_args(annotation))
    if origin is not None:
        return False
    return annotation in (str, int, float, bool, type(None), Any, list, dict)


# The scalar annotations whose strict validation is a type check: the value is kept as it is.
_SCALAR_TYPES: dict[Any, tuple[type, ...]] = {
    str: (str,),
    int: (int,),
    bool: (bool,),
    float: (float,),
}
_SCALAR_DEFAULTS = (str, int, bool, float, type(None))
_MISSING: Any = object()


def _scalar_kinds(annotation: Any) -> tuple[type, ...] | None:
    """The exact types ``annotation`` accepts unchanged, for ``str``/``int``/``bool``/``float``
    and each of them ``| None``; ``None`` for anything else."""
    kinds = _SCALAR_TYPES.get(annotation)
    if kinds is not None:
        return kinds
    if get_origin(annotation) in (Union, types.UnionType):
        members = get_args(annotation)
        if len(members) == 2 and type(None) in members:
            other = members[0] if members[1] is type(None) else members[1]
            inner = _SCALAR_TYPES.get(other)
            if inner is not None:
                return (*inner, type(None))
    return None


def scalar_plan(
    model: type[BaseModel], fields: tuple[ArgumentField, ...]
) -> tuple[tuple[str, tuple[type, ...], Any], ...] | None:
    """Each parameter's name, exact types and default, when every one is a plain scalar.

    For such a tool, strict validation of a dict holding exactly those types
    returns them as they are (an ``int`` for a ``float``, a ``str`` subclass or
    a ``bool`` for an ``int`` are converted or refused, and go to pydantic), so
    ``Tool.validate`` checks the types itself and leaves the rest to pydantic.
    """
    plan = []
    for field in fields:
        info = model.model_fields[field.internal]
        kinds = _scalar_kinds(info.annotation)
        if (
            kinds is None
            or info.metadata
            or info.default_factory is not None
            or info.alias is not None
            or info.validation_alias is not None
            or info.validate_default
        ):
            return None
        if info.is_required():
            default = _MISSING
        elif type(info.default) in _SCALAR_DEFAULTS:
            default = info.default
        else:
            return None
        plan.append((field.parameter, kinds, default))
    return tuple(plan)


def scalar_values(
    plan: tuple[tuple[str, tuple[type, ...], Any], ...], arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """The parameters, in field order, when ``arguments`` fit ``plan`` as they are; else ``None``.

    ``None`` sends the arguments through pydantic, which says what is wrong.
    """
    if len(arguments) > len(plan):
        return None
    values = {}
    given = 0
    for name, kinds, default in plan:
        value = arguments.get(name, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                return None
            values[name] = default
        elif type(value) in kinds:
            values[name] = value
            given += 1
        else:
            return None
    # A key that names no parameter is pydantic's to refuse.
    return values if given == len(arguments) else None


def is_plain_json(value: Any) -> bool:
    """Whether a value is JSON's own types all the way down, as a wire call sends it."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and is_plain_json(item) for key, item in value.items())
    if kind is list:
        return all(is_plain_json(item) for item in value)
    return False


# The most characters of one part of a violation's location (a key the caller made up, say)
# and of its message that a violation repeats: an argument error never grows with its input.
_ECHO_CHARACTERS = 256
_MESSAGE_CHARACTERS = 500


def violations(error: ValidationError) -> list[dict[str, Any]]:
    """A validation error's problems, as an ``ArgumentError`` lists them, clipped."""
    return [
        {
            "loc": [
                part if isinstance(part, int) else _clipped(str(part), _ECHO_CHARACTERS)
                for part in item["loc"]
            ],
            "msg": _clipped(item["msg"], _MESSAGE_CHARACTERS),
            "type": item["type"],
        }
        for item in error.errors(include_url=False, include_context=False, include_input=False)
    ]


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


# --- results -----------------------------------------------------------------------------------


# The results that need no looking into; a container's scalars are checked in its loop.
_RESULT_SCALARS = frozenset({str, int, float, bool, type(None)})


def check_result(tool_name: str, value: Any) -> None:
    """Refuse a result that cannot be rendered for the wire: bytes and sets, at any depth."""
    kind = type(value)
    if kind in _RESULT_SCALARS:
        return
    if kind is dict:
        for item in value.values():
            if type(item) not in _RESULT_SCALARS:
                check_result(tool_name, item)
        return
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _RESULT_SCALARS:
                check_result(tool_name, item)
        return
    if isinstance(value, BaseModel):
        for item in value.__dict__.values():
            if type(item) not in _RESULT_SCALARS:
                check_result(tool_name, item)
        return
    if isinstance(value, bytes | bytearray | memoryview | set | frozenset):
        raise WorldBug(
            f"tool {tool_name!r} returned a {kind.__name__}; bytes and sets are not results "
            "(a set has no stable order): return a str, a sorted list or a model"
        )
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            check_result(tool_name, getattr(value, field.name))
        return
    if isinstance(value, Mapping):
        for item in value.values():
            check_result(tool_name, item)
        return
    if isinstance(value, enum.Enum):
        return
    try:
        pydantic.TypeAdapter(type(value)).dump_python(value, mode="json")
    except Exception:
        raise WorldBug(
            f"tool {tool_name!r} returned a {kind.__name__}, which has no JSON rendering; "
            "return dicts, lists, scalars, pydantic models or dataclasses"
        ) from None
