"""A gallery world for seahaven check."""

from gal_sh504 import tools
from gal_sh504.world import world

__all__ = ["tools", "world"]
