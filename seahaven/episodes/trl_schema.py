"""A tool's JSON schema read as the keyword parameters of a TRL environment's method.

Each property becomes a ``MethodParam``: a Python keyword (``python_name``), a real type
hint built from the schema (``$ref``, unions, enums and all), and a description. The
method's docstring (``method_docstring``) carries the descriptions in an ``Args:`` block,
which ``transformers.utils.get_json_schema`` reads back, so a world's own text is kept
from tripping its section words.
"""

from __future__ import annotations

import functools
import inspect
import json
import keyword
import operator
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MethodParam", "method_docstring", "method_params", "python_name"]


# The words get_json_schema splits a docstring at, wherever they stand in it, and the
# "(choices: [...])" tail it reads as an enum: a world's own text must not trigger them.
_SECTION_WORDS = re.compile(r"(Args|Returns|Raises):")
_CHOICES_TAIL = re.compile(r"\(choices:.*\)\s*$", re.IGNORECASE | re.DOTALL)
# How deep a $ref chain is followed before the type becomes Any (a recursive model).
_MAX_REF_DEPTH = 8
_JSON_SCALARS = (str, int, float, bool, type(None))
# Literal subscripted with values read at run time (a type checker wants them written out).
_LITERAL: Any = Literal
_SIMPLE_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


@dataclass(frozen=True, slots=True)
class MethodParam:
    """One parameter of a tool method: its keyword, the tool's name for it, its type."""

    python: str  # the method's keyword
    wire: str  # the tool's argument name
    hint: Any
    required: bool
    default: Any
    description: str


def python_name(name: str, reserved: set[str], *, prefix: str, public: bool = False) -> str:
    """``name`` as a Python identifier: ``-`` as ``_``, keywords and ``reserved`` given a ``_``.

    A ``public`` name (a method's) starts with a letter, since TRL skips methods
    whose name starts with ``_``; any name that cannot start as it is gets ``prefix``.
    """
    spelled = re.sub(r"\W", "_", name)
    first = spelled[:1]
    if not (first.isalpha() or (first == "_" and not public)):
        spelled = prefix + spelled
    while keyword.iskeyword(spelled) or spelled in reserved:
        spelled += "_"
    return spelled


def method_params(schema: Mapping[str, Any]) -> list[MethodParam]:
    """The tool method's parameters, one per property of the tool's input schema, in its order."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    taken = {"self"}
    params: list[MethodParam] = []
    for wire, prop in properties.items():
        python = python_name(wire, taken, prefix="arg_")
        taken.add(python)
        prop = prop if isinstance(prop, Mapping) else {}
        is_required = wire in required
        default = prop.get("default") if not is_required else inspect.Parameter.empty
        params.append(
            MethodParam(
                python=python,
                wire=wire,
                hint=_hint(prop, schema, 0),
                required=is_required,
                default=default,
                description=_describe(wire, prop, schema, is_required),
            )
        )
    return params


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    reference = schema.get("$ref")
    if not isinstance(reference, str) or not reference.startswith("#/"):
        return None
    found: Any = root
    for part in reference[2:].split("/"):
        found = found.get(part) if isinstance(found, Mapping) else None
    return found if isinstance(found, Mapping) else None


def _union(options: list[Any]) -> Any:
    unique: list[Any] = []
    if not options:
        return Any
    for option in options:
        if option not in unique:
            unique.append(option)
    if Any in unique:
        # Any | None still says "may be null"; Any with anything else is just Any.
        return Any | None if type(None) in unique else Any
    return functools.reduce(operator.or_, unique)


def _hint(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    """The Python type hint get_json_schema turns back into (most of) ``schema``."""
    if depth > _MAX_REF_DEPTH:
        return Any
    target = _resolve(schema, root)
    if target is not None:
        return _hint(target, root, depth + 1)
    if "const" in schema and isinstance(schema["const"], _JSON_SCALARS):
        return _LITERAL[schema["const"]]
    values = schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, _JSON_SCALARS) for v in values):
        return _LITERAL[tuple(values)]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union([_hint(o, root, depth + 1) for o in options if isinstance(o, Mapping)])
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
        return _hint(all_of[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_hint({**schema, "type": item}, root, depth) for item in kind])
    if kind in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[kind]
    if kind == "array":
        items = schema.get("items")
        item = _hint(items, root, depth + 1) if isinstance(items, Mapping) else Any
        return types.GenericAlias(list, (item,))
    if kind == "object":
        values_schema = schema.get("additionalProperties")
        value = Any
        if isinstance(values_schema, Mapping) and not schema.get("properties"):
            value = _hint(values_schema, root, depth + 1)
        return types.GenericAlias(dict, (str, value))
    return Any


def _own_text(text: Any) -> str:
    """A world's text made safe for get_json_schema's docstring parser, on one line."""
    flat = " ".join(str(text).split())
    flat = _SECTION_WORDS.sub(r"\1 -", flat)
    return flat + "." if _CHOICES_TAIL.search(flat) else flat


def _branches(prop: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``prop`` and, for an optional value, its non-null branches, refs followed once."""
    found = [prop]
    for option in prop.get("anyOf") or prop.get("oneOf") or ():
        if isinstance(option, Mapping) and option.get("type") != "null":
            found.append(_resolve(option, root) or option)
    resolved = _resolve(prop, root)
    if resolved is not None:
        found.append(resolved)
    return found


def _describe(wire: str, prop: Mapping[str, Any], root: Mapping[str, Any], required: bool) -> str:
    branches = _branches(prop, root)
    text = next((b["description"] for b in branches if isinstance(b.get("description"), str)), None)
    if not text or not text.strip():
        title = prop.get("title")
        text = title if isinstance(title, str) and title.strip() else wire.replace("_", " ")
    notes: list[str] = []
    default = prop.get("default")
    if not required and default is not None:
        notes.append(f"Default: {json.dumps(default, ensure_ascii=False)}.")
    for branch in branches:
        keys = branch.get("properties")
        if branch.get("type") == "object" and isinstance(keys, Mapping) and keys:
            needed = set(branch.get("required") or ())
            listed = ", ".join(f"{key}{' (required)' if key in needed else ''}" for key in keys)
            notes.append(f"An object with the keys {listed}.")
            break
    return _own_text(" ".join([text.strip().rstrip(".") + ".", *notes]))


def _without_args_block(text: str) -> str:
    """``text`` without its own ``Args:`` block: the parameters' descriptions say it again."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.strip() == "Args:" and not line[:1].isspace():
            skipping = True
            continue
        if skipping and (not line.strip() or line[:1].isspace()):
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept).strip()


def method_docstring(tool: str, description: Any, params: list[MethodParam]) -> str:
    """The method's docstring: the tool's description, then an ``Args:`` block of its parameters."""
    summary = str(description).strip() if isinstance(description, str) else ""
    summary = _without_args_block(summary)
    lines = [_SECTION_WORDS.sub(r"\1 -", summary) or f"Call the tool {tool}."]
    if params:
        lines += ["", "Args:"]
        lines += [f"    {param.python}: {param.description}" for param in params]
    return "\n".join(lines)
