"""Serving one Seahaven world to one MCP client over stdio; imported as ``seahaven.mcp``.

``serve(world, reset_options=...)`` is what ``seahaven mcp`` runs: one instance for
the life of the process (or, with ``scenario="pack/id"``, one trial of that
scenario, ``build_bound_server``), the world's own tools, the official ``mcp`` SDK's
low-level server on stdin and stdout. ``build_server(world, instance)`` is the
server itself, for a transport of your own. The SDK takes most of a second to
import, and the command line loads this package's plugin every time it starts, so
these names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seahaven_mcp.bound import build_bound_server
    from seahaven_mcp.server import (
        CONVENIENCE_KEYS,
        RESET_KEYS,
        build_server,
        call_result,
        check_reset_options,
        serve,
    )

__all__ = [
    "CONVENIENCE_KEYS",
    "RESET_KEYS",
    "build_bound_server",
    "build_server",
    "call_result",
    "check_reset_options",
    "serve",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = "seahaven_mcp.bound" if name == "build_bound_server" else "seahaven_mcp.server"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'seahaven_mcp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
