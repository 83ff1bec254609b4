"""The payments world: a small card-payments processor for Seahaven.

``world`` is the declaration. Importing this package registers everything on it:
the error handler first (so it is the outermost middleware), then the account's
startup hook, then every tool.
"""

# isort: off
from payments_world.world import world
from payments_world import middleware
from payments_world import account
from payments_world import tools

# isort: on

__all__ = ["account", "middleware", "tools", "world"]
