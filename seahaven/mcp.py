"""``seahaven.mcp``: the MCP plugin (``seahaven-mcp``), under the framework's name.

Install it with ``pip install "seahaven[mcp]"``; see ``seahaven.extras``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_mcp import *  # noqa: F403
else:
    expose(__name__)
