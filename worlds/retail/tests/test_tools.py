"""Each tool checks, refuses, writes and answers as tau2-bench's retail tool of the same name."""

from __future__ import annotations

import json
from typing import Any

import pytest
from retail_support import refusal, row, rows

import seahaven
from seahaven.pytest_plugin import prepared_on_repeat

pytestmark = pytest.mark.seahaven(fixture="initial")

# A pending order of four items paid with a gift card; Ethan also has a credit card.
PENDING, ETHAN, ETHANS_GIFT_CARD, ETHANS_CARD = (
    "#W6779827",
    "ethan_lopez_6291",
    "gift_card_7219486",
    "credit_card_9789590",
)
# A delivered order of five items paid with Omar's only card.
DELIVERED, OMAR, OMARS_CARD = "#W6304490", "omar_khan_2363", "credit_card_4420174"
DUMBBELLS_RUBBER, DUMBBELLS_URETHANE = "7896397433", "6585768447"  # 457.81, 467.69
THERMOSTAT_HOMEKIT, THERMOSTAT_GOOGLE = "4983901480", "7747408585"  # 262.47, 249.01
OUT_OF_STOCK_DUMBBELLS = "8140269513"


def balance(instance: seahaven.Instance, user_id: str, method: str) -> float:
    found = row(
        instance,
        "SELECT balance FROM payment_methods WHERE user_id = ? AND id = ?",
        user_id,
        method,
    )
    return float(found["balance"])


def changes(instance: seahaven.Instance) -> list[tuple[str, str]]:
    return sorted((record.table, record.op) for record in instance.change_log())


def test_customers_are_found_by_email_or_by_name_and_zip(instance: seahaven.Instance) -> None:
    assert instance.call("find_user_id_by_email", email="Omar.Khan3563@example.com") == OMAR
    assert (
        instance.call("find_user_id_by_name_zip", first_name="omar", last_name="KHAN", zip="75203")
        == OMAR
    )
    assert refusal(instance, "find_user_id_by_email", email="no@example.com") == (
        "NOT_FOUND",
        "User not found",
    )
    assert refusal(
        instance, "find_user_id_by_name_zip", first_name="Omar", last_name="Khan", zip="00000"
    ) == ("NOT_FOUND", "User not found")
    profile = instance.call("get_user_details", user_id=ETHAN)
    assert list(profile.payment_methods) == [ETHANS_CARD, ETHANS_GIFT_CARD]
    assert profile.payment_methods[ETHANS_GIFT_CARD].model_dump() == {
        "source": "gift_card",
        "id": ETHANS_GIFT_CARD,
        "balance": 49.0,
    }


def test_the_catalogue_answers_in_the_benchmarks_shapes(instance: seahaven.Instance) -> None:
    listing = instance.call("list_all_product_types")
    names = json.loads(listing)
    assert len(names) == 50 and list(names) == sorted(names)
    assert listing == json.dumps(names, sort_keys=True)
    product = instance.call("get_product_details", product_id="4896585277")
    assert (product.name, len(product.variants)) == ("Smart Thermostat", 9)
    assert next(iter(product.variants)) == "8722653925"
    item = instance.call("get_item_details", item_id=THERMOSTAT_GOOGLE)
    assert (item.price, item.available, item.options["compatibility"]) == (
        249.01,
        True,
        "Google Assistant",
    )
    assert refusal(instance, "get_product_details", product_id=THERMOSTAT_GOOGLE) == (
        "NOT_FOUND",
        "Product not found",
    )
    assert refusal(instance, "get_item_details", item_id="4896585277") == (
        "NOT_FOUND",
        "Item not found",
    )
    assert refusal(instance, "get_order_details", order_id="W6779827") == (
        "NOT_FOUND",
        "Order not found",
    )


def test_cancelling_refunds_a_gift_card_at_once(instance: seahaven.Instance) -> None:
    assert refusal(instance, "cancel_pending_order", order_id=PENDING, reason="too slow") == (
        "INVALID_REQUEST",
        "Invalid reason",
    )
    order = instance.call("cancel_pending_order", order_id=PENDING, reason="no longer needed")
    assert (order.status, order.cancel_reason) == ("cancelled", "no longer needed")
    assert [(p.transaction_type, p.amount) for p in order.payment_history] == [
        ("payment", 4079.45),
        ("refund", 4079.45),
    ]
    assert balance(instance, ETHAN, ETHANS_GIFT_CARD) == round(49.0 + 4079.45, 2)
    assert changes(instance) == [
        ("order_payments", "insert"),
        ("orders", "update"),
        ("payment_methods", "update"),
    ]
    assert refusal(
        instance, "cancel_pending_order", order_id=PENDING, reason="no longer needed"
    ) == ("INVALID_STATE", "Non-pending order cannot be cancelled")


def test_modifying_items_charges_the_difference_and_marks_the_order(
    instance: seahaven.Instance,
) -> None:
    order = instance.call(
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=[DUMBBELLS_RUBBER],
        new_item_ids=[DUMBBELLS_URETHANE],
        payment_method_id=ETHANS_CARD,
    )
    assert order.status == "pending (item modified)"
    assert (order.items[0].item_id, order.items[0].price) == (DUMBBELLS_URETHANE, 467.69)
    assert order.items[0].options["material"] == "urethane"
    paid = order.payment_history[-1]
    assert (paid.transaction_type, paid.payment_method_id) == ("payment", ETHANS_CARD)
    assert paid.amount == pytest.approx(467.69 - 457.81)
    # Pending, but no longer "pending": items change once.
    assert refusal(
        instance,
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=[DUMBBELLS_URETHANE],
        new_item_ids=[DUMBBELLS_RUBBER],
        payment_method_id=ETHANS_CARD,
    ) == ("INVALID_STATE", "Non-pending order cannot be modified")


@pytest.mark.parametrize(
    ("item_ids", "new_item_ids", "method", "expected"),
    [
        (["123"], [DUMBBELLS_URETHANE], ETHANS_CARD, ("NOT_FOUND", "123 not found")),
        (
            [DUMBBELLS_RUBBER],
            [],
            ETHANS_CARD,
            ("INVALID_REQUEST", "The number of items to be exchanged should match"),
        ),
        (
            [DUMBBELLS_RUBBER],
            [DUMBBELLS_RUBBER],
            ETHANS_CARD,
            ("INVALID_REQUEST", "The new item id should be different from the old item id"),
        ),
        (
            [DUMBBELLS_RUBBER],
            [OUT_OF_STOCK_DUMBBELLS],
            ETHANS_CARD,
            ("ITEM_NOT_AVAILABLE", f"New item {OUT_OF_STOCK_DUMBBELLS} not found or available"),
        ),
        ([DUMBBELLS_RUBBER], [THERMOSTAT_GOOGLE], ETHANS_CARD, ("NOT_FOUND", "Variant not found")),
        (
            [DUMBBELLS_RUBBER],
            ["3877338112"],  # iron adjustable, 545.68: 87.87 more than the gift card's 49
            ETHANS_GIFT_CARD,
            ("INSUFFICIENT_BALANCE", "Insufficient gift card balance to pay for the new item"),
        ),
        (
            [DUMBBELLS_RUBBER],
            [DUMBBELLS_URETHANE],
            "paypal_1",
            ("NOT_FOUND", "Payment method not found"),
        ),
    ],
)
def test_a_refused_modification_says_what_the_benchmark_says_and_changes_nothing(
    instance: seahaven.Instance,
    item_ids: list[str],
    new_item_ids: list[str],
    method: str,
    expected: tuple[str, str],
) -> None:
    assert (
        refusal(
            instance,
            "modify_pending_order_items",
            order_id=PENDING,
            item_ids=item_ids,
            new_item_ids=new_item_ids,
            payment_method_id=method,
        )
        == expected
    )
    assert instance.change_log() == []


def test_modified_items_take_the_last_new_items_price_and_options_as_in_the_benchmark(
    instance: seahaven.Instance,
) -> None:
    # tau2-bench gives every changed item the price and options of the last new item it
    # looked up; the database check compares against exactly that, so this world does it too.
    coffee_maker = rows(
        instance,
        "SELECT item_id FROM variants WHERE product_id = '7996920482'"
        " AND available = 1 AND item_id != '1323134954' LIMIT 1",
    )[0]["item_id"]
    order = instance.call(
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=[DUMBBELLS_RUBBER, "1323134954"],
        new_item_ids=[DUMBBELLS_URETHANE, coffee_maker],
        payment_method_id=ETHANS_CARD,
    )
    last = instance.call("get_item_details", item_id=coffee_maker)
    assert [item.item_id for item in order.items[:3]] == [
        DUMBBELLS_URETHANE,
        "3379843752",
        coffee_maker,
    ]
    assert order.items[0].price == order.items[2].price == last.price
    assert order.items[0].options == last.options


def test_paying_with_another_method_charges_it_and_refunds_the_first(
    instance: seahaven.Instance,
) -> None:
    assert refusal(
        instance,
        "modify_pending_order_payment",
        order_id=PENDING,
        payment_method_id=ETHANS_GIFT_CARD,
    ) == ("INVALID_REQUEST", "The new payment method should be different from the current one")
    order = instance.call(
        "modify_pending_order_payment", order_id=PENDING, payment_method_id=ETHANS_CARD
    )
    assert [(p.transaction_type, p.payment_method_id) for p in order.payment_history] == [
        ("payment", ETHANS_GIFT_CARD),
        ("payment", ETHANS_CARD),
        ("refund", ETHANS_GIFT_CARD),
    ]
    assert balance(instance, ETHAN, ETHANS_GIFT_CARD) == round(49.0 + 4079.45, 2)
    assert refusal(
        instance,
        "modify_pending_order_payment",
        order_id=PENDING,
        payment_method_id=ETHANS_GIFT_CARD,
    ) == ("INVALID_STATE", "There should be exactly one payment for a pending order")


def test_addresses_change_on_pending_orders_and_on_profiles(instance: seahaven.Instance) -> None:
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Austin",
        "state": "TX",
        "country": "USA",
        "zip": "78701",
    }
    order = instance.call("modify_pending_order_address", order_id=PENDING, **address)
    assert order.address.model_dump() == {**address}
    assert refusal(instance, "modify_pending_order_address", order_id=DELIVERED, **address) == (
        "INVALID_STATE",
        "Non-pending order cannot be modified",
    )
    user = instance.call("modify_user_address", user_id=OMAR, **address)
    assert user.address.city == "Austin"
    assert changes(instance) == [("orders", "update"), ("users", "update")]


def test_returns_and_exchanges_record_the_request_and_move_no_money(
    instance: seahaven.Instance,
) -> None:
    assert refusal(
        instance,
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=[THERMOSTAT_HOMEKIT, THERMOSTAT_HOMEKIT],
        payment_method_id=OMARS_CARD,
    ) == ("NOT_FOUND", "Some item not found")
    exchanged = instance.call(
        "exchange_delivered_order_items",
        order_id=DELIVERED,
        item_ids=[THERMOSTAT_HOMEKIT],
        new_item_ids=[THERMOSTAT_GOOGLE],
        payment_method_id=OMARS_CARD,
    )
    assert exchanged.status == "exchange requested"
    assert (exchanged.exchange_items, exchanged.exchange_new_items) == (
        [THERMOSTAT_HOMEKIT],
        [THERMOSTAT_GOOGLE],
    )
    assert exchanged.exchange_price_difference == round(249.01 - 262.47, 2)
    assert changes(instance) == [("orders", "update")]
    assert refusal(
        instance,
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=[THERMOSTAT_HOMEKIT],
        payment_method_id=OMARS_CARD,
    ) == ("INVALID_STATE", "Non-delivered order cannot be returned")


def test_a_return_goes_to_the_original_method_and_lists_items_sorted(
    instance: seahaven.Instance,
) -> None:
    items = ["9375701158", THERMOSTAT_HOMEKIT]
    returned = instance.call(
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=items,
        payment_method_id=OMARS_CARD,
    )
    assert (returned.status, returned.return_items) == ("return requested", sorted(items))
    assert returned.return_payment_method_id == OMARS_CARD


def test_calculator_and_transfer(instance: seahaven.Instance) -> None:
    assert instance.call("calculate", expression="467.69 - 457.81") == "9.88"
    assert refusal(instance, "calculate", expression="import os") == (
        "INVALID_EXPRESSION",
        "Invalid characters in expression",
    )
    assert instance.call("transfer_to_human_agents", summary="x") == "Transfer successful"


def test_arguments_of_the_wrong_type_are_refused_as_invalid_input(
    instance: seahaven.Instance,
) -> None:
    code, _ = refusal(
        instance,
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=THERMOSTAT_HOMEKIT,
        payment_method_id=OMARS_CARD,
    )
    assert code == "INVALID_INPUT"
    assert instance.change_log() == []


def test_a_tool_called_again_prepares_none_of_its_statements_again(
    instance: seahaven.Instance,
) -> None:
    # Each statement is prepared once per episode: a second round of the read tools
    # prepares nothing (a bare "col = ?" beside an ORDER BY would be prepared every time).
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find_user_id_by_email", {"email": "Omar.Khan3563@example.com"}),
        ("find_user_id_by_name_zip", {"first_name": "omar", "last_name": "KHAN", "zip": "75203"}),
        ("get_user_details", {"user_id": ETHAN}),
        ("get_order_details", {"order_id": PENDING}),
        ("get_product_details", {"product_id": "7996920482"}),
        ("get_item_details", {"item_id": DUMBBELLS_RUBBER}),
    ]
    assert prepared_on_repeat(instance, calls) == []
