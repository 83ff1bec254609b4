"""A gallery world for seahaven check: everything in order."""

from gal_clean import middleware, tools
from gal_clean.world import world

__all__ = ["middleware", "tools", "world"]
