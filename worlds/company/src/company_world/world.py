"""The company world's declaration and the three worlds it adds. Other modules register on it.

The order of the ``add_world`` calls is the order the agent's tool list shows
the added worlds in, after the company's own tools:

``payments`` (prefix ``pay_``, every tool)
    The company's own card-processing account, in usd. The agent's finance
    staff run it directly, so the whole product is on the surface. The
    settlement delay is bound to 0 days: reimbursements are paid out of
    money that invoices brought in the same day.
``chat`` (prefix ``chat_``, an allow list)
    The company's chat workspace, reached the way a real back-office
    integration reaches one: through its own account, ``@backoffice``
    (bound as the chat world's acting user), with a bot's scopes. It reads
    channels, history, threads and people, searches, posts and replies.
    Creating accounts, channels and memberships, deactivating people,
    editing or deleting messages are not the integration's to offer: the
    company's own onboarding and offboarding tools do the first ones, and
    the rest belong to people in the chat product itself.
``payments_eu`` (store ``eu``, prefix ``eu_pay_``, a block list)
    A second account of the same payments product, for the European
    entity: a separate store in the scope ``eu``. Invoices in eur are
    collected through it. Its money leaves only through the entity's own
    treasury, so bank accounts, payouts and deleting customers are kept off
    the surface; everything else is there, under a prefix of its own so the
    two accounts never share a name. Funds settle after 2 days there.
``portal`` (prefix ``portal_``, every tool)
    The customer portal (``company_world.portal``): the customers' side,
    where they add the cards they pay by. Its tools are the customer's own:
    a scenario's simulated customer calls them (dual control), and a
    scenario with a user never offers them to the agent. The back office
    reads the cards' tokens through ``list_portal_cards``, never the numbers.
"""

from __future__ import annotations

import chat_world
import payments_world

import seahaven
from company_world import portal

__all__ = [
    "CHAT_INTEGRATION_HANDLE",
    "CHAT_TOOLS",
    "EU_BLOCKED_TOOLS",
    "CompanyWorlds",
    "world",
]

CHAT_INTEGRATION_HANDLE = "backoffice"
"""The chat account the back office acts as: its handle in the workspace."""

# The chat world lists these in its own order (people, channels, messages,
# search), and that order is kept on the surface whatever the order here.
CHAT_TOOLS = (
    "lookup_user_by_handle",
    "list_channels",
    "lookup_channel_by_name",
    "post_message",
    "reply_in_thread",
    "list_messages",
    "get_thread",
    "search_messages",
)
"""What the chat integration offers the agent."""

EU_BLOCKED_TOOLS = (
    "delete_customer",
    "add_bank_account",
    "list_bank_accounts",
    "create_payout",
    "cancel_payout",
    "get_payout",
    "list_payouts",
)
"""What the European account keeps off the agent's surface: its treasury, and deleting customers."""


class CompanyWorlds(seahaven.Worlds):
    """The worlds the company adds, by the names its tools reach them under."""

    payments: seahaven.WorldHandle
    chat: seahaven.WorldHandle
    payments_eu: seahaven.WorldHandle
    portal: seahaven.WorldHandle


world = seahaven.World(
    name="company",
    version="1.1.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    description=(
        "A small company's back office: staff and onboarding, invoices collected by card, "
        "expenses and their approval, on top of a payments processor (a usd account and a "
        "European eur account) and a team-chat workspace."
    ),
    mcp_server_name="company",
    mcp_server_instructions=(
        "You work in a company's back office as one member of staff; what you may do depends "
        "on your role (admin, finance, hr or employee), and a tool you may not use answers "
        "FORBIDDEN. Amounts are integers in cents. Invoices are charged to the customer's card "
        "at once: usd through the company's account, eur through the European account. Tools "
        "named pay_... work on the usd payments account, eu_pay_... on the European one, and "
        "chat_... in the team chat, where you post as the back office's own account. Listings "
        "return next_cursor: pass it back, with the same other arguments, for the next page."
    ),
)

world.add_world(
    payments_world.world,
    name="payments",
    tool_prefix="pay_",
    startup={"settlement_days": 0},
)
world.add_world(
    chat_world.world,
    name="chat",
    tool_prefix="chat_",
    tool_allow_list=CHAT_TOOLS,
    startup={"user": CHAT_INTEGRATION_HANDLE},
)
world.add_world(
    payments_world.world,
    name="payments_eu",
    store="eu",
    tool_prefix="eu_pay_",
    tool_block_list=EU_BLOCKED_TOOLS,
    startup={"settlement_days": 2},
)
world.add_world(portal.world, name="portal", tool_prefix="portal_")
