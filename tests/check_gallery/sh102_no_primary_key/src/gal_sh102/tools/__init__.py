"""The tools, one module per resource; importing them registers them."""

from gal_sh102.tools import items

__all__ = ["items"]
