"""The composition at work: four stores, one surface, one change log, and no cross-store atomicity.

The company adds the payments world twice (its own account, and the European
one in the scope ``eu``) and the chat world once. These tests show each store
where it should be, reached by every route that should reach it, and what is
left behind when a call fails halfway through.
"""

from __future__ import annotations

import json
import logging

import pytest
from chat_world.tools.channels import archive_channel, lookup_channel_by_name
from company_support import as_, calls_records, count, refused, row, rows, snapshot
from company_world.tools.staff import whoami
from payments_world.tools.charges import create_charge

import seahaven

pytestmark = pytest.mark.seahaven(fixture="acme", startup=as_("carla"))

INVOICE = {"amount": 12_000, "description": "Site visit", "card_token": "tok_visa"}


# Its files are what this test reads, so the instance is made on disk.
@pytest.mark.seahaven(fixture="acme", startup=as_("carla"), storage="disk")
def test_one_instance_holds_five_stores_with_their_own_paths_and_scopes(
    instance: seahaven.Instance,
) -> None:
    nodes = [(node.path, node.world, node.scope, node.aliases) for node in instance.composition()]
    assert nodes == [
        ("main", "company", None, ()),
        ("payments", "payments", None, ()),
        ("chat", "chat", None, ()),
        ("payments_eu", "payments", "eu", ()),
        ("portal", "customer_portal", None, ()),
    ]
    files = sorted(path.name for path in instance.directory.glob("state*.sqlite"))
    assert files == [
        "state.chat.sqlite",
        "state.payments.sqlite",
        "state.payments_eu.sqlite",
        "state.portal.sqlite",
        "state.sqlite",
    ]


def test_the_company_s_route_and_the_agent_s_reach_one_payments_store(
    instance: seahaven.Instance,
) -> None:
    # The agent makes a customer through pay_..., the company's own tool charges it...
    customer = instance.call("pay_create_customer", email="ap@tyrell.test", name="Tyrell")
    instance.call("pay_attach_payment_method", customer_id=customer.id, token="tok_mastercard")
    invoice = instance.call(
        "invoice_customer", customer_email="ap@tyrell.test", amount=30_000, description="Audit"
    )
    assert invoice.payments_customer_id == customer.id
    # ...and the charge the company's tool made is the agent's to read, and the eval's to join.
    assert instance.call("pay_get_charge", charge_id=invoice.charge_id).amount == 30_000
    joined = row(
        instance,
        "SELECT invoices.number, charges.status, charges.amount, customers.name"
        " FROM invoices JOIN payments.charges AS charges ON charges.id = invoices.charge_id"
        " JOIN payments.customers AS customers ON customers.id = charges.customer_id"
        " WHERE invoices.id = ?",
        invoice.id,
    )
    assert joined == {
        "number": "INV-0011",
        "status": "succeeded",
        "amount": 30_000,
        "name": "Tyrell",
    }


def test_the_eu_scope_is_a_store_of_its_own(instance: seahaven.Instance) -> None:
    usd_charges = count(instance, "payments.charges")
    invoice = instance.call(
        "invoice_customer", customer_email="ap@globex.test", currency="eur", **INVOICE
    )
    assert count(instance, "payments.charges") == usd_charges
    assert count(instance, "payments.charges", "id = ?", invoice.charge_id) == 0
    assert count(instance, "payments_eu.charges", "id = ?", invoice.charge_id) == 1
    # Globex is a customer of both accounts now: two customers, one in each store.
    usd = row(instance, "SELECT id FROM payments.customers WHERE email = 'ap@globex.test'")
    eur = row(instance, "SELECT id FROM payments_eu.customers WHERE email = 'ap@globex.test'")
    assert usd["id"] != eur["id"] == invoice.payments_customer_id
    assert instance.call("eu_pay_get_charge", charge_id=invoice.charge_id).currency == "eur"
    refused(instance, "NOT_FOUND", "pay_get_charge", charge_id=invoice.charge_id)


def test_one_change_log_tells_the_stores_apart_by_path(instance: seahaven.Instance) -> None:
    instance.call("invoice_customer", customer_email="ap@tyrell.test", **INVOICE)
    instance.call("invoice_customer", customer_email="ap@tyrell.test", currency="eur", **INVOICE)
    instance.call(
        "approve_expense",
        expense_id=row(
            instance, "SELECT id FROM expenses WHERE status = 'submitted' AND amount = 52000"
        )["id"],
    )
    stores = [sorted({record.world for record in calls_records(instance, i)}) for i in range(3)]
    assert stores == [
        ["chat", "main", "payments"],
        ["chat", "main", "payments_eu"],
        ["main", "payments"],
    ]
    assert {record.world for record in instance.change_log()} == {
        "main",
        "payments",
        "chat",
        "payments_eu",
    }
    # Both payments stores have a charges table; the path is what tells their records apart.
    charges = {record.world for record in instance.change_log() if record.table == "charges"}
    assert charges == {"payments", "payments_eu"}
    # Within a call, records are sorted by store, then table.
    first = [(record.world, record.table) for record in calls_records(instance, 0)]
    assert first == sorted(first)


def test_a_failing_nested_call_leaves_the_stores_that_committed_committed(
    instance: seahaven.Instance,
) -> None:
    with instance.bulk() as ctx:
        billing = ctx.worlds.chat.call(lookup_channel_by_name, name="billing")
        ctx.worlds.chat.call(archive_channel, channel_id=billing.id)
    before = snapshot(instance)
    balance = instance.call("pay_get_balance").available_in("usd")
    calls_before = instance.call_count

    refused(
        instance,
        "CHANNEL_ARCHIVED",
        "invoice_customer",
        customer_email="ap@globex.test",
        amount=50_000,
        description="Rush order",
    )

    after = snapshot(instance)
    # The payments account took the money: its charge committed when it returned...
    assert after["payments.charges"] == before["payments.charges"] + 1
    orphan = row(instance, "SELECT * FROM payments.charges ORDER BY rowid DESC LIMIT 1")
    assert (orphan["status"], orphan["amount"]) == ("succeeded", 50_000)
    assert json.loads(orphan["metadata"])["invoice_number"] == "INV-0011"
    assert instance.call("pay_get_balance").available_in("usd") > balance
    # ...while the company's own rows rolled back with the failing call, and chat took nothing.
    assert count(instance, "invoices", "id = ?", json.loads(orphan["metadata"])["invoice_id"]) == 0
    for table in ("invoices", "audit_log", "chat.messages"):
        assert after[table] == before[table], table
    # The change log says the same: the failed call changed the payments store only.
    failed = calls_records(instance, calls_before)
    assert {(record.world, record.table) for record in failed} == {
        ("payments", "charges"),
        ("payments", "balance_transactions"),
    }
    assert instance.call_log()[calls_before].error is not None


def test_keywords_bound_per_node_are_not_overridden_by_the_caller(world: seahaven.World) -> None:
    broadcast = {**as_("carla"), "settlement_days": 5, "user": "dana"}
    with world.instance("acme", startup=broadcast) as inst:
        usd = inst.call(
            "invoice_customer", customer_email="ap@globex.test", **{**INVOICE, "card_token": None}
        )
        eur = inst.call(
            "invoice_customer", customer_email="ap@hansa.test", currency="eur", **INVOICE
        )
        settled = {
            (item["path"], item["available_on"][:10])
            for item in rows(
                inst,
                "SELECT 'payments' AS path, available_on FROM payments.balance_transactions"
                " WHERE source_id = ? UNION SELECT 'payments_eu', available_on"
                " FROM payments_eu.balance_transactions WHERE source_id = ?",
                usd.charge_id,
                eur.charge_id,
            )
        }
        # usd settles at once and eur in two days, as world.py binds, whatever was broadcast.
        assert settled == {("payments", "2026-06-01"), ("payments_eu", "2026-06-03")}
        poster = row(
            inst,
            "SELECT u.handle FROM chat.messages AS m JOIN chat.users AS u ON u.id = m.user_id"
            " WHERE m.id = ?",
            eur.announcement_message_id,
        )
        assert poster == {"handle": "backoffice"}


def test_a_blank_instance_connects_the_chat_integration_at_startup(world: seahaven.World) -> None:
    with world.instance(now="2026-06-01T09:00:00.000Z") as blank:
        accounts = rows(blank, "SELECT handle, role FROM chat.users")
        assert accounts == [{"handle": "backoffice", "role": "owner"}]
        # Starting state, not anybody's work: nothing in the change log.
        assert blank.change_log() == []
    with world.instance("acme") as filled:
        assert count(filled, "chat.users", "handle = 'backoffice'") == 1


def test_a_function_of_a_world_added_twice_names_no_one_store(
    instance: seahaven.Instance,
) -> None:
    with pytest.raises(seahaven.WorldBug, match="more than one store") as raised:
        instance.call(create_charge, customer_id="cus_x", amount=100, currency="usd")
    assert "create_charge at payments" in str(raised.value)
    assert "create_charge at payments_eu" in str(raised.value)
    # A function of the company's own is one tool, and comes back typed.
    assert instance.call(whoami).full_name == "Carla Mendes"


def test_nested_calls_log_as_internal_lines_naming_their_store(
    instance: seahaven.Instance, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="seahaven.dispatch"):
        instance.call(
            "invoice_customer", customer_email="ap@globex.test", currency="eur", **INVOICE
        )
    lines = [record.getMessage() for record in caplog.records if record.name == "seahaven.dispatch"]
    outer = [line for line in lines if "internal=false" in line]
    inner = [line for line in lines if "internal=true" in line]
    assert len(outer) == 1 and "tool=invoice_customer node=main" in outer[0]
    assert any("tool=create_charge node=payments_eu" in line for line in inner)
    assert any("tool=post_message node=chat" in line for line in inner)
    assert not any("node=payments " in line for line in inner)
