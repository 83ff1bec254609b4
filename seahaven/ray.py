"""``seahaven.ray``: episodes on Ray, from the plugin ``pip install "seahaven[ray]"`` installs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seahaven.registry.extras import expose

if TYPE_CHECKING:
    from seahaven_ray import *  # noqa: F403

expose(__name__)
