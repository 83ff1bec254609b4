"""A gallery world for seahaven check."""

from gal_sh208 import tools
from gal_sh208.world import world

__all__ = ["tools", "world"]
