"""The tools, one module per resource; importing them registers them."""

from gal_sh211.tools import items

__all__ = ["items"]
