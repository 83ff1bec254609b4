"""An ended instance is freed by reference counting: nothing of it waits for the cycle collector.

A long-lived server raises the collector's thresholds and freezes its start-up
heap, so garbage held in reference cycles can stay for minutes. These tests run
with the collector off and check that a destroyed instance, and the arguments of
the calls it refused, are gone the moment the last reference to them is.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from composition_worlds import CHARGES, make_world

import seahaven


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Run the test with the cycle collector off, after collecting what came before."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class Marker:
    """A value only a call's arguments refer to, so a weak reference tells when they are freed."""


def make_shop() -> seahaven.World:
    """A shop that adds a payments world: middleware, a nested call, and a tool that fails."""
    payments = make_world("payments", CHARGES)

    @payments.tool
    def create_charge(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
        """Book a charge."""
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", ctx.ids.uuid(), amount)
        return {"amount": amount}

    shop = make_world("shop", "CREATE TABLE orders (id TEXT PRIMARY KEY) STRICT;")
    shop.add_world(payments)

    @shop.middleware
    def passthrough(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        return next_(ctx, call)

    @shop.tool
    def checkout(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
        """Take an order and charge for it through the payments world."""
        ctx.db.execute("INSERT INTO orders (id) VALUES (?)", ctx.ids.uuid())
        return ctx.worlds.payments.call("create_charge", amount=amount)  # type: ignore[no-any-return]

    @shop.tool
    def refuse(ctx: seahaven.Ctx, note: str) -> None:
        """Always fail, as a world's own error."""
        raise seahaven.ToolError("REFUSED", "not today")

    return shop


def test_a_destroyed_instance_is_freed_without_the_cycle_collector(collector_off: None) -> None:
    shop = make_shop()
    inst = shop.instance()
    inst.call("checkout", amount=5)
    inst.state()
    ended = weakref.ref(inst)
    inst.destroy()
    del inst
    assert ended() is None


def test_refused_calls_leave_nothing_behind_for_the_collector(collector_off: None) -> None:
    shop = make_shop()
    inst = shop.instance()
    marker = Marker()
    refs = [weakref.ref(marker)]
    # Arguments the schema refuses, a tool that raises, and an unknown tool.
    calls: list[tuple[str, dict[str, Any]]] = [
        ("checkout", {"amount": [marker]}),
        ("refuse", {"note": "x", "extra": marker}),
        ("refuse", {"note": "x"}),
        ("no_such_tool", {"value": marker}),
    ]
    for name, arguments in calls:
        with pytest.raises(seahaven.ToolError):
            inst.call(name, **arguments)
    del marker, calls, arguments
    ended = weakref.ref(inst)
    inst.destroy()
    del inst
    assert ended() is None
    assert all(ref() is None for ref in refs)
