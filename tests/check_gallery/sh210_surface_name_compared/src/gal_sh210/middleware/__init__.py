"""The middleware; importing it registers it."""

from gal_sh210.middleware import hours

__all__ = ["hours"]
