"""tau2-bench's retail domain as a Seahaven world.

``world`` is the declaration. Importing this package registers everything on
it: the error handler first (so it is the outermost middleware), then every
tool. The pack of the benchmark's tasks is ``retail_world.scenarios``.
"""

# isort: off
from retail_world.world import world
from retail_world import middleware
from retail_world import tools

# isort: on

__all__ = ["middleware", "tools", "world"]
