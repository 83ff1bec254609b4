"""A gallery world for seahaven check."""

from gal_sh210 import middleware, tools
from gal_sh210.world import world

__all__ = ["middleware", "tools", "world"]
