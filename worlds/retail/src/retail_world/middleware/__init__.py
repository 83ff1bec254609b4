"""The retail world's middleware. Importing this package registers it, outermost first."""

from retail_world.middleware import error_handler

__all__ = ["error_handler"]
