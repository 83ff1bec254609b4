"""The one flat tool list the agent sees: the company's own tools, then each added world's."""

from __future__ import annotations

import re

import chat_world
import payments_world
import pytest
from company_world import portal
from company_world.world import CHAT_TOOLS, EU_BLOCKED_TOOLS

import seahaven

pytestmark = pytest.mark.seahaven(fixture="acme")

OWN = [
    "whoami",
    "list_staff",
    "get_staff",
    "onboard_employee",
    "offboard_employee",
    "set_reimbursement_account",
    "invoice_customer",
    "retry_invoice_payment",
    "refund_invoice",
    "list_invoices",
    "get_invoice",
    "submit_expense",
    "list_expenses",
    "get_expense",
    "approve_expense",
    "reject_expense",
    "get_company_summary",
    "list_portal_cards",
]
PAYMENTS = [
    "create_customer",
    "get_customer",
    "update_customer",
    "list_customers",
    "delete_customer",
    "attach_payment_method",
    "get_payment_method",
    "list_payment_methods",
    "detach_payment_method",
    "create_charge",
    "capture_charge",
    "cancel_charge",
    "get_charge",
    "list_charges",
    "create_refund",
    "get_refund",
    "list_refunds",
    "get_balance",
    "get_balance_transaction",
    "list_balance_transactions",
    "add_bank_account",
    "list_bank_accounts",
    "create_payout",
    "cancel_payout",
    "get_payout",
    "list_payouts",
]
# In the chat world's own order, which the allow list cannot change.
CHAT = [
    "lookup_user_by_handle",
    "list_channels",
    "lookup_channel_by_name",
    "post_message",
    "reply_in_thread",
    "list_messages",
    "get_thread",
    "search_messages",
]
EUROPE = [name for name in PAYMENTS if name not in EU_BLOCKED_TOOLS]
# The customer portal's: a customer's own tools (a scenario with a user keeps them from the agent).
PORTAL = ["add_card", "list_cards"]


def test_the_surface_is_own_tools_then_payments_chat_the_european_account_and_the_portal(
    instance: seahaven.Instance,
) -> None:
    assert [tool["name"] for tool in instance.tools()] == [
        *OWN,
        *(f"pay_{name}" for name in PAYMENTS),
        *(f"chat_{name}" for name in CHAT),
        *(f"eu_pay_{name}" for name in EUROPE),
        *(f"portal_{name}" for name in PORTAL),
    ]
    # The test's lists are the worlds' own: nothing was left out or renamed on the way.
    assert list(payments_world.world.tools) == PAYMENTS
    assert list(portal.world.tools) == PORTAL
    assert sorted(CHAT) == sorted(CHAT_TOOLS)
    assert len(EUROPE) == len(PAYMENTS) - 7


def test_a_contributed_listing_is_the_added_worlds_own_under_a_new_name(
    instance: seahaven.Instance,
) -> None:
    listed = {tool["name"]: tool for tool in instance.tools()}
    for prefix, world, names in (
        ("pay_", payments_world.world, PAYMENTS),
        ("chat_", chat_world.world, CHAT),
        ("eu_pay_", payments_world.world, EUROPE),
        ("portal_", portal.world, PORTAL),
    ):
        for name in names:
            own = world.tools[name].listing()
            shown = listed[prefix + name]
            assert shown["description"] == own["description"]
            assert shown["input_schema"] == own["input_schema"]


@pytest.mark.parametrize(
    "hidden",
    [
        "chat_create_user",
        "chat_deactivate_user",
        "chat_create_channel",
        "chat_invite_to_channel",
        "chat_delete_message",
        "eu_pay_create_payout",
        "eu_pay_add_bank_account",
        "eu_pay_delete_customer",
        "create_charge",
        "post_message",
    ],
)
def test_what_the_lists_keep_off_the_surface_cannot_be_called(
    instance: seahaven.Instance, hidden: str
) -> None:
    with pytest.raises(seahaven.UnknownTool):
        instance.call(hidden)


def test_no_company_description_points_at_a_name_the_agent_cannot_call(
    instance: seahaven.Instance,
) -> None:
    names = {tool["name"] for tool in instance.tools()}
    # Every name a prefix could make of the added worlds' tools, shown or not.
    possible = {
        prefix + name
        for prefix, world in (
            ("pay_", payments_world.world),
            ("eu_pay_", payments_world.world),
            ("chat_", chat_world.world),
        )
        for name in world.tools
    }
    mentioned = set()
    for tool in instance.tools()[: len(OWN)]:
        for word in re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", tool["description"]):
            if word in OWN or word in possible:
                mentioned.add(word)
    # The descriptions do send the agent from one tool to another, and only to real names.
    assert {"retry_invoice_payment", "set_reimbursement_account"} <= mentioned
    assert mentioned <= names


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get_staff", {"staff_id": "emp_0000000000000000"}),
        ("offboard_employee", {"staff_id": "emp_0000000000000000"}),
        (
            "set_reimbursement_account",
            {"account_number": "1234", "staff_id": "emp_0000000000000000"},
        ),
        (
            "onboard_employee",
            {
                "full_name": "X Y",
                "email": "x@y.test",
                "title": "T",
                "role": "hr",
                "department": "people",
                "chat_handle": "xy",
                "manager_id": "emp_0000000000000000",
            },
        ),
        ("retry_invoice_payment", {"invoice_id": "inv_0000000000000000"}),
        ("refund_invoice", {"invoice_id": "inv_0000000000000000"}),
        ("get_invoice", {"invoice_id": "inv_0000000000000000"}),
        (
            "submit_expense",
            {
                "amount": 100,
                "category": "other",
                "description": "x",
                "incurred_on": "2026-05-01",
                "staff_id": "emp_0000000000000000",
            },
        ),
        ("get_expense", {"expense_id": "exp_0000000000000000"}),
        ("approve_expense", {"expense_id": "exp_0000000000000000"}),
        ("reject_expense", {"expense_id": "exp_0000000000000000", "reason": "No"}),
    ],
)
def test_every_tool_taking_an_id_answers_not_found_for_one_never_issued(
    instance: seahaven.Instance, tool: str, arguments: dict[str, object]
) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call(tool, **arguments)
    assert raised.value.code == "NOT_FOUND"
    assert raised.value.details is not None and raised.value.details["id"].endswith("0" * 16)
