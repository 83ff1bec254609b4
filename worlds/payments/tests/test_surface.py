"""What an agent and a host world see: the tool list, its descriptions, and the schema's rules."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import apsw
import payments_world
import pytest

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty")

TOOLS = [
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


def test_the_agent_sees_every_tool_in_product_order(instance: seahaven.Instance) -> None:
    assert [tool["name"] for tool in instance.tools()] == TOOLS


def test_every_description_says_what_the_tool_does_and_how_it_fails(
    instance: seahaven.Instance,
) -> None:
    for tool in instance.tools():
        description = tool["description"]
        assert len(description.split()) >= 8, tool["name"]
        if tool["name"] != "get_balance":  # the one tool that cannot fail
            assert "Errors:" in description, tool["name"]


def test_no_description_names_another_tool(instance: seahaven.Instance) -> None:
    # A host adding this world with a tool_prefix renames the tools but never the text,
    # so a description naming a sibling would send an agent to a name it cannot call.
    for tool in instance.tools():
        for other in TOOLS:
            if other != tool["name"]:
                assert not re.search(rf"\b{other}\b", tool["description"]), (tool["name"], other)


def test_every_argument_is_described_by_the_schema(instance: seahaven.Instance) -> None:
    listed = {tool["name"]: tool["input_schema"] for tool in instance.tools()}
    charge = listed["create_charge"]["properties"]
    assert charge["currency"]["enum"] == ["usd", "eur", "gbp", "cad", "aud", "jpy"]
    assert (charge["amount"]["exclusiveMinimum"], charge["amount"]["maximum"]) == (0, 99_999_999)
    assert listed["create_charge"]["required"] == ["customer_id", "amount", "currency"]
    limit = listed["list_charges"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 10)
    assert listed["create_refund"]["properties"]["reason"]["anyOf"][0]["enum"] == [
        "duplicate",
        "fraudulent",
        "requested_by_customer",
    ]


def test_every_table_is_strict_with_an_explicit_primary_key() -> None:
    # Asked of SQLite itself, on a plain connection of our own, not read from the SQL text.
    conn = apsw.Connection(":memory:")
    conn.execute(payments_world.world.schema)
    tables = [
        name
        for name, strict in conn.execute(
            "SELECT name, strict FROM pragma_table_list WHERE schema = 'main'"
            " AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        if strict == 1
    ]
    assert tables == [
        "balance_transactions",
        "bank_accounts",
        "charges",
        "customers",
        "payment_methods",
        "payouts",
        "refunds",
    ]
    for table in tables:
        keys = list(conn.execute("SELECT name FROM pragma_table_info(?) WHERE pk > 0", (table,)))
        assert keys, table


def test_no_schema_object_reads_the_wall_clock() -> None:
    schema = payments_world.world.schema.lower()
    for expression in ("current_timestamp", "current_date", "current_time", "'now'"):
        assert expression not in schema


def test_every_tool_and_middleware_module_is_imported() -> None:
    package = Path(payments_world.__file__).parent
    for folder in ("tools", "middleware"):
        for module in sorted((package / folder).glob("*.py")):
            name = f"payments_world.{folder}" + (
                "" if module.stem == "__init__" else f".{module.stem}"
            )
            assert name in sys.modules, name


def test_world_code_takes_time_and_randomness_only_from_ctx() -> None:
    package = Path(payments_world.__file__).parent
    forbidden = re.compile(
        r"datetime\.now|datetime\.utcnow|date\.today|time\.time\(|import random|uuid4|uuid1"
        r"|\.instance\("
    )
    for source in sorted(package.rglob("*.py")):
        assert not forbidden.search(source.read_text()), source.name


def test_the_world_is_published_under_its_entry_point() -> None:
    from importlib.metadata import PackageNotFoundError, distribution, entry_points

    try:
        distribution("seahaven-world-payments")
    except PackageNotFoundError:
        pytest.skip("the distribution is not installed here: pip install -e worlds/payments")
    published = {entry.name: entry for entry in entry_points(group="seahaven.worlds")}
    assert published["payments"].value == "payments_world:world"
    assert published["payments"].load() is payments_world.world
