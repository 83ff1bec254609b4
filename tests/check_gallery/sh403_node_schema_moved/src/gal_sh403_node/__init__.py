"""A gallery world for seahaven check."""

from gal_sh403_node import tools
from gal_sh403_node.world import world

__all__ = ["tools", "world"]
