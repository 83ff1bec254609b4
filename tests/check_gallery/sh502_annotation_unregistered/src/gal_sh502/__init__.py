"""A gallery world for seahaven check."""

from gal_sh502 import tools
from gal_sh502.world import world

__all__ = ["tools", "world"]
