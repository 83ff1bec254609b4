"""The customer's phone: tau2-bench's telecom user device, as a world the telecom world adds.

``world`` is its declaration; importing this package registers its tools.
``state`` reads and writes the phone's store as Python objects, and
``behaviour`` is how the phone behaves, shared by its tools, by a task's setup
and by the telecom world's middleware that keeps it in step with the carrier.
"""

# isort: off
from telecom_world.phone.world import world
from telecom_world.phone import tools

# isort: on

__all__ = ["tools", "world"]
