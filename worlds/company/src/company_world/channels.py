"""The chat channels the back office keeps, and getting them ready to post in.

The back office acts in chat as its own account, ``@backoffice``. It posts in
channels it is a member of, so before it writes anywhere it makes sure it is
in: a public channel it is not in yet is joined, and one of its own channels
that does not exist yet is created. Everything goes through the chat world's
own tools, by function, and commits in the chat store when each returns.
"""

from __future__ import annotations

from chat_world.errors import NotFound as ChatNotFound
from chat_world.models import Channel
from chat_world.tools.channels import create_channel, join_channel, lookup_channel_by_name

import seahaven
from company_world.types import Department

__all__ = ["BILLING", "COMPANY", "DEPARTMENT_CHANNELS", "ChannelSpec", "find", "ready"]

ChannelSpec = tuple[str, bool, str]
"""A channel the back office keeps: its name, whether it is private, and its purpose."""

COMPANY: ChannelSpec = (
    "company",
    False,
    "Company-wide announcements. Every employee is added when they are onboarded.",
)
BILLING: ChannelSpec = (
    "billing",
    False,
    "Invoices and payments: the back office announces every invoice here.",
)
DEPARTMENT_CHANNELS: dict[Department, tuple[ChannelSpec, ...]] = {
    "executive": (("leadership", True, "The leadership team."),),
    "engineering": (("engineering", False, "Engineering: builds, reviews and releases."),),
    "finance": (("finance", False, "Finance: books, budgets and reimbursements."), BILLING),
    "people": (("people", False, "People operations: hiring, onboarding and benefits."),),
    "sales": (("sales", False, "Sales: deals, customers and renewals."),),
    "support": (("support", False, "Customer support."),),
}
"""Each department's channels; a new hire is added to their department's."""


def find(chat: seahaven.WorldHandle, name: str) -> Channel:
    """An existing channel the back office can see, by name (with or without the #)."""
    return chat.call(lookup_channel_by_name, name=name)


def ready(chat: seahaven.WorldHandle, spec: ChannelSpec) -> Channel:
    """One of the back office's channels, created if missing, with the back office a member."""
    name, private, purpose = spec
    try:
        channel = chat.call(lookup_channel_by_name, name=name)
    except ChatNotFound:
        return chat.call(create_channel, name=name, is_private=private, purpose=purpose)
    if not channel.is_member:
        channel = chat.call(join_channel, channel_id=channel.id)
    return channel
