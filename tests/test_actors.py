"""Who did what: every change-log record and call-log entry carries its actor.

A call made the ordinary way is the agent's; ``inst.acting_as(...)`` makes the
block's calls (and ``bulk()`` blocks) another actor's, on this thread only; a
``bulk()`` block's own writes are ``setup``'s. The actor is the last key of a
record and of a call entry in every document, and the fold lists everyone who
touched a row.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from people_worlds import SEED_ROWS, make_desk

import seahaven
from seahaven.grading import fold


@pytest.fixture
def inst() -> Any:
    with make_desk().instance(
        setup_sql=SEED_ROWS, state_format="seahaven.state+calls/1", clock_mode="tick"
    ) as instance:
        yield instance


def actors(inst: seahaven.Instance) -> list[tuple[int | None, str, str]]:
    return [(record.i, record.table, record.actor) for record in inst.change_log()]


def test_a_call_is_the_agents_and_says_so_in_every_document(inst: seahaven.Instance) -> None:
    inst.call("post_notice", text="hello")
    [record] = inst.change_log()
    assert record.actor == "agent"
    assert list(record.to_dict())[-1] == "actor"
    [call] = inst.call_log()
    assert call.actor == "agent"
    assert call.to_dict() == {
        "tool": "post_notice",
        "arguments": {"text": "hello"},
        "error": None,
        "actor": "agent",
    }
    document = inst.state()
    assert document["state"]["db"]["log"][0]["actor"] == "agent"
    assert document["state"]["calls"][0]["actor"] == "agent"
    text = inst.state_json()
    assert text == json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    last = inst.state(format="seahaven.state+last_step/1")["state"]["db"]["log"]
    assert [entry["actor"] for entry in last] == ["agent"]


def test_acting_as_makes_the_blocks_calls_that_actors(inst: seahaven.Instance) -> None:
    inst.call("post_notice", text="agent")
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
        with inst.acting_as("event:outage"):
            inst.call("post_notice", text="outage")
        inst.call("phone_read_settings")  # a read: in the call log, nothing in the change log
    inst.call("post_notice", text="agent again")
    assert [call.actor for call in inst.call_log()] == [
        "agent",
        "user",
        "event:outage",
        "user",
        "agent",
    ]
    assert actors(inst) == [
        (0, "notices", "agent"),
        (1, "settings", "user"),
        (2, "notices", "event:outage"),
        (4, "notices", "agent"),
    ]
    assert repr(inst.call_log()[1]) == (
        "CallRecord(tool='phone_set_roaming', error=None, actor='user')"
    )
    # The text each record was given when its call ended is the document's, byte for byte.
    assert inst.state_json() == json.dumps(inst.state(), separators=(",", ":"), ensure_ascii=False)


def test_a_nested_call_through_a_handle_is_the_outer_calls_actor() -> None:
    desk = make_desk()

    @desk.tool
    def roam_for_them(ctx: seahaven.Ctx) -> None:
        """Turn roaming on through the handset's own tool (a nested call)."""
        ctx.worlds.handset.call("set_roaming", on=True)

    with desk.instance(setup_sql=SEED_ROWS) as inst:
        with inst.acting_as("event:carrier-push"):
            inst.call("roam_for_them")
        [record] = inst.change_log()
        assert (record.world, record.actor) == ("handset", "event:carrier-push")


def test_bulk_writes_are_setups_unless_a_block_says_otherwise(inst: seahaven.Instance) -> None:
    with inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO notices (text) VALUES ('loaded')")
        inst.call("post_notice", text="a call inside the block")
        ctx.db.execute("INSERT INTO notices (text) VALUES ('loaded after')")
    with inst.acting_as("event:import"), inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO notices (text) VALUES ('imported')")
    assert actors(inst) == [
        (None, "notices", "setup"),
        (0, "notices", "agent"),
        (None, "notices", "setup"),
        (None, "notices", "event:import"),
    ]
    assert inst.state_json() == json.dumps(inst.state(), separators=(",", ":"), ensure_ascii=False)


def test_a_call_inside_a_bulk_block_under_acting_as_is_that_actors(
    inst: seahaven.Instance,
) -> None:
    with inst.acting_as("user"), inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO notices (text) VALUES ('by hand')")
        inst.call("phone_set_roaming", on=True)
    assert actors(inst) == [(None, "notices", "user"), (0, "settings", "user")]


def test_record_net_records_the_blocks_actor(inst: seahaven.Instance) -> None:
    with inst.acting_as("user"), inst.record_net():
        inst.call("phone_set_roaming", on=True)
    assert actors(inst) == [(None, "settings", "user")]
    assert [call.actor for call in inst.call_log()] == ["user"]


def test_acting_as_is_this_threads_only(inst: seahaven.Instance) -> None:
    entered, release = threading.Event(), threading.Event()

    def hold_a_user_block() -> None:
        with inst.acting_as("user"):
            entered.set()
            release.wait(timeout=30)
            inst.call("phone_set_roaming", on=True)

    worker = threading.Thread(target=hold_a_user_block)
    worker.start()
    assert entered.wait(timeout=30)
    inst.call("post_notice", text="mine")  # this thread is not in the block: the agent's
    release.set()
    worker.join(timeout=30)
    assert sorted((call.tool, call.actor) for call in inst.call_log()) == [
        ("phone_set_roaming", "user"),
        ("post_notice", "agent"),
    ]
    assert inst.calls.acting == {}, "the block leaves nothing behind"


@pytest.mark.parametrize("actor", ["users", "Event:x", "event:", "event:Has Space", "", 7, None])
def test_an_actor_that_is_none_of_the_four_is_refused(inst: seahaven.Instance, actor: Any) -> None:
    with (
        pytest.raises(seahaven.WorldBug, match="none of agent, user, setup or event:<name>"),
        inst.acting_as(actor),
    ):
        pass
    assert inst.calls.acting == {}


def test_world_code_cannot_change_who_acts() -> None:
    desk = make_desk()

    @desk.tool
    def pretend(ctx: seahaven.Ctx, instance_box: list[Any]) -> None:
        """Try to act as the user from inside a call."""
        with instance_box[0].acting_as("user"):
            pass

    with desk.instance(setup_sql=SEED_ROWS) as inst:
        box: list[Any] = [inst]
        with pytest.raises(seahaven.WorldBug, match="acting_as\\(\\) cannot start inside a call"):
            inst.call("pretend", instance_box=box)
        with (
            inst.bulk(),
            pytest.raises(seahaven.WorldBug, match="cannot start inside"),
            inst.acting_as("user"),
        ):
            pass


def test_a_snapshot_keeps_every_actor(inst: seahaven.Instance) -> None:
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    restored = inst.snapshot().restore()
    try:
        assert [record.actor for record in restored.change_log()] == ["user"]
        assert [call.actor for call in restored.call_log()] == ["user"]
        restored.call("post_notice", text="after")
        assert [record.actor for record in restored.change_log()] == ["user", "agent"]
    finally:
        restored.destroy()


def test_the_fold_lists_everyone_who_touched_a_row(inst: seahaven.Instance) -> None:
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    inst.call("phone_set_roaming", on=False)  # the agent turns it back off...
    with inst.acting_as("event:carrier"):
        inst.call("phone_set_roaming", on=True)  # ...and the carrier on again
    inst.call("post_notice", text="only mine")
    changes = fold(inst.change_log())
    roaming = changes.of_row("settings", {"name": "roaming"}, "handset")
    assert roaming is not None
    assert roaming.actors == ("user", "agent", "event:carrier")
    assert roaming.by("user") and not roaming.by("setup")
    assert roaming.to_dict()["actors"] == ["user", "agent", "event:carrier"]
    [notice] = changes.in_table("notices")
    assert notice.actors == ("agent",)
    # The same fold from the document's records.
    assert fold(inst.state()["state"]["db"]["log"]).to_list() == changes.to_list()


def test_a_row_that_came_back_leaves_no_change_whoever_touched_it(
    inst: seahaven.Instance,
) -> None:
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    inst.call("phone_set_roaming", on=False)
    assert not fold(inst.change_log())


def test_records_saved_before_actors_fold_as_the_agents_and_setups() -> None:
    saved = [
        {"i": 0, "world": "main", "table": "t", "op": "insert", "key": {"id": 1}, "before": None,
         "after": {"id": 1}},
        {"i": None, "world": "main", "table": "t", "op": "insert", "key": {"id": 2},
         "before": None, "after": {"id": 2}},
    ]  # fmt: skip
    assert [change.actors for change in fold(saved)] == [("agent",), ("setup",)]
