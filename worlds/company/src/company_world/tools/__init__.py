"""The company's own tools. Importing this package registers every one of them.

The import order is the order the agent's tool list shows them in, before the
added worlds' tools: people first, then invoices, expenses and the summary.
"""

# isort: off
from company_world.tools import staff
from company_world.tools import invoices
from company_world.tools import expenses
from company_world.tools import summary
from company_world.tools import portal_cards

# isort: on

__all__ = ["expenses", "invoices", "portal_cards", "staff", "summary"]
