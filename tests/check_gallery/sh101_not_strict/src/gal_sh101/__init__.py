"""A gallery world for seahaven check."""

from gal_sh101 import tools
from gal_sh101.world import world

__all__ = ["tools", "world"]
