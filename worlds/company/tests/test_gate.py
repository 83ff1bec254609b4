"""The gate and the error handler: roles decide every call, and errors reach the agent as chosen.

The handler's failure paths are reached with a copy of the world carrying a
few tools that fail on purpose; the copy shares the real middleware, and the
imported world is left untouched.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import chat_world.errors
import payments_world.errors
import pytest
from company_support import as_, count, refused, snapshot, staff_id
from company_world import access
from company_world.errors import InvalidState

import seahaven

# What each role is refused, and one call of each kind that the role may make.
REFUSED: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "employee": [
        ("list_invoices", {}),
        ("get_company_summary", {}),
        ("onboard_employee", {}),
        ("approve_expense", {"expense_id": "exp_0000000000000000"}),
        ("pay_get_balance", {}),
        ("pay_create_payout", {"amount": 100, "currency": "usd"}),
        ("eu_pay_list_charges", {}),
    ],
    "hr": [
        ("invoice_customer", {}),
        ("reject_expense", {}),
        ("pay_list_customers", {}),
        ("eu_pay_get_balance", {}),
    ],
    "finance": [
        ("onboard_employee", {}),
        ("offboard_employee", {"staff_id": "emp_0000000000000000"}),
    ],
}
ALLOWED: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "employee": [
        ("whoami", {}),
        ("list_staff", {}),
        ("list_expenses", {}),
        ("chat_list_channels", {}),
        ("chat_search_messages", {"query": "invoice"}),
    ],
    "hr": [("get_company_summary", {}), ("list_staff", {"department": "people"})],
    "finance": [
        ("list_invoices", {}),
        ("pay_get_balance", {}),
        ("eu_pay_get_balance", {}),
        ("chat_list_channels", {}),
    ],
}
PERSON = {"employee": "sam", "hr": "priya", "finance": "tom"}


@pytest.mark.parametrize(
    ("role", "tool", "arguments"),
    [(role, tool, arguments) for role, calls in REFUSED.items() for tool, arguments in calls],
)
def test_a_role_is_refused_what_it_may_not_do_on_own_and_contributed_tools(
    world: seahaven.World, role: str, tool: str, arguments: dict[str, Any]
) -> None:
    with world.instance("acme", startup=as_(PERSON[role])) as inst:
        before = snapshot(inst)
        error = refused(inst, "FORBIDDEN", tool, **arguments)
        assert error.details is not None
        assert error.details["tool"] == tool
        assert error.details["role"] == role
        assert role not in error.details["allowed_roles"]
        assert snapshot(inst) == before
        # The refusal is the company's, raised before the owning world's chain ran.
        assert type(error).__module__ == "company_world.errors"


@pytest.mark.parametrize(
    ("role", "tool", "arguments"),
    [(role, tool, arguments) for role, calls in ALLOWED.items() for tool, arguments in calls],
)
def test_a_role_may_do_what_its_policy_allows(
    world: seahaven.World, role: str, tool: str, arguments: dict[str, Any]
) -> None:
    with world.instance("acme", startup=as_(PERSON[role])) as inst:
        assert inst.call(tool, **arguments) is not None


@pytest.mark.seahaven(fixture="acme", startup=as_("sam"))
def test_the_gate_answers_before_the_arguments_are_even_read(
    instance: seahaven.Instance,
) -> None:
    refused(instance, "FORBIDDEN", "invoice_customer", amount="lots")


@pytest.mark.seahaven(fixture="acme", startup=as_("aiko"))
def test_host_code_reaches_what_the_principal_may_not_call_directly(
    instance: seahaven.Instance,
) -> None:
    # Aiko may not touch the payments account, but giving her own bank account
    # makes the company's tool register it there: the gate guards the agent's
    # calls, not the calls the company's tools make on her behalf.
    refused(
        instance,
        "FORBIDDEN",
        "pay_add_bank_account",
        currency="usd",
        account_holder_name="Aiko",
        account_number="12345678",
    )
    me = instance.call("set_reimbursement_account", account_number="00998877")
    assert me.reimbursement_bank_account_id is not None
    account = instance.inspect().one(
        "SELECT account_holder_name, last4, default_for_currency FROM payments.bank_accounts"
        " WHERE id = ?",
        me.reimbursement_bank_account_id,
    )
    assert account == {
        "account_holder_name": "Aiko Tanaka",
        "last4": "8877",
        "default_for_currency": 0,
    }


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_added_worlds_product_errors_reach_the_agent_unchanged(
    instance: seahaven.Instance,
) -> None:
    missing = refused(instance, "NOT_FOUND", "pay_get_charge", charge_id="ch_nothing")
    assert isinstance(missing, payments_world.errors.NotFound)
    europe = refused(instance, "NOT_FOUND", "eu_pay_get_charge", charge_id="ch_nothing")
    assert isinstance(europe, payments_world.errors.NotFound)
    channel = refused(instance, "NOT_FOUND", "chat_lookup_channel_by_name", name="nowhere")
    assert isinstance(channel, chat_world.errors.NotFound)
    # An argument error on a contributed tool is shaped by the owning world's handler.
    shaped = refused(instance, "INVALID_INPUT", "pay_create_payout", amount=-5, currency="usd")
    assert isinstance(shaped, payments_world.errors.InvalidInput)


@pytest.mark.seahaven(fixture="acme")
def test_bad_arguments_to_own_tools_are_invalid_input_listing_every_violation(
    instance: seahaven.Instance,
) -> None:
    error = refused(
        instance,
        "INVALID_INPUT",
        "invoice_customer",
        customer_email="not an email",
        amount=10,
        description="x",
        currency="gbp",
    )
    assert error.details is not None
    fields = sorted(item["field"] for item in error.details["violations"])
    assert fields == ["amount", "currency", "customer_email"]
    assert type(error).__module__ == "company_world.errors"


@pytest.mark.seahaven(fixture="acme")
def test_an_argument_error_is_invalid_args_to_a_harness_in_every_store(
    instance: seahaven.Instance,
) -> None:
    # Each world's handler restates it in its own words; the category stays the call's.
    own = refused(instance, "INVALID_INPUT", "invoice_customer", customer_email=1, amount="10")
    contributed = refused(instance, "INVALID_INPUT", "pay_get_charge", charge_id=5)
    chat = refused(instance, "INVALID_INPUT", "chat_lookup_channel_by_name", name=["x"])
    nested: list[object] = []
    for _ in range(800):
        nested = [nested]
    deep = refused(instance, "INVALID_INPUT", "invoice_customer", customer_email=nested)
    for error in (own, contributed, chat, deep):
        assert error.error_type == "invalid_args", error.to_dict()
    missing = refused(instance, "NOT_FOUND", "pay_get_charge", charge_id="ch_nothing")
    assert missing.error_type == "execution_error"
    assert instance.state()["call_count"] == 5


# --- the error handler's other paths, on a rigged copy -----------------------------------------


@pytest.fixture
def rigged(world: seahaven.World, monkeypatch: pytest.MonkeyPatch) -> Iterator[seahaven.Instance]:
    """An instance of a copy of the world with four tools that fail in four ways."""
    clone = copy.copy(world)

    @clone.tool
    def refused_by_sqlite(ctx: seahaven.Ctx) -> None:
        """Write a member of staff with no name, which the schema refuses."""
        ctx.db.execute("INSERT INTO staff (id) VALUES ('emp_x')")

    @clone.tool
    def crashes(ctx: seahaven.Ctx) -> None:
        """Fail with a plain Python exception, as a bug would."""
        raise KeyError("boom")

    @clone.tool
    def misused(ctx: seahaven.Ctx) -> None:
        """Fail with the author's own mistake."""
        raise seahaven.WorldBug("a bug the author must see")

    @clone.tool
    def declines(ctx: seahaven.Ctx) -> None:
        """Fail with one of the back office's own errors."""
        raise InvalidState("not now", reason="testing")

    @clone.tool
    def unlisted(ctx: seahaven.Ctx) -> None:
        """A tool nobody wrote a policy for."""

    policy = dict(access.OWN_TOOL_ROLES)
    for name in ("refused_by_sqlite", "crashes", "misused", "declines"):
        policy[name] = access.EVERYONE
    monkeypatch.setattr(access, "OWN_TOOL_ROLES", policy)
    with clone.instance("acme") as instance:
        yield instance


def test_a_database_refusal_is_internal_logged_and_never_shows_engine_text(
    rigged: seahaven.Instance, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="company_world"):
        error = refused(rigged, "INTERNAL", "refused_by_sqlite")
    assert "NOT NULL" not in error.message
    assert isinstance(error.__cause__, seahaven.DbError)
    logged = [record for record in caplog.records if record.name == "company_world"]
    assert len(logged) == 1
    assert "refused_by_sqlite" in logged[0].getMessage()
    assert "NOT NULL" in logged[0].getMessage()
    assert count(rigged, "staff", "id = 'emp_x'") == 0


def test_an_unexpected_exception_is_internal_and_logged_with_its_traceback(
    rigged: seahaven.Instance, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="company_world"):
        error = refused(rigged, "INTERNAL", "crashes")
    assert "boom" not in error.message
    logged = [record for record in caplog.records if record.name == "company_world"]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert isinstance(logged[0].exc_info[1], KeyError)


def test_a_world_bug_and_the_companys_own_errors_pass_through(
    rigged: seahaven.Instance,
) -> None:
    with pytest.raises(seahaven.WorldBug, match="a bug the author must see"):
        rigged.call("misused")
    error = refused(rigged, "INVALID_STATE", "declines")
    assert error.details == {"reason": "testing"}


def test_a_tool_with_no_policy_is_the_authors_bug_not_a_silent_refusal(
    rigged: seahaven.Instance,
) -> None:
    with pytest.raises(seahaven.WorldBug, match=r"has no entry in access\.OWN_TOOL_ROLES"):
        rigged.call("unlisted")


def test_the_gate_reads_the_principal_from_the_company_even_on_a_chat_call(
    world: seahaven.World,
) -> None:
    # Acting as someone who has left is refused on a chat tool too: the gate
    # looked at the company's records, not at the chat world's acting user.
    with world.instance("acme", startup=as_("jonas")) as inst:
        jonas = staff_id(inst, "jonas")
        assert inst.call("chat_list_channels").channels
        with inst.bulk() as ctx:
            ctx.db.execute(
                "UPDATE staff SET status = 'inactive', end_date = '2026-06-01' WHERE id = ?", jonas
            )
        error = refused(inst, "FORBIDDEN", "chat_list_channels")
        assert error.details == {"tool": "chat_list_channels", "principal": jonas}
