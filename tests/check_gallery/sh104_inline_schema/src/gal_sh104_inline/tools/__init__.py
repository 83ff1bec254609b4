"""The tools, one module per resource; importing them registers them."""

from gal_sh104_inline.tools import items

__all__ = ["items"]
