"""ProjectTracker: the issue tracker the reference documentation's examples are written against.

``world`` is the declaration. The imports below are there to register: the error handler
first (so it is the outermost middleware), then the viewer's startup hook, then every tool.
"""

from projecttracker import middleware, startup, tools
from projecttracker.world import world

__all__ = ["middleware", "startup", "tools", "world"]
