"""The committed generator of every fixture the payments world ships.

One function per fixture fills a live instance, through the world's own tools,
so that every row is one an agent could have made. ``build`` freezes a fixture
from a blank instance on a fixed clock at ``NOW`` with a fixed seed, so a
rebuild writes the same bytes. Run from ``worlds/payments``::

    python fixtures_src/generate.py              # rebuild every fixture
    python fixtures_src/generate.py small_shop   # rebuild one

A rebuild replaces the fixture's directory under ``src/payments_world/fixtures``,
unless the new one differs only in the sidecar's ``created_at``: then the
committed fixture stays as it was.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import payments_world

import seahaven
import seahaven.toolkit

NOW = "2026-06-01T09:00:00.000Z"
"""Where every fixture's clock stands. Chosen once; never move it."""

SEED = 20260601
"""The seed every build draws its ids from."""


# --- empty -----------------------------------------------------------------------------------


def empty(inst: seahaven.Instance) -> None:
    """The schema and no rows."""


# --- small_shop ------------------------------------------------------------------------------

_FIRST_NAMES = (
    "Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines",
    "Jonas", "Keiko", "Lars", "Maya", "Nikolai", "Olga", "Pedro", "Quinn", "Rosa",
    "Samir", "Tove", "Umar", "Vera", "Wendell", "Ximena", "Yusuf", "Zofia", "Amara",
    "Bastien", "Carmen", "Diego", "Emil", "Fatima",
)  # fmt: skip
_LAST_NAMES = (
    "Lovelace", "Costa", "Ferri", "Volkov", "Marin", "Haddad", "Lindqvist", "Tanaka",
    "Duarte", "Becker", "Sato", "Nilsen", "Okafor", "Petrov", "Ivanova", "Alves",
    "Harper", "Delgado", "Nasser", "Berg", "Farouk", "Novak", "Price", "Ruiz",
    "Demir", "Kowalska", "Mensah", "Girard", "Vidal", "Moreno", "Lund", "Rahman",
)  # fmt: skip
# Customers in the eurozone pay in eur; everyone else in usd.
_EURO_CUSTOMERS = frozenset({2, 4, 10, 14, 20, 26, 27, 30})
_PRICES = (1299, 2499, 4999, 899, 15900, 7450, 3200, 12000, 650, 5400, 18999, 2750)
_GOOD_CARDS = ("tok_visa", "tok_mastercard", "tok_amex", "tok_visa_debit")
# The customers whose only card is refused, and how the issuer refuses it.
_REFUSED_CARDS = {
    5: "tok_chargeDeclined",
    11: "tok_chargeDeclinedInsufficientFunds",
    17: "tok_chargeDeclinedExpiredCard",
    23: "tok_processingError",
    29: "tok_chargeDeclined",
}
# Of those, the ones who come back with a card that works.
_RETRIED_WITH_A_GOOD_CARD = frozenset({5, 11, 23})


def _charge_refused(inst: seahaven.Instance, **arguments: object) -> str:
    """Make a charge the card refuses, and return the failed charge's id."""
    try:
        inst.call("create_charge", **arguments)
    except seahaven.ToolError as error:
        assert error.details is not None
        return str(error.details["charge_id"])
    raise AssertionError(f"a charge with {arguments} was expected to be refused")


def small_shop(inst: seahaven.Instance) -> None:
    """A small online shop's first weeks: customers, cards, charges, refunds and payouts."""
    inst.call(
        "add_bank_account",
        currency="usd",
        account_holder_name="Tidewater Supply Co.",
        account_number="000123456789",
        routing_number="110000000",
    )
    inst.call(
        "add_bank_account",
        currency="usd",
        account_holder_name="Tidewater Supply Co. (reserve)",
        account_number="000222222227",
        routing_number="110000000",
    )
    inst.call(
        "add_bank_account",
        currency="eur",
        account_holder_name="Tidewater Supply Co.",
        account_number="DE89370400440532013000",
    )

    customers: list[str] = []
    succeeded: list[str] = []
    authorised: list[str] = []
    for number, (first, last) in enumerate(zip(_FIRST_NAMES, _LAST_NAMES, strict=True)):
        metadata = {"crm_id": f"C-{1000 + number}"} if number % 3 == 0 else None
        customer = inst.call(
            "create_customer",
            email=f"{first.lower()}.{last.lower()}@example.com",
            name=f"{first} {last}",
            metadata=metadata,
        )
        customers.append(customer.id)
        currency = "eur" if number in _EURO_CUSTOMERS else "usd"

        refused = _REFUSED_CARDS.get(number)
        if refused is not None:
            inst.call("attach_payment_method", customer_id=customer.id, token=refused)
            _charge_refused(
                inst,
                customer_id=customer.id,
                amount=_PRICES[number % len(_PRICES)],
                currency=currency,
                description="Order from the web shop",
            )
            if number not in _RETRIED_WITH_A_GOOD_CARD:
                continue
            inst.call(
                "attach_payment_method",
                customer_id=customer.id,
                token=_GOOD_CARDS[number % len(_GOOD_CARDS)],
                set_as_default=True,
            )
        else:
            inst.call(
                "attach_payment_method",
                customer_id=customer.id,
                token=_GOOD_CARDS[number % len(_GOOD_CARDS)],
            )
            if number % 4 == 1:
                # A second card, made the default: the customer's newer card.
                inst.call(
                    "attach_payment_method",
                    customer_id=customer.id,
                    token=_GOOD_CARDS[(number + 1) % len(_GOOD_CARDS)],
                    set_as_default=True,
                )

        orders = 1 + number % 3
        for order in range(orders):
            price = _PRICES[(number * 5 + order * 7) % len(_PRICES)]
            # Every fourth order is authorised at checkout and captured when it ships.
            capture_now = (number + order) % 4 != 0
            charge = inst.call(
                "create_charge",
                customer_id=customer.id,
                amount=price,
                currency=currency,
                capture=capture_now,
                description=f"Order #{4100 + number * 3 + order}",
                metadata={"order_id": str(4100 + number * 3 + order)},
            )
            (succeeded if capture_now else authorised).append(charge.id)

    # Orders that shipped: captured in full, one shipped short (captured in part),
    # two cancelled before shipping (released), and the rest still awaiting capture.
    shipped, shipped_short, cancelled = authorised[:5], authorised[5:7], authorised[7:9]
    for charge_id in shipped:
        succeeded.append(inst.call("capture_charge", charge_id=charge_id).id)
    for charge_id in shipped_short:
        charge = inst.call("get_charge", charge_id=charge_id)
        taken = inst.call("capture_charge", charge_id=charge_id, amount=charge.amount * 3 // 4)
        succeeded.append(taken.id)
    for charge_id in cancelled:
        inst.call("cancel_charge", charge_id=charge_id)

    # Refunds: a few partial (a damaged item, a late delivery), a few in full.
    for position, charge_id in enumerate(succeeded[2:30:6]):
        charge = inst.call("get_charge", charge_id=charge_id)
        inst.call(
            "create_refund",
            charge_id=charge_id,
            amount=max(charge.amount_captured // 4, 1),
            reason="requested_by_customer",
        )
        if position == 0:
            # A small goodwill refund on top, with no reason given.
            inst.call("create_refund", charge_id=charge_id, amount=100)
    full_refund_reasons = ("duplicate", "requested_by_customer", "fraudulent")
    for charge_id, reason in zip(succeeded[33:45:4], full_refund_reasons, strict=True):
        inst.call("create_refund", charge_id=charge_id, reason=reason)

    # A card the customer reported lost, and a customer who closed their account.
    lost = inst.call("list_payment_methods", customer_id=customers[9])
    inst.call("detach_payment_method", payment_method_id=lost.data[0].id)
    inst.call("delete_customer", customer_id=customers[31])

    # Payouts: most of the usd and eur balance, and one usd payout sent by mistake
    # and cancelled.
    balance = inst.call("get_balance")
    inst.call(
        "create_payout",
        amount=balance.available_in("usd") * 3 // 5,
        currency="usd",
        description="Weekly payout",
    )
    inst.call(
        "create_payout",
        amount=balance.available_in("eur") // 2,
        currency="eur",
        description="Weekly payout",
    )
    mistaken = inst.call(
        "create_payout", amount=5000, currency="usd", description="Payout sent twice by mistake"
    )
    inst.call("cancel_payout", payout_id=mistaken.id)


# --- building --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Spec:
    """How one fixture is made: the function that fills it, and its description."""

    fill: Callable[[seahaven.Instance], None]
    description: str
    parent: str | None = None


FIXTURES: dict[str, Spec] = {
    "empty": Spec(
        empty,
        "The schema and no rows: no customers, no bank accounts, a zero balance. Start here for "
        "onboarding and setup scenarios, or to build a history of your own.",
    ),
    "small_shop": Spec(
        small_shop,
        "Tidewater Supply Co., a small web shop selling in usd and eur. 32 customers (one "
        "deleted) with 40 saved cards (two detached: one reported lost, one of the deleted "
        "customer). 62 charges: 40 succeeded (2 of them captured in part), 5 partially and 3 "
        "fully refunded, 7 authorised and awaiting capture, 2 authorisations released, and 5 "
        "refused by the issuer (2 declined, 1 insufficient funds, 1 expired card, 1 processing "
        "error). 9 refunds, 8 of them with a reason. Three bank accounts (a default and a "
        "reserve in usd, one in eur) and three payouts: one usd and one eur pending, arriving "
        "2026-06-03, and one usd payout cancelled. Available balance: 486.85 usd and 434.29 "
        "eur, nothing pending. Good for support scenarios (refund an order, explain a failed "
        "payment, capture or release held orders), ledger and balance questions, and payouts.",
    ),
}


def build(fixture_id: str, *, world: seahaven.World = payments_world.world) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance (or its parent).

    Every build runs on a fixed clock at ``NOW`` with the seed ``SEED``, so it
    writes the same bytes every time. Pass ``world=copy.copy(world)`` pointed
    at another directory to build somewhere else, as the rebuild test does.
    """
    spec = FIXTURES.get(fixture_id)
    if spec is None:
        raise seahaven.WorldBug(
            f"the generator has no fixture {fixture_id!r}; it builds {', '.join(FIXTURES)}"
        )
    if spec.parent is None:
        inst = world.instance(now=NOW, clock_mode="fixed", seed=SEED)
    else:
        inst = world.instance(spec.parent, clock_mode="fixed", seed=SEED)
    with inst:
        spec.fill(inst)
        return inst.freeze(fixture_id, spec.description)


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named), parents first."""
    return seahaven.toolkit.rebuild_fixtures(
        payments_world.world,
        build,
        list(FIXTURES),
        argv,
        into=Path(payments_world.__file__).parent / "fixtures",
        parents={name: spec.parent for name, spec in FIXTURES.items() if spec.parent},
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
