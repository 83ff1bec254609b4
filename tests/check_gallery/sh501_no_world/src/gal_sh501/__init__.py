"""A package that builds a world but exports it under another name."""

from gal_sh501 import tools
from gal_sh501.world import world as notes_world

__all__ = ["notes_world", "tools"]
