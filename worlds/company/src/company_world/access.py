"""Who the agent acts as, and what each role may do.

The agent always acts as one member of staff, the *principal*, named when the
instance starts (``startup={"principal": "emp_..." or an email}``, see
``company_world.startup``). Without one it acts as the company's first
administrator: the active admin who started earliest, looked up on every call.
A company with nobody on staff yet has no one to act as, and the only thing
that may happen is onboarding its first administrator.

The gate (``company_world.middleware.gate``) checks every call the agent makes
against the two tables below, the company's own tools by name and the added
worlds' tools by the node that owns them, before anything runs. Tools add
finer rules of their own where a role is not the whole answer: nobody decides
on their own expense, and only finance sees everybody's expenses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import seahaven
from company_world.errors import Forbidden
from company_world.types import Role

__all__ = [
    "ADDED_WORLD_ROLES",
    "EVERYONE",
    "FINANCE",
    "FIRST_HIRE_TOOLS",
    "MANAGEMENT",
    "OWN_TOOL_ROLES",
    "PEOPLE",
    "PRINCIPAL_KEY",
    "Actor",
    "acting_staff",
    "allowed_roles",
    "require_actor",
]

PRINCIPAL_KEY = "principal"
"""Where the startup hook leaves the principal's staff id; None means the first administrator."""

EVERYONE: frozenset[Role] = frozenset({"admin", "finance", "hr", "employee"})
FINANCE: frozenset[Role] = frozenset({"admin", "finance"})
PEOPLE: frozenset[Role] = frozenset({"admin", "hr"})
MANAGEMENT: frozenset[Role] = frozenset({"admin", "finance", "hr"})

OWN_TOOL_ROLES: Mapping[str, frozenset[Role]] = MappingProxyType(
    {
        "whoami": EVERYONE,
        "list_staff": EVERYONE,
        "get_staff": EVERYONE,
        "onboard_employee": PEOPLE,
        "offboard_employee": PEOPLE,
        # Anyone may give their own account; naming someone else's needs a manager role.
        "set_reimbursement_account": EVERYONE,
        "invoice_customer": FINANCE,
        "retry_invoice_payment": FINANCE,
        "refund_invoice": FINANCE,
        "list_invoices": FINANCE,
        "get_invoice": FINANCE,
        # Everyone files and reads their own; finance sees and files for everybody.
        "submit_expense": EVERYONE,
        "list_expenses": EVERYONE,
        "get_expense": EVERYONE,
        "approve_expense": FINANCE,
        "reject_expense": FINANCE,
        "get_company_summary": MANAGEMENT,
        "list_portal_cards": FINANCE,
    }
)
"""Which roles may call each of the company's own tools. A tool missing here is a bug."""

ADDED_WORLD_ROLES: Mapping[str, frozenset[Role]] = MappingProxyType(
    {
        # Moving money is finance's job, on either account.
        "payments": FINANCE,
        "payments_eu": FINANCE,
        # Everyone may read and post in chat through the integration.
        "chat": EVERYONE,
        # The customers' own portal: its tools are a customer's to call, not the back
        # office's, and a scenario with a user keeps them from the agent. The company's
        # roles say nothing about a customer, so none refuses them.
        "portal": EVERYONE,
    }
)
"""Which roles may call the tools an added world contributes, by the node that owns them."""

FIRST_HIRE_TOOLS = frozenset({"onboard_employee"})
"""What may run while nobody works at the company yet."""

_STAFF_COLUMNS = "id, full_name, email, role, status, chat_user_id"


@dataclass(frozen=True, slots=True)
class Actor:
    """The member of staff the agent is acting as for this call."""

    id: str
    full_name: str
    email: str
    role: Role
    status: str
    chat_user_id: str

    @property
    def in_finance(self) -> bool:
        """Whether this person may see and move the company's money."""
        return self.role in FINANCE


def _actor(row: dict[str, Any]) -> Actor:
    return Actor(
        id=str(row["id"]),
        full_name=str(row["full_name"]),
        email=str(row["email"]),
        role=row["role"],
        status=str(row["status"]),
        chat_user_id=str(row["chat_user_id"]),
    )


def acting_staff(ctx: seahaven.Ctx[Any]) -> Actor | None:
    """The principal, as the company's records say now; None when there is nobody to act as."""
    pinned = ctx.state.get(PRINCIPAL_KEY)
    if pinned is None:
        row = ctx.db.one(
            f"SELECT {_STAFF_COLUMNS} FROM staff WHERE role = 'admin' AND status = 'active'"
            " ORDER BY start_date, id LIMIT 1"
        )
        return None if row is None else _actor(row)
    row = ctx.db.one(f"SELECT {_STAFF_COLUMNS} FROM staff WHERE id = ?", pinned)
    if row is None:
        # The tools never remove anyone; only SQL from outside the product can.
        raise seahaven.WorldBug(
            f"the principal {pinned} was removed from staff after the instance started; start "
            "a new instance naming someone on staff"
        )
    return _actor(row)


def require_actor(ctx: seahaven.Ctx[Any]) -> Actor:
    """The principal, for a tool that records who did something; FORBIDDEN when there is none."""
    actor = acting_staff(ctx)
    if actor is None:
        raise Forbidden(
            "nobody is acting: the company has no active administrator and no principal was "
            "named when this instance started"
        )
    return actor


def allowed_roles(call: seahaven.Call) -> frozenset[Role]:
    """The roles that may make ``call``: by tool name for the company's own, by node otherwise."""
    if call.node == "main":
        roles = OWN_TOOL_ROLES.get(call.name)
        if roles is None:
            raise seahaven.WorldBug(
                f"the company's tool {call.name!r} has no entry in access.OWN_TOOL_ROLES; say "
                "which roles may call it"
            )
        return roles
    # A deeper node is reached through the world the company added, and answers to it.
    added = call.node.split("/", 1)[0]
    roles = ADDED_WORLD_ROLES.get(added)
    if roles is None:
        raise seahaven.WorldBug(
            f"the tools of node {call.node!r} have no entry in access.ADDED_WORLD_ROLES; say "
            "which roles may call them"
        )
    return roles
