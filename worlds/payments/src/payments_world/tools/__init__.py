"""The payments world's tools. Importing this package registers every one of them.

The import order is the order an agent's tool list shows them in: customers
and their cards first, then money in, money back, the balance, and money out.
"""

# isort: off
from payments_world.tools import customers
from payments_world.tools import payment_methods
from payments_world.tools import charges
from payments_world.tools import refunds
from payments_world.tools import balance
from payments_world.tools import bank_accounts
from payments_world.tools import payouts

# isort: on

__all__ = [
    "balance",
    "bank_accounts",
    "charges",
    "customers",
    "payment_methods",
    "payouts",
    "refunds",
]
