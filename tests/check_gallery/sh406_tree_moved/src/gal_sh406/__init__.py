"""A gallery world for seahaven check."""

from gal_sh406 import tools
from gal_sh406.world import world

__all__ = ["tools", "world"]
