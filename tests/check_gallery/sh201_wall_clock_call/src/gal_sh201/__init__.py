"""A gallery world for seahaven check."""

from gal_sh201 import middleware, tools
from gal_sh201.world import world

__all__ = ["middleware", "tools", "world"]
