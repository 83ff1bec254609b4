"""A session's tool list as the Chat Completions API takes it: one function schema a tool.

A session lists each tool as ``{"name", "description", "input_schema"}``; the
API wants ``{"type": "function", "function": {"name", "description",
"parameters"}}``, and a name matching ``^[a-zA-Z0-9_-]{1,64}$``. Every shipped
world's names already match; a name that does not (a dotted alias, say) is
shown to the model with each other character turned into ``_`` (cut to 64),
and ``ToolNames`` maps it back. Two tools that would show the same name are a
``WorldBug``, since the model could not tell them apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seahaven import WorldBug

__all__ = ["ToolNames", "function_schemas"]

_ALLOWED = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OTHER = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass
class ToolNames:
    """The names the model sees, and the session's tool behind each."""

    shown: dict[str, str] = field(default_factory=dict)

    def tool(self, name: str) -> str | None:
        """The session's tool the model means by ``name``; ``None`` for no such tool."""
        return self.shown.get(name)

    def names(self) -> list[str]:
        """Every name the model sees, in the session's order."""
        return list(self.shown)


def _shown_name(name: str) -> str:
    if _ALLOWED.match(name):
        return name
    cleaned = _OTHER.sub("_", name)[:64]
    return cleaned or "_"


def function_schemas(tools: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], ToolNames]:
    """The function schemas for ``tools`` (a session's ``tools()``), and their names' map."""
    schemas: list[dict[str, Any]] = []
    names = ToolNames()
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise WorldBug(f"a tool of the session has no name: {dict(tool)!r}")
        shown = _shown_name(name)
        if shown in names.shown:
            raise WorldBug(
                f"the tools {names.shown[shown]!r} and {name!r} would both be shown to the model "
                f"as {shown!r} (a function name is letters, digits, _ and -, at most 64); "
                "rename one of them"
            )
        names.shown[shown] = name
        parameters = tool.get("input_schema") or {"type": "object", "properties": {}}
        function: dict[str, Any] = {"name": shown, "parameters": parameters}
        description = tool.get("description")
        if description:
            function["description"] = description
        schemas.append({"type": "function", "function": function})
    return schemas, names
