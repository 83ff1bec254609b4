"""A gallery world for seahaven check."""

from gal_sh405 import tools
from gal_sh405.world import world

__all__ = ["tools", "world"]
