"""A gallery world for seahaven check."""

from gal_sh205 import tools
from gal_sh205.world import world

__all__ = ["tools", "world"]
