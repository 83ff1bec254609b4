"""``seahaven.verifiers``: packs as verifiers tasksets, from the plugin ``seahaven[verifiers]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_verifiers import *  # noqa: F403
else:
    expose(__name__)
