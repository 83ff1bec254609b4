"""Middleware, imported for its registrations."""

from gal_clean.middleware import timing

__all__ = ["timing"]
