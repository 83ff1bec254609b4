"""Customers: creating, reading, updating, listing and deleting them, and what each refuses."""

from __future__ import annotations

import pytest
from payments_support import NOW, code_of, customer_with_card, record_shape, row, rows

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty", clock_mode="fixed")


def test_a_new_customer_is_stored_and_read_back(instance: seahaven.Instance) -> None:
    created = instance.call(
        "create_customer",
        email="grace@example.com",
        name="Grace Hopper",
        description="Wholesale",
        metadata={"crm_id": "C-7"},
    )

    assert created.id.startswith("cus_")
    assert created.created_at == NOW
    assert created.default_payment_method_id is None
    assert instance.call("get_customer", customer_id=created.id) == created
    stored = row(instance, "SELECT email, name, metadata FROM customers WHERE id = ?", created.id)
    assert stored == {
        "email": "grace@example.com",
        "name": "Grace Hopper",
        "metadata": '{"crm_id":"C-7"}',
    }


def test_creating_a_customer_is_one_insert(instance: seahaven.Instance) -> None:
    instance.call("create_customer", email="grace@example.com")
    assert record_shape(instance, 0) == [("customers", "insert")]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"email": "not-an-email"}, "email"),
        ({"email": "a@b.co", "name": ""}, "name"),
        ({"email": "a@b.co", "description": "x" * 501}, "description"),
        ({"email": "a@b.co", "metadata": {f"k{n}": "v" for n in range(21)}}, "metadata"),
        ({"email": "a@b.co", "metadata": {"k": 5}}, "metadata.k"),
        ({"email": "a@b.co", "nickname": "ada"}, "nickname"),
    ],
)
def test_a_malformed_customer_is_refused_as_invalid_input(
    instance: seahaven.Instance, arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_customer", **arguments)

    assert raised.value.code == "INVALID_INPUT"
    assert raised.value.details is not None
    assert [item["field"] for item in raised.value.details["violations"]] == [field]
    assert rows(instance, "SELECT id FROM customers") == []


def test_every_violation_is_reported_at_once(instance: seahaven.Instance) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_customer", email="nope", name="", metadata="crm")

    assert raised.value.code == "INVALID_INPUT"
    assert raised.value.details is not None
    fields = sorted(item["field"] for item in raised.value.details["violations"])
    assert fields == ["email", "metadata", "name"]


def test_an_unknown_customer_is_not_found(instance: seahaven.Instance) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("get_customer", customer_id="cus_missing")

    assert raised.value.code == "NOT_FOUND"
    assert raised.value.details == {"kind": "customer", "id": "cus_missing"}


def test_an_id_of_another_kind_is_refused_before_the_lookup(instance: seahaven.Instance) -> None:
    assert code_of(instance, "get_customer", customer_id="ch_123") == "INVALID_INPUT"


def test_an_update_changes_only_what_it_names(instance: seahaven.Instance) -> None:
    created = instance.call(
        "create_customer", email="old@example.com", name="Ada", metadata={"a": "1", "b": "2"}
    )

    updated = instance.call(
        "update_customer",
        customer_id=created.id,
        email="new@example.com",
        metadata={"b": "", "c": "3"},
    )

    assert updated.email == "new@example.com"
    assert updated.name == "Ada"
    # Metadata merges key by key, and an empty value removes the key.
    assert updated.metadata == {"a": "1", "c": "3"}
    update = [record for record in instance.change_log() if record.i == 1]
    assert [(record.table, record.op) for record in update] == [("customers", "update")]
    assert update[0].after is not None
    assert update[0].after["email"] == "new@example.com"


def test_an_empty_description_clears_it(instance: seahaven.Instance) -> None:
    created = instance.call("create_customer", email="a@example.com", description="VIP")
    updated = instance.call("update_customer", customer_id=created.id, description="")
    assert updated.description is None


def test_an_update_with_nothing_to_change_is_refused(instance: seahaven.Instance) -> None:
    created = instance.call("create_customer", email="a@example.com")
    assert code_of(instance, "update_customer", customer_id=created.id) == "INVALID_INPUT"


def test_metadata_that_would_grow_past_twenty_keys_is_refused(
    instance: seahaven.Instance,
) -> None:
    created = instance.call(
        "create_customer", email="a@example.com", metadata={f"k{n}": "v" for n in range(15)}
    )
    more = {f"x{n}": "v" for n in range(6)}
    assert code_of(instance, "update_customer", customer_id=created.id, metadata=more) == (
        "INVALID_INPUT"
    )
    stored = row(instance, "SELECT metadata FROM customers WHERE id = ?", created.id)
    assert '"x0"' not in stored["metadata"]


def test_the_default_card_can_be_changed_to_another_of_the_customers_cards(
    instance: seahaven.Instance,
) -> None:
    customer, first = customer_with_card(instance)
    second = instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")
    assert instance.call("get_customer", customer_id=customer.id).default_payment_method_id == (
        first.id
    )

    updated = instance.call(
        "update_customer", customer_id=customer.id, default_payment_method_id=second.id
    )

    assert updated.default_payment_method_id == second.id


def test_a_default_card_must_be_the_customers_own_and_attached(
    instance: seahaven.Instance,
) -> None:
    ada, ada_card = customer_with_card(instance)
    bob, _ = customer_with_card(instance, email="bob@example.com")
    spare = instance.call("attach_payment_method", customer_id=bob.id, token="tok_amex")
    instance.call("detach_payment_method", payment_method_id=spare.id)

    assert code_of(
        instance, "update_customer", customer_id=bob.id, default_payment_method_id=ada_card.id
    ) == ("INVALID_STATE")
    assert code_of(
        instance, "update_customer", customer_id=bob.id, default_payment_method_id=spare.id
    ) == ("INVALID_STATE")
    assert code_of(
        instance, "update_customer", customer_id=ada.id, default_payment_method_id="pm_nothing"
    ) == ("NOT_FOUND")


def test_customers_are_listed_by_email(instance: seahaven.Instance) -> None:
    wanted = instance.call("create_customer", email="twin@example.com", name="One")
    other = instance.call("create_customer", email="twin@example.com", name="Two")
    instance.call("create_customer", email="solo@example.com")

    page = instance.call("list_customers", email="twin@example.com")

    assert sorted(customer.id for customer in page.data) == sorted([wanted.id, other.id])
    assert page.has_more is False
    assert page.next_starting_after is None


def test_a_deleted_customer_is_gone_but_their_charges_remain(
    instance: seahaven.Instance,
) -> None:
    customer, card = customer_with_card(instance)
    charge = instance.call("create_charge", customer_id=customer.id, amount=1500, currency="usd")

    deleted = instance.call("delete_customer", customer_id=customer.id)

    assert deleted.model_dump() == {"id": customer.id, "deleted": True}
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("get_customer", customer_id=customer.id)
    assert raised.value.code == "NOT_FOUND"
    assert raised.value.details is not None and raised.value.details["deleted"] is True
    assert instance.call("list_customers").data == []
    assert instance.call("get_payment_method", payment_method_id=card.id).detached_at == NOW
    assert instance.call("get_charge", charge_id=charge.id).customer_id == customer.id
    # History stays reachable by the customer's id.
    listed = instance.call("list_charges", customer_id=customer.id)
    assert [item.id for item in listed.data] == [charge.id]
    for tool, arguments in [
        ("delete_customer", {}),
        ("update_customer", {"name": "Back"}),
        ("attach_payment_method", {"token": "tok_visa"}),
        ("create_charge", {"amount": 500, "currency": "usd"}),
    ]:
        assert code_of(instance, tool, customer_id=customer.id, **arguments) == "NOT_FOUND"


def test_deleting_a_customer_detaches_their_cards_in_one_call(
    instance: seahaven.Instance,
) -> None:
    customer, _ = customer_with_card(instance)
    instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")

    instance.call("delete_customer", customer_id=customer.id)

    assert record_shape(instance, 3) == [
        ("customers", "update"),
        ("payment_methods", "update"),
        ("payment_methods", "update"),
    ]
