"""``Tool`` (one registered function and its argument model) and ``Call`` (one call in flight).

A tool's signature becomes one strict pydantic model, built once at
registration, and that model's JSON schema is what the agent reads. Everything
registration refuses is refused here, as a ``WorldBug`` naming the tool and the
parameter.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from seahaven.declaration.tool_descriptions import describe_parameters, docstring_arguments
from seahaven.declaration.tool_signature import (
    ArgumentField,
    argument_model,
    json_schema,
    refuse_non_plain_function,
    refuse_unrenderable_return,
)
from seahaven.declaration.tool_validation import (
    is_plain_json,
    json_native,
    scalar_plan,
    scalar_values,
    violations,
)
from seahaven.errors import ArgumentError, WorldBug
from seahaven.stores.arguments import check_depth
from seahaven.stores.names import check_tool_name

__all__ = ["Call", "Tool", "docstring_arguments"]


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
    _fields: tuple[ArgumentField, ...]
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
        refuse_non_plain_function(tool_name, fn)
        fields, model = argument_model(tool_name, fn)
        schema = json_schema(tool_name, model, fields)
        describe_parameters(schema, fields, docstring_arguments(inspect.getdoc(fn) or ""))
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
            json_native(model.model_fields[field.internal].annotation) for field in fields
        )
        # ``model_validate`` without its Python frame: the same validator, the same errors.
        tool._validate_python = model.__pydantic_validator__.validate_python
        # When every field is stored under its parameter's name, the model's own dict,
        # in field order, is the parameters (a model made per call, so never shared).
        tool._same_names = all(field.internal == field.parameter for field in fields)
        tool._scalars = scalar_plan(model, fields) if tool._same_names else None
        tool._listing = json.dumps(
            {"name": tool_name, "description": tool.description, "input_schema": schema}
        )
        refuse_unrenderable_return(tool_name, fn)
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
            plain = scalar_values(scalars, arguments)
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
            elif is_plain_json(arguments):
                model = self.params.model_validate_json(json.dumps(arguments))
            else:
                model = self.params.model_validate(dict(arguments))
        except ValidationError as error:
            raise ArgumentError(self.name, violations(error)) from None
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
