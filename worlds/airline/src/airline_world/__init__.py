"""tau2-bench's airline domain as a Seahaven world.

``world`` is the declaration. Importing this package registers everything on
it: the error handler first (so it is the outermost middleware), then every
tool. The pack of the benchmark's tasks is ``airline_world.scenarios``.
"""

# isort: off
from airline_world.world import world
from airline_world import middleware
from airline_world import tools

# isort: on

__all__ = ["middleware", "tools", "world"]
