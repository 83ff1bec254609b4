"""A gallery world for seahaven check."""

from gal_sh203 import tools
from gal_sh203.world import world

__all__ = ["tools", "world"]
