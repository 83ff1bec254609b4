"""A gallery world for seahaven check."""

from gal_sh301 import tools
from gal_sh301.world import world

__all__ = ["tools", "world"]
