"""``seahaven.agents``: model-backed agents, from the plugin ``seahaven[agents]`` installs.

See ``seahaven.extras``; the plugin is the distribution ``seahaven-agents``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_agents import *  # noqa: F403
else:
    expose(__name__)
