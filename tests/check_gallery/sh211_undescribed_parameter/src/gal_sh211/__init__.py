"""A gallery world for seahaven check."""

from gal_sh211 import tools
from gal_sh211.world import world

__all__ = ["tools", "world"]
