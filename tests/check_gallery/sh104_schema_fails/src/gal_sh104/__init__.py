"""A gallery world for seahaven check."""

from gal_sh104 import tools
from gal_sh104.world import world

__all__ = ["tools", "world"]
