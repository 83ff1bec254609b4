"""An episode's tools as Inspect tools: the world's listing, and ``submit``, each a ``ToolDef``.

Each tool keeps the name, the description and the JSON schema the world lists
(``Trial.tools()``), so the model sees what every other door shows it. Two
things are adjusted for Inspect's own rules: a local ``$ref`` is written out
in place (Inspect's schema model keeps no ``$defs``, and a reference it cannot
follow would reach the model as an empty schema), and a parameter with no
description of its own is given one (Inspect refuses a parameter without a
top-level ``description``; one inside ``anyOf`` does not count).

Calling a tool calls the trial through a ``LocalSession``: a refusal (a
``seahaven.ToolError``, ``submit`` after the end included) comes back to the
model as Inspect's tool error carrying the world's ``{code, message,
details}``, and any other exception is the world's bug and fails the sample.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolParams
from inspect_ai.tool import ToolError as InspectToolError
from inspect_ai.util import JSONSchema

from seahaven.errors import ToolError
from seahaven.evaluation import LocalSession

__all__ = ["episode_tools", "tool_params"]

# How deep a chain of local references is followed before the schema is refused.
_MAX_REF_DEPTH = 32


def episode_tools(session: LocalSession) -> list[Tool]:
    """The session's tools (the world's, ``submit`` last) as Inspect tools."""
    return [_tool_def(session, listing).as_tool() for listing in session.tools()]


def tool_params(schema: Mapping[str, Any]) -> ToolParams:
    """A world tool's input schema as Inspect's ``ToolParams``, references inlined."""
    inlined = _inline(dict(schema), schema.get("$defs", {}), 0)
    properties = inlined.get("properties") or {}
    described = {name: _described(name, value) for name, value in properties.items()}
    return ToolParams(
        properties={name: JSONSchema.model_validate(value) for name, value in described.items()},
        required=list(inlined.get("required") or []),
        additionalProperties=inlined.get("additionalProperties", False),
    )


def _tool_def(session: LocalSession, listing: Mapping[str, Any]) -> ToolDef:
    name: str = listing["name"]

    async def execute(**arguments: Any) -> str:
        try:
            result = session.call(name, **arguments)
        except ToolError as refused:
            # The world's triple, as text: what every other door hands the agent.
            raise InspectToolError(_json(refused.to_dict())) from None
        return _json(result)

    return ToolDef(
        execute,
        name=name,
        description=listing.get("description") or f"The {name} tool.",
        parameters=tool_params(listing.get("input_schema") or {}),
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _described(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a top-level description: its own, a branch's, its title, or its name."""
    if schema.get("description"):
        return schema
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    found = next(
        (b["description"] for b in branches if isinstance(b, dict) and b.get("description")),
        None,
    )
    text = found or schema.get("title") or f"The {name.replace('_', ' ')}."
    return {**schema, "description": text}


def _inline(node: Any, definitions: Mapping[str, Any], depth: int) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/Name"}`` replaced by the definition it names."""
    if isinstance(node, list):
        return [_inline(item, definitions, depth) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str):
        if depth >= _MAX_REF_DEPTH or not reference.startswith("#/$defs/"):
            # A recursive model, or a reference outside the schema: the model gets an open
            # object here, and the world still validates what it sends.
            return {key: value for key, value in node.items() if key != "$ref"}
        target = definitions.get(reference.removeprefix("#/$defs/"), {})
        merged = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
        return _inline(merged, definitions, depth + 1)
    return {
        key: _inline(value, definitions, depth) for key, value in node.items() if key != "$defs"
    }
