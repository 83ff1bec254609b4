"""The error handler: argument errors become INVALID_INPUT, bugs become a logged INTERNAL.

The handler's other paths are reached with a copy of the world carrying a few
extra tools that fail on purpose; the copy shares the real middleware, and the
imported world is left untouched.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator

import pytest
from payments_support import customer_with_card, rows
from payments_world.errors import InvalidState

import seahaven


@pytest.fixture
def rigged(world: seahaven.World) -> Iterator[seahaven.Instance]:
    """An instance of a copy of the world with four tools that fail in four ways."""
    clone = copy.copy(world)

    @clone.tool
    def refused_by_sqlite(ctx: seahaven.Ctx) -> None:
        """Write a customer with no email, which the schema refuses."""
        ctx.db.execute(
            "INSERT INTO customers (id, metadata, created_at) VALUES ('cus_x', '{}', 'x')"
        )

    @clone.tool
    def crashes(ctx: seahaven.Ctx) -> None:
        """Fail with a plain Python exception, as a bug would."""
        raise KeyError("boom")

    @clone.tool
    def misused(ctx: seahaven.Ctx) -> None:
        """Fail with the author's own mistake."""
        raise seahaven.WorldBug("a bug the author must see")

    @clone.tool
    def refuses(ctx: seahaven.Ctx) -> None:
        """Fail with one of the world's own errors."""
        raise InvalidState("not now", reason="testing")

    with clone.instance("empty") as instance:
        yield instance


def test_the_error_handler_is_the_outermost_middleware(world: seahaven.World) -> None:
    from payments_world.middleware.error_handler import error_handler

    assert world.middlewares[0] is error_handler


def test_a_database_refusal_is_internal_logged_and_never_shows_engine_text(
    rigged: seahaven.Instance, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="payments_world"),
        pytest.raises(seahaven.ToolError) as raised,
    ):
        rigged.call("refused_by_sqlite")

    assert raised.value.code == "INTERNAL"
    assert "NOT NULL" not in raised.value.message
    assert isinstance(raised.value.__cause__, seahaven.DbError)
    logged = [record for record in caplog.records if record.name == "payments_world"]
    assert len(logged) == 1
    assert "refused_by_sqlite" in logged[0].getMessage()
    assert "NOT NULL" in logged[0].getMessage()
    assert rows(rigged, "SELECT id FROM customers") == []


def test_an_unexpected_exception_is_internal_and_logged_with_its_traceback(
    rigged: seahaven.Instance, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="payments_world"),
        pytest.raises(seahaven.ToolError) as raised,
    ):
        rigged.call("crashes")

    assert (raised.value.code, raised.value.details) == ("INTERNAL", None)
    assert "boom" not in raised.value.message
    logged = [record for record in caplog.records if record.name == "payments_world"]
    assert len(logged) == 1
    assert logged[0].exc_info is not None and logged[0].exc_info[0] is KeyError


def test_a_world_bug_passes_through_unchanged(rigged: seahaven.Instance) -> None:
    with pytest.raises(seahaven.WorldBug, match="a bug the author must see"):
        rigged.call("misused")


def test_the_worlds_own_errors_pass_through_unchanged(rigged: seahaven.Instance) -> None:
    with pytest.raises(InvalidState) as raised:
        rigged.call("refuses")
    assert raised.value.to_dict() == {
        "code": "INVALID_STATE",
        "message": "not now",
        "details": {"reason": "testing"},
    }


def test_an_argument_error_becomes_invalid_input_carrying_every_violation(
    rigged: seahaven.Instance,
) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        rigged.call("create_charge", customer_id="customer-1", amount="5", currency="usd", tip=1)

    error = raised.value
    assert error.code == "INVALID_INPUT"
    assert not isinstance(error, seahaven.ArgumentError)
    assert isinstance(error.__cause__, seahaven.ArgumentError)
    assert error.details is not None
    assert sorted(item["field"] for item in error.details["violations"]) == [
        "amount",
        "customer_id",
        "tip",
    ]
    assert all(item["message"] for item in error.details["violations"])


@pytest.mark.seahaven(
    fixture="empty",
    setup_sql="INSERT INTO customers (id, email, metadata, created_at)"
    " VALUES ('cus_broken', 'a@example.com', 'not json', '2026-06-01T09:00:00.000Z')",
)
def test_a_real_tool_tripping_on_corrupt_state_is_internal(instance: seahaven.Instance) -> None:
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("get_customer", customer_id="cus_broken")
    assert raised.value.code == "INTERNAL"


@pytest.mark.seahaven(fixture="empty")
def test_a_failed_call_leaves_nothing_behind(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    charge = instance.call("create_charge", customer_id=customer.id, amount=1000, currency="usd")
    before = rows(instance, "SELECT * FROM charges")

    with pytest.raises(seahaven.ToolError):
        instance.call("create_refund", charge_id=charge.id, amount=1001)

    assert rows(instance, "SELECT * FROM charges") == before
    assert [record for record in instance.change_log() if record.i == 3] == []


def test_an_argument_error_keeps_the_framework_category_under_the_worlds_code(
    rigged: seahaven.Instance,
) -> None:
    # A harness keys on error_type, the same for every world; code stays the world's own.
    with pytest.raises(seahaven.ToolError) as raised:
        rigged.call("create_charge", customer_id="customer-1", amount="5", currency="usd")
    assert (raised.value.code, raised.value.error_type) == ("INVALID_INPUT", "invalid_args")
    # The world's own refusal of a well-typed value is the product's, not the call's.
    with pytest.raises(InvalidState) as own:
        rigged.call("refuses")
    assert own.value.error_type == "execution_error"


@pytest.mark.parametrize("depth", [65, 600, 900])
def test_a_deeply_nested_metadata_is_invalid_input_and_every_later_write_is_logged(
    rigged: seahaven.Instance, depth: int
) -> None:
    nested: list[object] = []
    for _ in range(depth):
        nested = [nested]
    with pytest.raises(seahaven.ToolError) as raised:
        rigged.call("create_customer", email="deep@example.com", metadata={"k": nested})
    assert (raised.value.code, raised.value.error_type) == ("INVALID_INPUT", "invalid_args")
    first = rigged.call("create_customer", email="ada@example.com")
    second = rigged.call("create_customer", email="grace@example.com")
    document = rigged.state()
    logged = [record.key["id"] for record in rigged.change_log() if record.table == "customers"]
    assert logged == [first.id, second.id]
    assert document["call_count"] == 3
    assert {row["id"] for row in rows(rigged, "SELECT id FROM customers")} == {first.id, second.id}
