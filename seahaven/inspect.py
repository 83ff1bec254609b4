"""``seahaven.inspect``: packs in Inspect AI, from the plugin ``seahaven[inspect]`` installs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_inspect import *  # noqa: F403
else:
    expose(__name__)
