"""Payment methods: attaching cards from test tokens, listing them, detaching them."""

from __future__ import annotations

import pytest
from payments_support import code_of, customer_with_card, record_shape, row

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty", clock_mode="fixed")


def test_a_token_becomes_a_card_showing_only_its_brand_and_last_four(
    instance: seahaven.Instance,
) -> None:
    customer, card = customer_with_card(instance, token="tok_mastercard")

    assert card.id.startswith("pm_")
    assert (card.customer_id, card.brand, card.last4) == (customer.id, "mastercard", "4444")
    assert "token" not in card.model_dump()
    assert instance.call("get_payment_method", payment_method_id=card.id) == card


def test_the_first_card_becomes_the_default_and_a_later_one_only_when_asked(
    instance: seahaven.Instance,
) -> None:
    customer, first = customer_with_card(instance)
    instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")
    assert instance.call("get_customer", customer_id=customer.id).default_payment_method_id == (
        first.id
    )

    third = instance.call(
        "attach_payment_method", customer_id=customer.id, token="tok_visa", set_as_default=True
    )

    assert instance.call("get_customer", customer_id=customer.id).default_payment_method_id == (
        third.id
    )


def test_attaching_the_first_card_writes_the_card_and_the_default(
    instance: seahaven.Instance,
) -> None:
    customer_with_card(instance)
    assert record_shape(instance, 1) == [("customers", "update"), ("payment_methods", "insert")]


def test_an_unknown_token_or_customer_is_not_found(instance: seahaven.Instance) -> None:
    customer = instance.call("create_customer", email="a@example.com")

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("attach_payment_method", customer_id=customer.id, token="tok_unicorn")
    assert raised.value.code == "NOT_FOUND"
    assert raised.value.details == {"kind": "token", "id": "tok_unicorn"}
    assert (
        code_of(instance, "attach_payment_method", customer_id="cus_nobody", token="tok_visa")
        == "NOT_FOUND"
    )
    assert row(instance, "SELECT count(*) AS n FROM payment_methods") == {"n": 0}


def test_a_token_that_is_not_token_shaped_is_invalid_input(instance: seahaven.Instance) -> None:
    customer = instance.call("create_customer", email="a@example.com")
    assert (
        code_of(
            instance, "attach_payment_method", customer_id=customer.id, token="4242424242424242"
        )
        == "INVALID_INPUT"
    )


def test_listing_shows_attached_cards_only(instance: seahaven.Instance) -> None:
    customer, kept = customer_with_card(instance)
    dropped = instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")
    instance.call("detach_payment_method", payment_method_id=dropped.id)

    listed = instance.call("list_payment_methods", customer_id=customer.id)

    assert [card.id for card in listed.data] == [kept.id]
    assert code_of(instance, "list_payment_methods", customer_id="cus_nobody") == "NOT_FOUND"


def test_detaching_the_default_card_leaves_the_customer_without_one(
    instance: seahaven.Instance,
) -> None:
    customer, card = customer_with_card(instance)

    detached = instance.call("detach_payment_method", payment_method_id=card.id)

    assert detached.detached_at is not None
    assert instance.call("get_customer", customer_id=customer.id).default_payment_method_id is None
    assert record_shape(instance, 2) == [("customers", "update"), ("payment_methods", "update")]
    # With no default card, a charge that names none has nothing to charge.
    assert (
        code_of(instance, "create_charge", customer_id=customer.id, amount=500, currency="usd")
        == "INVALID_STATE"
    )


def test_detaching_twice_is_invalid_state_and_an_unknown_card_not_found(
    instance: seahaven.Instance,
) -> None:
    _, card = customer_with_card(instance)
    instance.call("detach_payment_method", payment_method_id=card.id)

    assert code_of(instance, "detach_payment_method", payment_method_id=card.id) == "INVALID_STATE"
    assert code_of(instance, "detach_payment_method", payment_method_id="pm_nothing") == (
        "NOT_FOUND"
    )
    assert code_of(instance, "get_payment_method", payment_method_id="pm_nothing") == "NOT_FOUND"


def test_detaching_a_card_other_than_the_default_keeps_the_default(
    instance: seahaven.Instance,
) -> None:
    customer, default = customer_with_card(instance)
    spare = instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")

    instance.call("detach_payment_method", payment_method_id=spare.id)

    assert instance.call("get_customer", customer_id=customer.id).default_payment_method_id == (
        default.id
    )
    assert record_shape(instance, 3) == [("payment_methods", "update")]
