"""The store's tools. Importing this package registers every one of them.

The agent's list shows customers first, then the catalogue, orders, and the two
generic tools (the calculator and the hand-off to a human).
"""

# isort: off
from retail_world.tools import users
from retail_world.tools import products
from retail_world.tools import orders
from retail_world.tools import generic

# isort: on

__all__ = ["generic", "orders", "products", "users"]
