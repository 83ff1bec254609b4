"""``seahaven.openenv``: the serving plugin (``seahaven-openenv``), under the framework's name.

Install it with ``pip install "seahaven[serve]"``; see ``seahaven.extras``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_openenv import *  # noqa: F403
else:
    expose(__name__)
