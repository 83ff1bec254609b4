"""A gallery world for seahaven check."""

from gal_sh103 import tools
from gal_sh103.world import world

__all__ = ["tools", "world"]
