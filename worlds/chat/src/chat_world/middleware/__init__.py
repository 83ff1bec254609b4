"""Middleware. The error handler is imported first so it is registered first, outermost."""

from chat_world.middleware import error_handler

__all__ = ["error_handler"]
