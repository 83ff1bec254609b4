"""A gallery world for seahaven check."""

from gal_sh402 import tools
from gal_sh402.world import world

__all__ = ["tools", "world"]
