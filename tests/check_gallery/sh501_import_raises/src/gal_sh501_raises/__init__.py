"""A gallery world for seahaven check."""

from gal_sh501_raises import tools
from gal_sh501_raises.world import world

__all__ = ["tools", "world"]
