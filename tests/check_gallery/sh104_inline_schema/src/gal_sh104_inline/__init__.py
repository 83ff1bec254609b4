"""A gallery world for seahaven check."""

from gal_sh104_inline import tools
from gal_sh104_inline.world import world

__all__ = ["tools", "world"]
