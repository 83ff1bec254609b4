"""The tools, one module per resource; importing them registers them."""

from gal_clean.tools import items

__all__ = ["items"]
