"""The committed generator of every fixture the company world ships.

One function per fixture fills a blank instance through the tools of all
three worlds: the company's own (onboarding, invoicing, expenses), the usd
payments account's (``pay_...``) and the chat integration's (``chat_...``),
called by their surface names exactly as an agent would call them. ``build``
freezes the result from a blank instance on a fixed clock at ``NOW`` with the
seed ``SEED``, so a rebuild writes the same state files byte for byte; only
the sidecar's ``created_at``, the wall-clock moment of freezing, would differ,
and a rebuild in place keeps the committed fixture whole when nothing else
does. Every store of the composite is built in that one instance, on that one
clock; the added worlds' own fixtures are never used. Run from
``worlds/company``::

    python fixtures_src/generate.py          # rebuild every fixture
    python fixtures_src/generate.py acme     # rebuild one

A back office is worked by several people, so the script plays several: it
changes the acting principal between steps the way an instance's startup hook
sets it (``act_as``), and the gate then holds each step to that person's role.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import company_world
from company_world.access import PRINCIPAL_KEY

import seahaven
import seahaven.toolkit

NOW = "2026-06-01T09:00:00.000Z"
"""Where every fixture's clock stands. Chosen once; never move it."""

SEED = 20260601
"""The seed every build draws its ids from."""


def act_as(inst: seahaven.Instance, staff_id: str | None) -> None:
    """From now on, act as ``staff_id`` (None: the company's first administrator)."""
    with inst.bulk() as ctx:
        ctx.state[PRINCIPAL_KEY] = staff_id


# --- empty -------------------------------------------------------------------------------------


def empty(inst: seahaven.Instance) -> None:
    """Nothing but what every instance starts with: the back office's own chat account."""


# --- acme --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hire:
    """One person the script onboards."""

    handle: str
    full_name: str
    title: str
    role: str
    department: str
    start_date: str
    manager: str | None
    timezone: str = "UTC"
    # None: they never gave a bank account for reimbursements.
    account_number: str | None = None
    # Chat channels they ask to join beyond #company and their department's.
    channels: tuple[str, ...] = ()


FOUNDER = Hire(
    "dana", "Dana Whitfield", "CEO & Founder", "admin", "executive", "2023-02-01", None,
    "America/New_York", "000111222333",
)  # fmt: skip
# Hired by the founder, before the company had anyone in people operations.
FIRST_TEAM = (
    Hire("marcus", "Marcus Lee", "CTO", "admin", "executive", "2023-04-03", "dana",
         "America/Los_Angeles", "000222333444"),
    Hire("carla", "Carla Mendes", "Head of Finance", "finance", "finance", "2023-09-04", "dana",
         "Europe/Lisbon", "000333444555"),
    Hire("priya", "Priya Natarajan", "People Partner", "hr", "people", "2024-01-15", "dana",
         "Asia/Kolkata", "000444555666"),
)  # fmt: skip
# Hired by people operations.
LATER_TEAM = (
    Hire("sam", "Sam Whitaker", "Backend Engineer", "employee", "engineering", "2023-06-12",
         "marcus", "America/Chicago", "000555666777"),
    Hire("lena", "Lena Fischer", "Engineering Manager", "employee", "engineering", "2023-11-06",
         "marcus", "Europe/Berlin", "000666777888"),
    Hire("nina", "Nina Kowalski", "Support Engineer", "employee", "support", "2024-02-05",
         "dana", "Europe/Warsaw", "000777888999"),
    Hire("rafael", "Rafael Ortiz", "Account Executive", "employee", "sales", "2024-03-11",
         "dana", "America/Sao_Paulo", "000888999000", channels=("support",)),
    Hire("tom", "Tom Becker", "Accountant", "finance", "finance", "2024-05-06", "carla",
         "Europe/Berlin", "000999000111"),
    Hire("jonas", "Jonas Berg", "Site Reliability Engineer", "employee", "engineering",
         "2024-08-19", "lena", "Europe/Stockholm", "001000111222"),
    Hire("aiko", "Aiko Tanaka", "Support Engineer", "employee", "support", "2025-01-06",
         "dana", "Asia/Tokyo"),
)  # fmt: skip
# Starts today, onboarded this morning.
NEW_HIRE = Hire(
    "omar", "Omar Haddad", "Robotics Engineer", "employee", "engineering", NOW[:10], "lena",
    "Europe/Paris",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bill:
    """One invoice the script issues, and what happens to it afterwards."""

    email: str
    name: str | None
    amount: int
    description: str
    currency: str = "usd"
    # The card the customer gives; None for a customer whose card is on file already.
    token: str | None = None
    # A card the customer gives after their first one was refused.
    retried_with: str | None = None
    refund_reason: str | None = None


BILLS_BY_CARLA = (
    Bill("ap@globex.test", "Globex Corporation", 480_000, "Fleet maintenance, May",
         token="tok_visa"),
    Bill("billing@initech.test", "Initech", 1_250_000, "Pilot deployment, two sites",
         token="tok_mastercard"),
    Bill("payables@umbrella.test", "Umbrella Labs", 96_000, "Sensor calibration",
         token="tok_chargeDeclinedInsufficientFunds"),
    Bill("finance@stark.test", "Stark Logistics", 310_000, "Warehouse survey",
         token="tok_amex", refund_reason="requested_by_customer"),
    Bill("buchhaltung@hansa.test", "Hansa Maschinenbau GmbH", 720_000,
         "Inspection robots, Hamburg plant", currency="eur", token="tok_visa"),
    Bill("compta@lumiere.test", "Société Lumière", 185_000, "Remote monitoring, Q2",
         currency="eur", token="tok_mastercard"),
)  # fmt: skip
BILLS_BY_TOM = (
    Bill("ap@waynefreight.test", "Wayne Freight", 215_000, "Dock automation study",
         token="tok_chargeDeclined", retried_with="tok_visa"),
    Bill("ap@globex.test", "Globex Corporation", 480_000, "Fleet maintenance, June"),
    Bill("ap@hooli.test", "Hooli", 64_000, "Training workshop",
         token="tok_chargeDeclinedExpiredCard"),
    Bill("faktura@nordlicht.test", "Nordlicht AB", 142_000, "Site assessment, Malmö",
         currency="eur", token="tok_processingError"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Claim:
    """One expense: who spent it, and who decided on it (None: still waiting)."""

    spender: str
    amount: int
    category: str
    description: str
    incurred_on: str
    decided_by: str | None = None
    rejection: str | None = None
    note: str | None = None


CLAIMS = (
    Claim("sam", 38_450, "travel", "Flight to Chicago for the Initech pilot", "2026-05-12",
          decided_by="carla", note="Pilot travel, pre-approved by Marcus"),
    Claim("sam", 6_480, "meals", "Dinner with the Initech site team", "2026-05-13",
          decided_by="tom"),
    Claim("jonas", 129_900, "equipment", "Standing desk", "2026-05-20", decided_by="carla",
          rejection="Desks are bought through the office budget; ask Priya to order one"),
    Claim("lena", 3_400, "office", "Whiteboard markers for the lab", "2026-05-22",
          decided_by="tom"),
    Claim("nina", 12_000, "travel", "Train to the Umbrella Labs on-site visit", "2026-05-04",
          decided_by="tom"),
    Claim("rafael", 52_000, "travel", "Train and hotel for the Hansa visit in Hamburg",
          "2026-05-26"),
    Claim("rafael", 9_800, "meals", "Lunch with the Hansa buyers", "2026-05-27"),
    Claim("aiko", 1_900, "software", "Screen recorder licence for support videos",
          "2026-05-28"),
    Claim("carla", 45_000, "training", "Registration for the SaaS finance conference",
          "2026-05-29"),
)  # fmt: skip


def _onboard(inst: seahaven.Instance, hire: Hire, staff: dict[str, str]) -> None:
    person = inst.call(
        "onboard_employee",
        full_name=hire.full_name,
        email=f"{hire.handle}@acme-robotics.test",
        title=hire.title,
        role=hire.role,
        department=hire.department,
        chat_handle=hire.handle,
        manager_id=staff[hire.manager] if hire.manager is not None else None,
        start_date=hire.start_date,
        timezone=hire.timezone,
        channels_to_join=list(hire.channels) or None,
    )
    staff[hire.handle] = person.id


def _bill(inst: seahaven.Instance, bill: Bill) -> None:
    invoice = inst.call(
        "invoice_customer",
        customer_email=bill.email,
        customer_name=bill.name,
        amount=bill.amount,
        description=bill.description,
        currency=bill.currency,
        card_token=bill.token,
    )
    if bill.retried_with is not None:
        inst.call("retry_invoice_payment", invoice_id=invoice.id, card_token=bill.retried_with)
    if bill.refund_reason is not None:
        inst.call("refund_invoice", invoice_id=invoice.id, reason=bill.refund_reason)


def acme(inst: seahaven.Instance) -> None:
    """Acme Robotics: twelve people, a usd and a eur book of invoices, a month of expenses."""
    staff: dict[str, str] = {}
    # The founder is the company's first hire, onboarded when nobody worked there;
    # from then on the instance acts as its first administrator, the founder.
    _onboard(inst, FOUNDER, staff)
    inst.call(
        "pay_add_bank_account",
        currency="usd",
        account_holder_name="Acme Robotics, Inc.",
        account_number="004100220033",
        routing_number="110000000",
    )
    for hire in FIRST_TEAM:
        _onboard(inst, hire, staff)

    act_as(inst, staff["priya"])
    for hire in LATER_TEAM:
        _onboard(inst, hire, staff)
    for hire in (FOUNDER, *FIRST_TEAM, *LATER_TEAM):
        if hire.account_number is not None:
            inst.call(
                "set_reimbursement_account",
                account_number=hire.account_number,
                routing_number="110000000",
                staff_id=staff[hire.handle],
            )

    act_as(inst, staff["carla"])
    for bill in BILLS_BY_CARLA:
        _bill(inst, bill)
    act_as(inst, staff["tom"])
    for bill in BILLS_BY_TOM:
        _bill(inst, bill)

    expenses: list[tuple[Claim, str]] = []
    for claim in CLAIMS:
        act_as(inst, staff[claim.spender])
        filed = inst.call(
            "submit_expense",
            amount=claim.amount,
            category=claim.category,
            description=claim.description,
            incurred_on=claim.incurred_on,
        )
        expenses.append((claim, filed.id))
    for claim, expense_id in expenses:
        if claim.decided_by is None:
            continue
        act_as(inst, staff[claim.decided_by])
        if claim.rejection is not None:
            inst.call("reject_expense", expense_id=expense_id, reason=claim.rejection)
        else:
            inst.call("approve_expense", expense_id=expense_id, note=claim.note)

    act_as(inst, staff["carla"])
    finance = inst.call("chat_lookup_channel_by_name", name="#finance")
    reminder = inst.call(
        "chat_post_message",
        channel_id=finance.id,
        text="Reminder: May expenses are due by Friday. File them in the back office with a "
        "receipt; reimbursements go out the day they are approved.",
    )
    inst.call(
        "chat_reply_in_thread",
        message_id=reminder.id,
        text="Two claims are still waiting for a decision from someone other than their owner.",
    )

    act_as(inst, staff["priya"])
    inst.call("offboard_employee", staff_id=staff["nina"], note="Moved to a partner company")
    _onboard(inst, NEW_HIRE, staff)


# --- building ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Spec:
    """How one fixture is made: the function that fills it, and its description."""

    fill: Callable[[seahaven.Instance], None]
    description: str


FIXTURES: dict[str, Spec] = {
    "empty": Spec(
        empty,
        "A company on the day it installs its back office: nobody on staff, no invoices or "
        "expenses, both payments accounts empty, and a chat workspace holding only the back "
        "office's own account, @backoffice, its owner, and a customer portal holding no card. "
        "Nobody can act until the company's first administrator is onboarded (role admin, no "
        "manager). Start here for setup scenarios.",
    ),
    "acme": Spec(
        acme,
        "Acme Robotics, Inc., a small robotics services company, on 2026-06-01. Staff: 11 "
        "active (admins Dana Whitfield, the founder and the default principal, and Marcus Lee; "
        "finance Carla Mendes and Tom Becker; hr Priya Natarajan; six employees, among them Omar "
        "Haddad, who starts today) and Nina Kowalski, offboarded today. Aiko Tanaka and Omar "
        "have no reimbursement account on file. Invoices INV-0001 to INV-0010: 7 in usd through "
        "the company's account and 3 in eur through the European account; 6 paid (Wayne Freight "
        "only after a retry with a new card), 1 refunded (Stark Logistics), 3 payment_failed "
        "(Umbrella Labs, insufficient funds; Hooli, expired card; Nordlicht AB, eur, processing "
        "error). Expenses: 4 reimbursed by payouts arriving 2026-06-03, 1 rejected, 4 waiting "
        "(two of Rafael Ortiz's, Aiko's, and Carla's own, which someone else must decide). "
        "Chat: #company, #leadership (private), #engineering, #finance, #billing, #people, "
        "#sales and #support, every invoice announced in #billing. Balances: 22,852.05 usd "
        "available; 8,787.05 eur pending (the European account settles in two days). The customer "
        "portal holds no card yet: customers add theirs when asked. Good for approving and "
        "rejecting expenses, chasing failed invoices, refunds, onboarding and offboarding, "
        "role-gated access, conversations with customers and staff, and questions that join "
        "the stores.",
    ),
}


def build(fixture_id: str, *, world: seahaven.World = company_world.world) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance.

    Every build runs on a fixed clock at ``NOW`` with the seed ``SEED``, so it
    writes the same state files every time. Pass ``world=copy.copy(world)``
    pointed at another directory to build somewhere else, as the rebuild test does.
    """
    spec = FIXTURES.get(fixture_id)
    if spec is None:
        raise seahaven.WorldBug(
            f"the generator has no fixture {fixture_id!r}; it builds {', '.join(FIXTURES)}"
        )
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        spec.fill(inst)
        return inst.freeze(fixture_id, spec.description)


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named)."""
    return seahaven.toolkit.rebuild_fixtures(
        company_world.world,
        build,
        list(FIXTURES),
        argv,
        into=Path(company_world.__file__).parent / "fixtures",
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
