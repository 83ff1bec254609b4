"""A gallery world for seahaven check."""

from gal_sh207 import tools
from gal_sh207.world import world

__all__ = ["tools", "world"]
