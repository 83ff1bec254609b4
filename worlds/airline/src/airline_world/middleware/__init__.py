"""The airline world's middleware. Importing this package registers it, outermost first."""

from airline_world.middleware import error_handler

__all__ = ["error_handler"]
