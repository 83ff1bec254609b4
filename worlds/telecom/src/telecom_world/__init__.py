"""tau2-bench's telecom domain as a Seahaven world, with the customer's phone added to it.

``world`` is the declaration. Importing this package registers everything on
it: the error handler first (so it is the outermost middleware), the
middleware that keeps the phone in step with the carrier, the startup hook
that runs a task's setup, then every tool. The phone is ``telecom_world.phone``;
the pack of the benchmark's tasks is ``telecom_world.scenarios``.
"""

# isort: off
from telecom_world.world import world
from telecom_world import middleware
from telecom_world import setup
from telecom_world import tools

# isort: on

__all__ = ["middleware", "setup", "tools", "world"]
