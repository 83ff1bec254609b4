"""The company world: a small company's back office, composed with payments and chat.

``world`` is the declaration (see ``company_world.world`` for the worlds it
adds and why). Importing this package registers everything on it: the error
handler first and the role gate second (so the handler is the outermost
middleware), then the startup hooks, then every tool.
"""

# isort: off
from company_world.world import CompanyWorlds, world
from company_world import middleware
from company_world import startup
from company_world import tools

# isort: on

__all__ = ["CompanyWorlds", "middleware", "startup", "tools", "world"]
