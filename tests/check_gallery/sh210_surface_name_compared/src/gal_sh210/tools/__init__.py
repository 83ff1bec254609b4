"""The tools, one module per resource; importing them registers them."""

from gal_sh210.tools import loans

__all__ = ["loans"]
