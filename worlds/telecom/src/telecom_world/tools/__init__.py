"""The carrier's tools, the agent's. Importing this package registers every one of them.

The agent's list shows customers first, then lines, bills, and the hand-off to a
human agent.
"""

# isort: off
from telecom_world.tools import customers
from telecom_world.tools import lines
from telecom_world.tools import billing
from telecom_world.tools import generic

# isort: on

__all__ = ["billing", "customers", "generic", "lines"]
