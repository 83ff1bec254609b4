"""A tool's parameter descriptions: the ``Args:`` section of its docstring read
(``docstring_arguments``), and a description put at the top of every property of its
schema, where a harness reads it (``describe_parameters``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from seahaven.declaration.tool_signature import ArgumentField

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


def describe_parameters(
    schema: dict[str, Any], fields: tuple[ArgumentField, ...], documented: Mapping[str, str]
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
