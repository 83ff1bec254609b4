"""A gallery world for seahaven check."""

from gal_sh504_more import tools
from gal_sh504_more.world import world

__all__ = ["tools", "world"]
