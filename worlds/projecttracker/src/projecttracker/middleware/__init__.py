"""ProjectTracker's middleware: the error handler alone, so it is the outermost layer."""

from projecttracker.middleware import error_handler

__all__ = ["error_handler"]
