"""A gallery world for seahaven check."""

from gal_sh209 import tools
from gal_sh209.world import world

__all__ = ["tools", "world"]
