"""The airline's tools. Importing this package registers every one of them.

The agent's list shows customers first, then flights, reservations, and the
two generic tools (the calculator and the hand-off to a human).
"""

# isort: off
from airline_world.tools import users
from airline_world.tools import flights
from airline_world.tools import reservations
from airline_world.tools import generic

# isort: on

__all__ = ["flights", "generic", "reservations", "users"]
