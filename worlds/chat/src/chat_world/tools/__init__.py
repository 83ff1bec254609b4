"""The chat world's tools, one module per resource. Importing this package registers them all.

The import order is the order an agent's tool list shows: people, channels,
messages, reactions, search.
"""

# isort would alphabetise these, and the order is the tool list's order.
from chat_world.tools import users  # noqa: I001
from chat_world.tools import channels, messages, reactions, search

__all__ = ["channels", "messages", "reactions", "search", "users"]
