"""A gallery world for seahaven check."""

from gal_sh403 import tools
from gal_sh403.world import world

__all__ = ["tools", "world"]
