"""``seahaven.http``: a world's REST API and its test server, from the serving plugin.

The module is ``seahaven_openenv.web.http`` (the ``seahaven-openenv`` distribution),
installed with ``pip install "seahaven[serve]"``; see ``seahaven.extras``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_openenv.web.http import *  # noqa: F403
else:
    expose(__name__)
