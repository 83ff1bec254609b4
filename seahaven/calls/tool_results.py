"""A tool call's result as MCP carries it, for every door that speaks MCP.

A result is the value as JSON text, and as ``structuredContent`` too when it
is an object; a tool error is a result with ``isError`` whose content is the
world's ``{code, message, details}`` triple. ``seahaven mcp`` and the serving
plugin's MCP routes both answer with these, so an MCP client sees one shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

__all__ = ["error_result", "value_result"]


def value_result(value: Any) -> dict[str, Any]:
    """The ``CallToolResult`` of a call that returned ``value``."""
    rendered = to_jsonable_python(value, fallback=str)
    result: dict[str, Any] = {"content": [_text(rendered)], "isError": False}
    if isinstance(rendered, dict):
        result["structuredContent"] = rendered
    return result


def error_result(triple: Mapping[str, Any]) -> dict[str, Any]:
    """The ``CallToolResult`` of a call that failed with a tool error's triple."""
    rendered = to_jsonable_python(dict(triple), fallback=str)
    return {"content": [_text(rendered)], "structuredContent": rendered, "isError": True}


def _text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json.dumps(value, ensure_ascii=False, allow_nan=False)}
