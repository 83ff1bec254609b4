"""A gallery world for seahaven check."""

from gal_sh401 import tools
from gal_sh401.world import world

__all__ = ["tools", "world"]
