"""A gallery world for seahaven check."""

from gal_sh102 import tools
from gal_sh102.world import world

__all__ = ["tools", "world"]
