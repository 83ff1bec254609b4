"""``Instance.record_net()``: a block's calls logged as one net change per row when it ends.

The net records must say exactly what the fold of the per-call records says, for
every reference solution the company pack ships and for the awkward cases (a row
inserted then deleted, a value changed and changed back, a call that fails), and
nothing may read a log the block has not written yet.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from grading_worlds import SEED_ROWS, make_shop

import seahaven
from seahaven.grading.fold import fold
from seahaven.scenarios import SUBMIT_TOOL, Scenario, load_pack


def _net_forms(instance: seahaven.Instance) -> list[dict[str, Any]]:
    return [change.to_dict() for change in fold(instance.change_log())]


def _play(scenario: Scenario, *, net: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    """The folded changes and the call log after playing the scenario's solution."""
    world = scenario.resolve_world()
    # The acme fixture's clock runs with real time; a ticking one makes both plays read alike.
    options = {**scenario.start.instance_options(seed=7), "clock_mode": "tick"}
    with world.instance(**options) as instance:
        with instance.record_net() if net else contextlib.nullcontext():
            for step in scenario.solution or ():
                if step.tool == SUBMIT_TOOL:
                    break
                with contextlib.suppress(seahaven.ToolError):
                    instance.call(step.tool, **step.arguments)
        calls = [(record.tool, record.arguments, record.error) for record in instance.call_log()]
        return _net_forms(instance), calls


COMPANY_SOLVED = [scenario for scenario in load_pack("company").scenarios if scenario.solution]


@pytest.mark.parametrize("scenario", COMPANY_SOLVED, ids=lambda scenario: scenario.id)
def test_net_recording_says_what_the_fold_of_each_calls_records_says(scenario: Scenario) -> None:
    assert _play(scenario, net=True) == _play(scenario, net=False)


def test_the_company_pack_has_solutions_that_write() -> None:
    # The comparison above means little unless solutions change rows.
    writing = [scenario for scenario in COMPANY_SOLVED if _play(scenario, net=True)[0]]
    assert len(writing) >= 20


@pytest.fixture
def shop_instance() -> Any:
    with make_shop().instance(setup_sql=SEED_ROWS, seed=3) as instance:
        yield instance


def test_rows_that_end_where_they_started_leave_nothing(shop_instance: seahaven.Instance) -> None:
    inst = shop_instance
    with inst.record_net():
        order = inst.call("place_order", customer="cy", total=9.0)
        inst.call("cancel", order_id=order["id"])
        inst.call("set_status", order_id="o1", status="shipped")
        inst.call("set_status", order_id="o1", status="open")
        with pytest.raises(seahaven.ToolError):
            inst.call("set_status", order_id="missing", status="shipped")
        inst.call("set_status", order_id="o2", status="shipped")
    assert inst.change_log() == [record for record in inst.change_log() if record.i is None], (
        "net records belong to no one call"
    )
    assert _net_forms(inst) == [
        {
            "world": "main",
            "table": "orders",
            "op": "update",
            "key": {"id": "o2"},
            "before": {"status": "open"},
            "after": {"status": "shipped"},
            "actors": ["agent"],
        }
    ]
    assert [record.tool for record in inst.call_log()] == [
        "place_order",
        "cancel",
        "set_status",
        "set_status",
        "set_status",
        "set_status",
    ]
    assert inst.call_log()[4].error is not None


def test_each_store_is_recorded(shop_instance: seahaven.Instance) -> None:
    inst = shop_instance
    with inst.record_net():
        inst.call("ledger_record", order_id="o1", cents=2500)
        inst.call("set_status", order_id="o1", status="shipped")
    assert [(change.world, change.table, change.op) for change in fold(inst.change_log())] == [
        ("ledger", "entries", "insert"),
        ("main", "orders", "update"),
    ]


def test_calls_after_the_block_are_recorded_one_by_one_again(
    shop_instance: seahaven.Instance,
) -> None:
    inst = shop_instance
    with inst.record_net():
        inst.call("set_status", order_id="o1", status="shipped")
    inst.call("set_status", order_id="o2", status="shipped")
    assert [record.i for record in inst.change_log()] == [None, 1]
    assert inst.state()["call_count"] == 2


def test_the_block_keeps_what_was_written_when_it_raises(shop_instance: seahaven.Instance) -> None:
    inst = shop_instance
    with pytest.raises(KeyError), inst.record_net():
        inst.call("set_status", order_id="o1", status="shipped")
        raise KeyError("stop")
    assert [change.key for change in fold(inst.change_log())] == [{"id": "o1"}]


def test_what_would_miss_the_blocks_changes_is_refused(shop_instance: seahaven.Instance) -> None:
    inst = shop_instance
    with inst.record_net():
        inst.call("set_status", order_id="o1", status="shipped")
        for read in (inst.change_log, inst.state, inst.state_json, inst.snapshot):
            with pytest.raises(seahaven.WorldBug, match="record_net"):
                read()
        with pytest.raises(seahaven.WorldBug, match="bulk"), inst.bulk():
            pass
        with pytest.raises(seahaven.WorldBug, match="do not nest"), inst.record_net():
            pass
    assert len(inst.change_log()) == 1
    assert inst.snapshot() is not None


def test_a_call_cannot_open_a_block() -> None:
    world = make_shop()

    @world.tool
    def nest(ctx: seahaven.Ctx) -> None:
        """Try to open a record_net() block from inside a call."""
        with ctx_instance[0].record_net():
            pass

    ctx_instance: list[seahaven.Instance] = []
    with world.instance(setup_sql=SEED_ROWS) as inst:
        ctx_instance.append(inst)
        with pytest.raises(seahaven.WorldBug, match="inside a call"):
            inst.call("nest")
        assert inst.change_log() == []


def test_a_transaction_a_call_leaves_open_is_rolled_back_in_the_block() -> None:
    world = make_shop()

    def leave_open(ctx: seahaven.Ctx) -> None:
        """Begin a transaction, write, and return without ending it."""
        ctx.db.execute("BEGIN")
        ctx.db.execute("UPDATE orders SET status = 'lost' WHERE id = 'o1'")

    world.tool(leave_open, transaction=False)
    with world.instance(setup_sql=SEED_ROWS) as inst:
        with inst.record_net():
            with pytest.raises(seahaven.WorldBug, match="transaction still open"):
                inst.call("leave_open")
            inst.call("set_status", order_id="o2", status="shipped")
        assert [change.key for change in fold(inst.change_log())] == [{"id": "o2"}]
