"""A gallery world for seahaven check."""

from gal_sh503 import tools
from gal_sh503.world import world

__all__ = ["tools", "world"]
