"""A gallery world for seahaven check."""

from gal_sh404 import tools
from gal_sh404.world import world

__all__ = ["tools", "world"]
