"""The tools, one module per resource; importing them registers them."""

from gal_sh504_more.tools import items

__all__ = ["items"]
