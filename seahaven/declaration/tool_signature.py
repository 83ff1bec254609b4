"""A tool function's signature read at registration: its parameters checked, their
annotations resolved and refused where JSON cannot carry them, and the strict pydantic
argument model and JSON schema built from them, once. Every refusal is a ``WorldBug``
naming the tool and the parameter.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
import warnings
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

import pydantic
from pydantic import BaseModel, ConfigDict

from seahaven.errors import WorldBug

# The values JSON carries as they are.
JSON_SCALARS = (str, int, float, bool, type(None))
_MUTABLE_DEFAULTS = (list, dict, set, bytearray)
# Field names pydantic reserves on a model; a parameter spelled like one is
# stored under a private field name and keeps its own name on the wire.
_MODEL_ATTRIBUTES = frozenset(dir(BaseModel)) | {"model_config", "model_fields"}


@dataclasses.dataclass(frozen=True, slots=True)
class ArgumentField:
    """One parameter of a tool: its pydantic field, its Python name, its name on the wire."""

    internal: str  # the pydantic field name
    parameter: str  # the Python parameter name
    wire: str  # the name the agent sends


def refuse_non_plain_function(tool_name: str, fn: Callable[..., Any]) -> None:
    """Refuse an async def, an async generator or a generator as a tool."""
    target = inspect.unwrap(fn)
    if inspect.isasyncgenfunction(target):
        raise WorldBug(f"tool {tool_name!r} is an async generator; a tool is a plain function")
    if inspect.iscoroutinefunction(target):
        raise WorldBug(
            f"tool {tool_name!r} is an async def; a tool is a plain synchronous function"
        )
    if inspect.isgeneratorfunction(target):
        raise WorldBug(f"tool {tool_name!r} is a generator; return the result instead of yielding")


def _signature(owner: str, fn: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise WorldBug(f"{owner}: its signature cannot be read: {error}") from error


def resolve_annotations(owner: str, fn: Callable[..., Any]) -> dict[str, Any]:
    """Every parameter annotation of ``fn`` as a real object, strings and all.

    A name that exists only under ``TYPE_CHECKING`` cannot be resolved at run
    time, and the refusal names the parameter and the symbol.
    """
    signature = _signature(owner, fn)
    raw = {
        name: parameter.annotation
        for name, parameter in signature.parameters.items()
        if parameter.annotation is not inspect.Parameter.empty
    }
    target = inspect.unwrap(fn)
    globalns = getattr(target, "__globals__", {})
    localns: dict[str, Any] = {}
    code = getattr(target, "__code__", None)
    closure = getattr(target, "__closure__", None)
    if code is not None and closure:
        for variable, cell in zip(code.co_freevars, closure, strict=True):
            try:
                localns[variable] = cell.cell_contents
            except ValueError:
                continue
    resolved: dict[str, Any] = {}
    caller_locals: dict[str, Any] | None = None
    for name, annotation in raw.items():
        holder = types.SimpleNamespace(__annotations__={name: annotation}, __globals__=globalns)
        try:
            try:
                hints = typing.get_type_hints(holder, localns=localns, include_extras=True)
            except NameError:
                # A string annotation naming a type local to the function that
                # registers the tool (a test, a factory) is not in the tool's
                # globals or closure; the registering frame still has it.
                if caller_locals is None:
                    caller_locals = _registering_frame_locals()
                hints = typing.get_type_hints(
                    holder, localns={**caller_locals, **localns}, include_extras=True
                )
            resolved[name] = hints[name]
        except NameError as error:
            symbol = getattr(error, "name", None) or str(error)
            raise WorldBug(
                f"{owner}: the annotation of parameter {name!r} names {symbol!r}, which does not "
                "exist at run time (imported only under TYPE_CHECKING?); import it for real"
            ) from None
        except Exception as error:
            raise WorldBug(
                f"{owner}: the annotation of parameter {name!r} cannot be resolved: {error}"
            ) from None
    return resolved


def _registering_frame_locals() -> dict[str, Any]:
    """The locals of the nearest frame outside the framework: the code registering the tool."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "seahaven" and not module.startswith("seahaven."):
            return dict(frame.f_locals)
        frame = frame.f_back
    return {}


class ContextBase:
    """The base of ``seahaven.Ctx``, what a tool's first parameter may be annotated with.

    It sits here, beneath the context, so that reading a signature names no
    module above it; ``Ctx`` is its one direct subclass.
    """

    __slots__ = ()


def is_context_annotation(annotation: Any) -> bool:
    """Whether ``annotation`` is ``seahaven.Ctx`` or ``seahaven.Ctx[...]``."""
    # Ctx is ContextBase's one direct subclass; a subclass of Ctx is not Ctx, as before.
    origin = get_origin(annotation)
    return any(annotation is ctx or origin is ctx for ctx in ContextBase.__subclasses__())


def check_context_parameter(owner: str, fn: Callable[..., Any]) -> inspect.Signature:
    """Refuse ``fn`` unless its first parameter is a positional context."""
    signature = _signature(owner, fn)
    parameters = list(signature.parameters.values())
    if not parameters:
        raise WorldBug(f"{owner} takes no parameters; its first parameter must be the context, ctx")
    first = parameters[0]
    if first.kind not in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD):
        raise WorldBug(
            f"{owner}: its first parameter {first.name!r} must be positional, because it "
            "receives the context"
        )
    return signature


def argument_model(tool_name: str, fn: Callable[..., Any]) -> tuple[tuple[ArgumentField, ...], Any]:
    """The tool's parameters as fields, and the strict pydantic model of its arguments."""
    owner = f"tool {tool_name!r}"
    signature = check_context_parameter(owner, fn)
    annotations = resolve_annotations(owner, fn)
    parameters = list(signature.parameters.values())
    first = parameters[0]
    if first.name in annotations and not is_context_annotation(annotations[first.name]):
        raise WorldBug(
            f"{owner}: its first parameter {first.name!r} is annotated "
            f"{_describe(annotations[first.name])}; annotate it seahaven.Ctx or leave it bare"
        )
    fields: list[ArgumentField] = []
    definitions: dict[str, Any] = {}
    for index, parameter in enumerate(parameters[1:], start=1):
        where = f"{owner}, parameter {parameter.name!r}"
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise WorldBug(f"{where}: *args is not allowed; declare each argument by name")
        if parameter.kind is parameter.VAR_KEYWORD:
            raise WorldBug(f"{where}: **kwargs is not allowed; declare each argument by name")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise WorldBug(f"{where}: is positional-only; arguments arrive by name")
        if parameter.name not in annotations:
            raise WorldBug(f"{where}: has no type annotation; every argument needs one")
        annotation = annotations[parameter.name]
        default = parameter.default
        if isinstance(default, _MUTABLE_DEFAULTS):
            raise WorldBug(
                f"{where}: has a mutable default ({default!r}); use None or an immutable value"
            )
        _check_annotation(where, annotation, set())
        internal = parameter.name
        if internal.startswith("_") or internal in _MODEL_ATTRIBUTES:
            internal = f"p{index}_{parameter.name.lstrip('_')}"
            annotation = typing.Annotated[annotation, pydantic.Field(alias=parameter.name)]
        wire = _wire_name(annotation, parameter.name)
        fields.append(ArgumentField(internal=internal, parameter=parameter.name, wire=wire))
        definitions[internal] = (
            annotation,
            ... if default is inspect.Parameter.empty else default,
        )
    model = _create_model(tool_name, definitions)
    if model is None:
        for name, definition in definitions.items():
            if _create_model(tool_name, {name: definition}) is None:
                culprit = next(field.parameter for field in fields if field.internal == name)
                error = _model_error(tool_name, {name: definition})
                raise WorldBug(
                    f"{owner}, parameter {culprit!r}: pydantic cannot build a model for "
                    f"{_describe(definition[0])}: {error}"
                )
        raise WorldBug(
            f"{owner}: pydantic cannot build its argument model: "
            f"{_model_error(tool_name, definitions)}"
        )
    return tuple(fields), model


_CONFIG = ConfigDict(strict=True, extra="forbid", protected_namespaces=())


def _create_model(tool_name: str, definitions: dict[str, Any]) -> Any:
    try:
        return _create_model_or_raise(tool_name, definitions)
    except Exception:
        return None


def _model_error(tool_name: str, definitions: dict[str, Any]) -> str:
    try:
        _create_model_or_raise(tool_name, definitions)
    except Exception as error:
        return str(error).splitlines()[0]
    return "unknown error"


def _create_model_or_raise(tool_name: str, definitions: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pydantic.create_model(f"{tool_name}_arguments", __config__=_CONFIG, **definitions)


def json_schema(tool_name: str, model: Any, fields: tuple[ArgumentField, ...]) -> dict[str, Any]:
    """The argument model's JSON schema; a parameter pydantic cannot render is named."""
    try:
        schema: dict[str, Any] = model.model_json_schema()
    except Exception:
        for field in fields:
            definition = model.model_fields[field.internal]
            single = _create_model(
                tool_name, {field.internal: (_field_annotation(definition), ...)}
            )
            try:
                if single is not None:
                    single.model_json_schema()
            except Exception as error:
                raise WorldBug(
                    f"tool {tool_name!r}, parameter {field.parameter!r}: pydantic cannot give "
                    f"{_describe(definition.annotation)} a JSON schema: "
                    f"{str(error).splitlines()[0]}"
                ) from None
        raise WorldBug(
            f"tool {tool_name!r}: pydantic cannot give its arguments a JSON schema"
        ) from None
    schema.pop("title", None)
    return schema


def _field_annotation(field: Any) -> Any:
    if field.metadata:
        return typing.Annotated[(field.annotation, *field.metadata)]
    return field.annotation


def _wire_name(annotation: Any, default: str) -> str:
    if get_origin(annotation) is typing.Annotated:
        for item in reversed(get_args(annotation)[1:]):
            alias = getattr(item, "alias", None)
            if isinstance(alias, str):
                return alias
            validation_alias = getattr(item, "validation_alias", None)
            if isinstance(validation_alias, str):
                return validation_alias
    return default


def _describe(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _has_own_config(candidate: Any) -> dict[str, Any] | None:
    if isinstance(candidate, type) and issubclass(candidate, BaseModel):
        return dict(candidate.model_config)
    config = getattr(candidate, "__pydantic_config__", None)
    if isinstance(config, dict):
        return dict(config)
    return None


def _check_annotation(where: str, annotation: Any, seen: set[int]) -> None:
    """Refuse non-strict nested configs and Literal values JSON cannot send, at any depth."""
    if id(annotation) in seen:
        return
    seen.add(id(annotation))
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        _check_annotation(where, get_args(annotation)[0], seen)
        return
    if origin is Literal:
        for value in get_args(annotation):
            if not isinstance(value, JSON_SCALARS):
                raise WorldBug(
                    f"{where}: Literal value {value!r} is not something JSON can send; "
                    "use its plain value, or annotate the Enum type itself"
                )
        return
    if origin is not None:
        for argument in get_args(annotation):
            if argument is not Ellipsis:
                _check_annotation(where, argument, seen)
        return
    if not isinstance(annotation, type):
        return
    config = _has_own_config(annotation)
    if config is not None and "strict" not in config:
        raise WorldBug(
            f"{where}: {annotation.__qualname__} has a pydantic config of its own that does not "
            "set strict; give it strict=True, or strict=False where lax input is intended"
        )
    nested: dict[str, Any] = {}
    if issubclass(annotation, BaseModel):
        nested = {name: _field_annotation(f) for name, f in annotation.model_fields.items()}
    elif dataclasses.is_dataclass(annotation) or typing.is_typeddict(annotation):
        try:
            nested = typing.get_type_hints(annotation, include_extras=True)
        except Exception:
            nested = {}
    for member in nested.values():
        _check_annotation(where, member, seen)


def refuse_unrenderable_return(tool_name: str, fn: Callable[..., Any]) -> None:
    """Refuse a tool annotated to return bytes or a set, which are not results."""
    annotation = inspect.signature(fn).return_annotation
    if isinstance(annotation, str):
        try:
            holder = types.SimpleNamespace(
                __annotations__={"return": annotation},
                __globals__=getattr(inspect.unwrap(fn), "__globals__", {}),
            )
            annotation = typing.get_type_hints(holder)["return"]
        except Exception:
            return
    target = get_origin(annotation) or annotation
    if target in (bytes, bytearray, set, frozenset):
        raise WorldBug(
            f"tool {tool_name!r} returns {_describe(annotation)}; bytes and sets are not results "
            "(a set has no stable order): return a str, a sorted list or a model"
        )
