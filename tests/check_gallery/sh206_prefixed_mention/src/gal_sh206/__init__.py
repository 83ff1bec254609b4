"""A gallery world for seahaven check."""

from gal_sh206 import tools
from gal_sh206.world import world

__all__ = ["tools", "world"]
