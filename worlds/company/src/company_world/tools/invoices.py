"""Invoices: bill a customer by card, retry a refused card, refund, read and list.

An invoice is collected the moment it is issued, from the card the customer
has on file with the payments account of its currency (usd: the company's own
account; eur: the European entity's), and announced in #billing in chat.
Three stores are written, and nothing makes them one transaction: what the
payments account and chat accepted stays accepted even if a later step fails,
and only the company's own records roll back with the failing call.
"""

from __future__ import annotations

from typing import Annotated, Any

from chat_world.tools.messages import post_message, reply_in_thread
from payments_world.tools.payment_methods import attach_payment_method
from payments_world.tools.refunds import create_refund
from pydantic import Field

import seahaven
from company_world import accounts, audit, channels
from company_world.access import require_actor
from company_world.dates import date_after
from company_world.errors import InvalidState
from company_world.ids import new_id
from company_world.models import Invoice, InvoicePage
from company_world.pagination import keyset_page
from company_world.store import fetch, invoice_model, load_invoice
from company_world.types import (
    Amount,
    Currency,
    Cursor,
    Description,
    Email,
    FullName,
    InvoiceId,
    InvoiceStatus,
    Limit,
    RefundReason,
    Token,
)
from company_world.world import CompanyWorlds, world

__all__ = [
    "get_invoice",
    "invoice_customer",
    "list_invoices",
    "refund_invoice",
    "retry_invoice_payment",
]

DueInDays = Annotated[
    int, Field(ge=0, le=120, description="Days from today until payment is due, 0 to 120.")
]


def _announcement(number: str, row: dict[str, Any]) -> str:
    """What #billing is told when an invoice is issued."""
    who = row["customer_name"] or row["customer_email"]
    total = accounts.money(row["amount"], row["currency"])
    if row["status"] == "paid":
        outcome = f"paid by card ({row['charge_id']})"
    else:
        outcome = (
            f"card payment FAILED ({row['failure_code']}: {row['failure_message']}), "
            f"due {row['due_date']}"
        )
    return f"Invoice {number} to {who} for {total}, {row['description']}: {outcome}."


def _follow_up(ctx: seahaven.Ctx[CompanyWorlds], message_id: str | None, text: str) -> None:
    """Reply in the thread of an invoice's announcement, when it was announced."""
    if message_id is not None:
        ctx.worlds.chat.call(reply_in_thread, message_id=message_id, text=text)


@world.tool
def invoice_customer(
    ctx: seahaven.Ctx[CompanyWorlds],
    customer_email: Email,
    amount: Amount,
    description: Description,
    currency: Currency = "usd",
    customer_name: FullName | None = None,
    card_token: Token | None = None,
    due_in_days: DueInDays = 30,
) -> Invoice:
    """Invoice a customer and collect it from their card at once; announce it in #billing.

    Args:
        customer_email: The customer's email address, such as ada@example.com;
            it is how the customer is found again on the next invoice.
        amount: In cents, at least 50 (the card networks' minimum).
        description: A line for the invoice, saying what it is for.
        currency: usd (the default, collected through the company's payments
            account) or eur (through the European account).
        customer_name: The customer's full name, for a customer new to that
            account.
        card_token: The card from the customer's payment form, such as
            tok_visa: required for a customer new to that account, and saved
            as their default card otherwise.
        due_in_days: Days until the invoice is due, 0 to 120 (default 30).

    A card the issuer refuses does not fail the call: the invoice is filed
    with status payment_failed, the refused charge and the issuer's reason,
    and can be collected later with retry_invoice_payment. Either way the
    invoice is announced in #billing (created if missing).

    Returns the invoice (inv_..., numbered INV-0001 onwards): status paid or
    payment_failed, charge_id, due_date.

    Errors: INVALID_INPUT without card_token for a new customer; INVALID_STATE
    for a known customer with no card on file and no card_token; the payments
    account's own NOT_FOUND for an unknown card token; the chat product's own
    error when #billing refuses the announcement (say, it was archived). A
    charge made before such a late failure stays in the payments account; the
    invoice is not filed.
    """
    actor = require_actor(ctx)
    account = accounts.account_for(ctx, currency)
    chat = ctx.worlds.chat
    billing = channels.ready(chat, channels.BILLING)  # before any money moves
    customer = accounts.customer_for(
        account, email=customer_email.lower(), name=customer_name, card_token=card_token
    )
    invoice_id = new_id(ctx, "inv")
    counted = ctx.db.one("SELECT count(*) AS n FROM invoices")
    number = f"INV-{(counted['n'] if counted is not None else 0) + 1:04d}"
    outcome = accounts.collect(
        account,
        customer_id=customer.id,
        amount=amount,
        currency=currency,
        description=f"Invoice {number}: {description}",
        metadata={"invoice_id": invoice_id, "invoice_number": number},
    )
    now = ctx.clock.iso()
    ctx.db.execute(
        "INSERT INTO invoices (id, number, customer_email, customer_name, payments_customer_id,"
        " amount, currency, description, status, charge_id, failure_code, failure_message,"
        " issued_by, issued_at, due_date, paid_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        invoice_id,
        number,
        customer_email.lower(),
        customer_name,
        customer.id,
        amount,
        currency,
        description,
        "paid" if outcome.paid else "payment_failed",
        outcome.charge_id,
        outcome.failure_code,
        outcome.failure_message,
        actor.id,
        now,
        date_after(ctx, due_in_days),
        now if outcome.paid else None,
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action="invoice.issued",
        subject_id=invoice_id,
        number=number,
        charge_id=outcome.charge_id,
        paid=outcome.paid,
    )
    # Announced last: if chat refuses, the invoice above rolls back with the call,
    # while the charge the payments account made stays made.
    posted = chat.call(
        post_message,
        channel_id=billing.id,
        text=_announcement(number, fetch(ctx, "invoice", invoice_id)),
    )
    ctx.db.execute(
        "UPDATE invoices SET announcement_message_id = ? WHERE id = ?", posted.id, invoice_id
    )
    return load_invoice(ctx, invoice_id)


@world.tool
def retry_invoice_payment(
    ctx: seahaven.Ctx[CompanyWorlds], invoice_id: InvoiceId, card_token: Token | None = None
) -> Invoice:
    """Try again to collect an invoice whose card payment failed, optionally with a new card.

    Arguments: invoice_id, an invoice with status payment_failed; card_token,
    a new card from the customer's payment form, saved as their default card
    first (default: charge the card on file again).

    A refusal again is not an error: the invoice stays payment_failed, with the
    new charge and reason. The outcome is replied in the thread of the
    invoice's announcement in #billing.

    Returns the invoice: paid, or payment_failed with the latest charge_id.

    Errors: NOT_FOUND for an unknown invoice; INVALID_STATE when it is not
    payment_failed; the payments account's own NOT_FOUND for an unknown card
    token.
    """
    actor = require_actor(ctx)
    row = fetch(ctx, "invoice", invoice_id)
    if row["status"] != "payment_failed":
        raise InvalidState(
            f"invoice {row['number']} is {row['status']}; only a payment_failed invoice is retried",
            invoice_id=invoice_id,
            status=row["status"],
        )
    account = accounts.account_for(ctx, row["currency"])
    if card_token is not None:
        account.call(
            attach_payment_method,
            customer_id=row["payments_customer_id"],
            token=card_token,
            set_as_default=True,
        )
    outcome = accounts.collect(
        account,
        customer_id=row["payments_customer_id"],
        amount=row["amount"],
        currency=row["currency"],
        description=f"Invoice {row['number']}: {row['description']}",
        metadata={"invoice_id": invoice_id, "invoice_number": row["number"]},
    )
    ctx.db.execute(
        "UPDATE invoices SET status = ?, charge_id = ?, failure_code = ?, failure_message = ?,"
        " paid_at = ? WHERE id = ?",
        "paid" if outcome.paid else "payment_failed",
        outcome.charge_id,
        outcome.failure_code,
        outcome.failure_message,
        ctx.clock.iso() if outcome.paid else None,
        invoice_id,
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action="invoice.payment_retried",
        subject_id=invoice_id,
        charge_id=outcome.charge_id,
        paid=outcome.paid,
    )
    _follow_up(
        ctx,
        row["announcement_message_id"],
        f"Retried {row['number']}: paid by card ({outcome.charge_id})."
        if outcome.paid
        else f"Retried {row['number']}: the card was refused again ({outcome.failure_code}).",
    )
    return load_invoice(ctx, invoice_id)


@world.tool
def refund_invoice(
    ctx: seahaven.Ctx[CompanyWorlds], invoice_id: InvoiceId, reason: RefundReason | None = None
) -> Invoice:
    """Refund a paid invoice in full, to the card it was collected from.

    The refund is made by the payments account of the invoice's currency, and
    replied in the thread of the invoice's announcement in #billing.

    Args:
        invoice_id: An invoice with status paid, such as inv_3f9a0c1b2d4e5f60.
        reason: Why the money goes back: duplicate, fraudulent or
            requested_by_customer.

    Returns the invoice, now refunded, with refund_id.

    Errors: NOT_FOUND for an unknown invoice; INVALID_STATE when it is not
    paid; the payments account's own INVALID_STATE when its charge was
    already refunded there directly.
    """
    actor = require_actor(ctx)
    row = fetch(ctx, "invoice", invoice_id)
    if row["status"] != "paid":
        raise InvalidState(
            f"invoice {row['number']} is {row['status']}; only a paid invoice can be refunded",
            invoice_id=invoice_id,
            status=row["status"],
        )
    refund = accounts.account_for(ctx, row["currency"]).call(
        create_refund, charge_id=row["charge_id"], reason=reason
    )
    ctx.db.execute(
        "UPDATE invoices SET status = 'refunded', refund_id = ?, refunded_at = ? WHERE id = ?",
        refund.id,
        ctx.clock.iso(),
        invoice_id,
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action="invoice.refunded",
        subject_id=invoice_id,
        refund_id=refund.id,
        reason=reason,
    )
    _follow_up(
        ctx,
        row["announcement_message_id"],
        f"Refunded {row['number']} in full ({accounts.money(refund.amount, row['currency'])}).",
    )
    return load_invoice(ctx, invoice_id)


@world.tool
def list_invoices(
    ctx: seahaven.Ctx[CompanyWorlds],
    status: InvoiceStatus | None = None,
    currency: Currency | None = None,
    customer_email: Email | None = None,
    limit: Limit = 20,
    cursor: Cursor | None = None,
) -> InvoicePage:
    """List invoices, newest first (ties broken by id, descending).

    Args:
        status: Only invoices in this status: paid, payment_failed or refunded.
        currency: Only invoices in this currency: usd or eur.
        customer_email: Only this customer's invoices, by email address.
        limit: How many invoices to return in this page, 1 to 100 (default 20).
        cursor: The next_cursor of the previous page. Leave it out for the first
            page, and pass the other arguments unchanged.

    Returns a page: invoices, and next_cursor (null on the last page).

    Errors: INVALID_INPUT for a cursor from another listing.
    """
    where: list[str] = []
    params: list[Any] = []
    email = customer_email.lower() if customer_email is not None else None
    for column, value in (("status", status), ("currency", currency), ("customer_email", email)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows, next_cursor = keyset_page(
        ctx,
        scope=("list_invoices", status, currency, email),
        table="invoices",
        where=where,
        params=params,
        order_by="issued_at",
        descending=True,
        limit=limit,
        cursor=cursor,
    )
    return InvoicePage(invoices=[invoice_model(row) for row in rows], next_cursor=next_cursor)


@world.tool
def get_invoice(ctx: seahaven.Ctx[CompanyWorlds], invoice_id: InvoiceId) -> Invoice:
    """Fetch one invoice by id.

    Errors: NOT_FOUND when no invoice has that id.
    """
    return load_invoice(ctx, invoice_id)
