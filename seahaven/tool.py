"""``Tool`` (one registered function and its argument model) and ``Call`` (one call in flight).

A tool's signature becomes one strict pydantic model, built once at
registration, and that model's JSON schema is what the agent reads. Everything
registration refuses is refused here, as a ``WorldBug`` naming the tool and the
parameter.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import sys
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

import pydantic
from pydantic import BaseModel, ConfigDict, ValidationError

from seahaven.errors import ArgumentError, WorldBug
from seahaven.stores.arguments import check_depth
from seahaven.stores.names import check_tool_name

__all__ = ["Call", "Tool", "docstring_arguments"]

_JSON_SCALARS = (str, int, float, bool, type(None))
_MUTABLE_DEFAULTS = (list, dict, set, bytearray)
# Field names pydantic reserves on a model; a parameter spelled like one is
# stored under a private field name and keeps its own name on the wire.
_MODEL_ATTRIBUTES = frozenset(dir(BaseModel)) | {"model_config", "model_fields"}


class Call:
    """One call as dispatch sees it. Frozen: ``with_arguments`` makes a changed copy."""

    __slots__ = ("arguments", "name", "node", "tool")

    name: str
    arguments: dict[str, Any]
    tool: Tool
    node: str

    def __init__(self, name: str, arguments: dict[str, Any], tool: Tool, node: str) -> None:
        # The slots' own setters, past the refusing __setattr__: a Call is made per call.
        _set_name(self, name)
        _set_arguments(self, arguments)
        _set_tool(self, tool)
        _set_node(self, node)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Call is frozen; pass call.with_arguments(...) on instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a Call is frozen")

    def with_arguments(self, **changes: Any) -> Call:
        """A copy of this call with ``changes`` merged over its arguments."""
        return Call(self.name, {**self.arguments, **changes}, self.tool, self.node)

    def __repr__(self) -> str:
        return f"Call({self.name!r}, node={self.node!r}, arguments={self.arguments!r})"


_set_name = Call.__dict__["name"].__set__
_set_arguments = Call.__dict__["arguments"].__set__
_set_tool = Call.__dict__["tool"].__set__
_set_node = Call.__dict__["node"].__set__


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    internal: str  # the pydantic field name
    parameter: str  # the Python parameter name
    wire: str  # the name the agent sends


class Tool:
    """One registered tool: its function, its argument model and the schema the agent reads."""

    __slots__ = (
        "_fields",
        "_listing",
        "_python_fast_path",
        "_same_names",
        "_scalars",
        "_validate_python",
        "control",
        "description",
        "fn",
        "name",
        "params",
        "schema",
        "transaction",
    )

    name: str
    description: str
    fn: Callable[..., Any]
    params: type[BaseModel]
    schema: dict[str, Any]
    transaction: bool
    control: bool
    _fields: tuple[_Field, ...]
    _listing: str
    _python_fast_path: bool
    _same_names: bool
    _scalars: tuple[tuple[str, tuple[type, ...], Any], ...] | None
    _validate_python: Callable[[Any], BaseModel]

    def __init__(self) -> None:
        raise TypeError("build a Tool with Tool.from_function(fn, ...)")

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        transaction: bool = True,
    ) -> Tool:
        """Build a tool from a function whose first parameter is the context."""
        return cls._build(fn, name=name, description=description, transaction=transaction)

    @classmethod
    def _build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None,
        description: str | None,
        transaction: bool,
        control: bool = False,
    ) -> Tool:
        if not callable(fn):
            raise WorldBug(f"a tool must be a function, not {type(fn).__name__}")
        label = name if name is not None else getattr(fn, "__name__", repr(fn))
        if name is None:
            name = getattr(fn, "__name__", None)
        tool_name = check_tool_name(name, what=f"tool name (from {label!r})")
        if not isinstance(transaction, bool):
            raise WorldBug(f"tool {tool_name!r}: transaction must be True or False")
        if description is not None and not isinstance(description, str):
            raise WorldBug(f"tool {tool_name!r}: description must be a string")
        _refuse_non_plain_function(tool_name, fn)
        fields, model = _argument_model(tool_name, fn)
        schema = _json_schema(tool_name, model, fields)
        _describe_parameters(schema, fields, docstring_arguments(inspect.getdoc(fn) or ""))
        tool = object.__new__(cls)
        tool.name = tool_name
        tool.description = description if description is not None else (inspect.getdoc(fn) or "")
        tool.fn = fn
        tool.params = model
        tool.schema = schema
        tool.transaction = transaction
        tool.control = control
        tool._fields = fields
        tool._python_fast_path = all(
            _json_native(model.model_fields[field.internal].annotation) for field in fields
        )
        # ``model_validate`` without its Python frame: the same validator, the same errors.
        tool._validate_python = model.__pydantic_validator__.validate_python
        # When every field is stored under its parameter's name, the model's own dict,
        # in field order, is the parameters (a model made per call, so never shared).
        tool._same_names = all(field.internal == field.parameter for field in fields)
        tool._scalars = _scalar_plan(model, fields) if tool._same_names else None
        tool._listing = json.dumps(
            {"name": tool_name, "description": tool.description, "input_schema": schema}
        )
        _refuse_unrenderable_return(tool_name, fn)
        return tool

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the function's parameters, or ``ArgumentError`` listing every problem.

        Plain JSON at every depth is validated as JSON, the form the schema
        publishes; anything else is validated as Python objects. A value nested
        deeper than ``seahaven.arguments.MAX_ARGUMENT_DEPTH`` is refused first.
        Parameters that are all plain scalars (``str``, ``int``, ``bool``,
        ``float``, each maybe ``| None``) given exactly those types are checked
        here, as strict validation would, and returned as they are.
        """
        scalars = self._scalars
        if scalars is not None and type(arguments) is dict:
            plain = _scalar_values(scalars, arguments)
            if plain is not None:
                return plain
        check_depth(self.name, arguments)
        try:
            if self._python_fast_path:
                # Every field takes only JSON's own types, where strict Python
                # validation and strict JSON validation agree, whatever the input.
                model = self._validate_python(
                    arguments if type(arguments) is dict else dict(arguments)
                )
            elif _is_plain_json(arguments):
                model = self.params.model_validate_json(json.dumps(arguments))
            else:
                model = self.params.model_validate(dict(arguments))
        except ValidationError as error:
            raise ArgumentError(self.name, _violations(error)) from None
        values: dict[str, Any] = model.__dict__
        if self._same_names:
            return values
        return {field.parameter: values[field.internal] for field in self._fields}

    def listing(self) -> dict[str, Any]:
        """``{"name", "description", "input_schema"}``, a fresh copy each time."""
        listed: dict[str, Any] = json.loads(self._listing)
        return listed

    def bind_positional(self, args: tuple[Any, ...]) -> dict[str, Any]:
        """Map positional arguments of a typed call onto wire names, in parameter order."""
        if len(args) > len(self._fields):
            raise WorldBug(
                f"tool {self.name!r} takes {len(self._fields)} arguments; {len(args)} were given"
            )
        return {field.wire: value for field, value in zip(self._fields, args, strict=False)}

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


# --- registration checks -----------------------------------------------------------------------


def _refuse_non_plain_function(tool_name: str, fn: Callable[..., Any]) -> None:
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


def is_context_annotation(annotation: Any) -> bool:
    """Whether ``annotation`` is ``seahaven.Ctx`` or ``seahaven.Ctx[...]``."""
    from seahaven.declaration.context import Ctx

    return annotation is Ctx or get_origin(annotation) is Ctx


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


def _argument_model(tool_name: str, fn: Callable[..., Any]) -> tuple[tuple[_Field, ...], Any]:
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
    fields: list[_Field] = []
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
        fields.append(_Field(internal=internal, parameter=parameter.name, wire=wire))
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


def _json_schema(tool_name: str, model: Any, fields: tuple[_Field, ...]) -> dict[str, Any]:
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


# --- parameter descriptions --------------------------------------------------------------------

# A Google-style section header: "Args:" (or "Arguments:") alone on its line.
_ARGS_HEADER = re.compile(r"^(\s*)(?:Args|Arguments):\s*$")
# One entry of the section: "name: text" or "name (type): text".
_ARGS_ENTRY = re.compile(r"^(\s*)\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def docstring_arguments(docstring: str) -> dict[str, str]:
    """The ``Args:`` section of a Google-style docstring, as parameter name to description.

    ``docstring`` is as ``inspect.getdoc`` gives it. Each entry is ``name: text``
    (``name (type): text`` too), and lines indented further continue it. A
    docstring with no such section gives ``{}``.
    """
    lines = docstring.splitlines()
    found: dict[str, str] = {}
    index = 0
    while index < len(lines):
        header = _ARGS_HEADER.match(lines[index])
        index += 1
        if header is None:
            continue
        outer = len(header.group(1))
        entry_indent: int | None = None
        current: str | None = None
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            indent = len(line) - len(line.lstrip())
            if indent <= outer:
                break
            entry = _ARGS_ENTRY.match(line)
            if entry is not None and (entry_indent is None or indent <= entry_indent):
                entry_indent = indent
                current = entry.group(2)
                found[current] = entry.group(3).strip()
            elif current is not None:
                found[current] = f"{found[current]} {line.strip()}".strip()
            index += 1
    return {name: text for name, text in found.items() if text}


def _describe_parameters(
    schema: dict[str, Any], fields: tuple[_Field, ...], documented: Mapping[str, str]
) -> None:
    """Give every property of ``schema`` a top-level ``description`` where one can be found.

    A harness reads a parameter's description at the top of its schema, and
    refuses a tool whose parameter has none there (Inspect AI does). The
    docstring's ``Args:`` line for the parameter wins; else a description
    pydantic put inside ``anyOf``/``oneOf`` (an ``X | None`` of a described
    type) is lifted out of the branch; else a referenced model's or enum's own
    description is used.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    definitions = schema.get("$defs", {})
    for field in fields:
        spec = properties.get(field.wire)
        if not isinstance(spec, dict):
            continue
        lifted = _lift_branch_descriptions(spec)
        text = documented.get(field.parameter)
        if text is not None:
            spec["description"] = text
        elif not _described(spec) and lifted:
            spec["description"] = lifted
        elif not _described(spec):
            referenced = _referenced_description(spec, definitions)
            if referenced:
                spec["description"] = referenced


def _described(spec: Mapping[str, Any]) -> bool:
    description = spec.get("description")
    return isinstance(description, str) and bool(description.strip())


def _lift_branch_descriptions(spec: dict[str, Any]) -> str:
    """Take the descriptions out of ``spec``'s union branches; return them as one text."""
    texts: list[str] = []
    for key in ("anyOf", "oneOf"):
        branches = spec.get(key)
        if not isinstance(branches, list):
            continue
        for branch in branches:
            if isinstance(branch, dict) and _described(branch):
                text = branch.pop("description").strip()
                if text not in texts:
                    texts.append(text)
    return " ".join(texts)


def _referenced_description(spec: Mapping[str, Any], definitions: Mapping[str, Any]) -> str:
    """The description of the model or enum ``spec`` refers to, directly or in a branch."""
    candidates = [spec, *spec.get("anyOf", []), *spec.get("oneOf", [])]
    for candidate in candidates:
        reference = candidate.get("$ref") if isinstance(candidate, dict) else None
        if not isinstance(reference, str) or not reference.startswith("#/$defs/"):
            continue
        target = definitions.get(reference.removeprefix("#/$defs/"))
        if isinstance(target, dict) and _described(target):
            return str(target["description"]).strip()
    return ""


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
            if not isinstance(value, _JSON_SCALARS):
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


def _refuse_unrenderable_return(tool_name: str, fn: Callable[..., Any]) -> None:
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


# --- validation --------------------------------------------------------------------------------


def _json_native(annotation: Any) -> bool:
    """Whether strict Python validation of plain JSON input equals strict JSON validation."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _json_native(get_args(annotation)[0])
    if origin is Literal:
        return all(type(value) in _JSON_SCALARS for value in get_args(annotation))
    if origin in (Union, types.UnionType, list, dict):
        return all(_json_native(argument) for argument in get_args(annotation))
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


def _scalar_plan(
    model: type[BaseModel], fields: tuple[_Field, ...]
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


def _scalar_values(
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


def _is_plain_json(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and _is_plain_json(item) for key, item in value.items())
    if kind is list:
        return all(_is_plain_json(item) for item in value)
    return False


# The most characters of one part of a violation's location (a key the caller made up, say)
# and of its message that a violation repeats: an argument error never grows with its input.
_ECHO_CHARACTERS = 256
_MESSAGE_CHARACTERS = 500


def _violations(error: ValidationError) -> list[dict[str, Any]]:
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
