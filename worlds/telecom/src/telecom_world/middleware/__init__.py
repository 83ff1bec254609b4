"""The telecom world's middleware, outermost first: the error handler, then the sync."""

# isort: off
from telecom_world.middleware import error_handler
from telecom_world.middleware import in_step

# isort: on

__all__ = ["error_handler", "in_step"]
