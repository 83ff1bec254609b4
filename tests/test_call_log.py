"""The call log: one ``CallRecord`` per dispatched call, in dispatch order."""

import dataclasses
import datetime as dt
import json
import warnings
from typing import Any

import pytest

import seahaven
from seahaven.names import CONTROL_TOOL_NAME


class NotFound(seahaven.ToolError):
    """A world's own error, written for the agent."""

    def __init__(self, what: str) -> None:
        super().__init__("not_found", f"{what} not found")


@dataclasses.dataclass
class Opaque:
    """An argument JSON cannot carry as it is."""

    label: str


world = seahaven.World(
    name="calls",
    version="1.0.0",
    schema="CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL);",
    state_format="seahaven.state+calls/1",
)
mutated_by_middleware: list[str] = []


@world.middleware
def scribble(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
    # A careless middleware that edits the dict it was handed, at two depths.
    if call.name == "tag":
        call.arguments["labels"]["added_by_middleware"] = True
        call.arguments["extra"] = "middleware"
        mutated_by_middleware.append(call.name)
    return next_(ctx, call)


@world.tool
def add_note(ctx: seahaven.Ctx, id: str, body: str) -> dict[str, str]:
    """Write a note."""
    ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body)
    return {"id": id}


@world.tool
def get_note(ctx: seahaven.Ctx, id: str) -> dict[str, Any]:
    """Read a note, or say it is not there."""
    row = ctx.db.one("SELECT id, body FROM notes WHERE id = ?", id)
    if row is None:
        raise NotFound(f"note {id}")
    return row


@world.tool
def tag(
    ctx: seahaven.Ctx, labels: dict[str, Any], items: list[str], extra: str | None = None
) -> int:
    """Edit the arguments it was given, as a careless tool might."""
    labels["added_by_tool"] = True
    items.append(f"added by tool after {extra}")
    return len(items)


@world.tool
def schedule(ctx: seahaven.Ctx, when: dt.datetime, thing: Opaque) -> str:
    """Take arguments that are Python objects, not JSON."""
    return f"{thing.label} at {when.isoformat()}"


@world.tool
def misbehave(ctx: seahaven.Ctx, how: str) -> None:
    """Fail in one of the ways a world author can get wrong."""
    if how == "world_bug":
        raise seahaven.WorldBug("the author forgot the index")
    raise ValueError("division by a lemon")


def test_a_returned_call_is_recorded_with_its_tool_arguments_and_no_error() -> None:
    with world.instance() as inst:
        inst.call("add_note", id="n1", body="milk")
        [record] = inst.call_log()
        assert isinstance(record, seahaven.CallRecord)
        assert record.tool == "add_note"
        assert record.arguments == {"id": "n1", "body": "milk"}
        assert record.error is None
        assert record.tool_error is False
        assert record.to_dict() == {
            "tool": "add_note",
            "arguments": {"id": "n1", "body": "milk"},
            "error": None,
        }
        assert list(record.to_dict()) == ["tool", "arguments", "error"]


def test_a_tool_error_is_recorded_and_published_as_written() -> None:
    with world.instance() as inst:
        with pytest.raises(NotFound):
            inst.call("get_note", id="n9")
        [record] = inst.call_log()
        assert record.error == "note n9 not found"
        assert record.tool_error is True
        assert record.to_dict()["error"] == "note n9 not found"


def test_an_argument_error_is_a_dispatched_call_with_the_frameworks_message() -> None:
    with world.instance() as inst:
        with pytest.raises(seahaven.ArgumentError) as raised:
            inst.call("add_note", id="n1")
        [record] = inst.call_log()
        assert record.tool_error is True
        assert record.error == raised.value.message
        assert record.to_dict()["error"] == raised.value.message


@pytest.mark.parametrize(
    ("how", "raised", "message"),
    [
        ("world_bug", seahaven.WorldBug, "the author forgot the index"),
        ("python", ValueError, "division by a lemon"),
    ],
)
def test_anything_but_a_tool_error_is_real_in_process_and_hidden_when_published(
    how: str, raised: type[Exception], message: str
) -> None:
    with world.instance() as inst:
        with pytest.raises(raised):
            inst.call("misbehave", how=how)
        [record] = inst.call_log()
        assert record.error == message
        assert record.tool_error is False
        assert record.to_dict()["error"] == "internal error"
        calls = inst.state()["state"]["calls"]
        assert calls == [
            {"tool": "misbehave", "arguments": {"how": how}, "error": "internal error"}
        ]


def test_arguments_are_copied_when_the_call_is_made() -> None:
    labels: dict[str, Any] = {"colour": "red", "nested": {"depth": 2}}
    items = ["a"]
    with world.instance() as inst:
        assert inst.call("tag", labels=labels, items=items) == 2
        # Both the middleware and the tool edited what they were handed.
        assert mutated_by_middleware
        [record] = inst.call_log()
        assert record.arguments == {
            "labels": {"colour": "red", "nested": {"depth": 2}},
            "items": ["a"],
        }
        # The caller editing its own objects afterwards does not reach the record either.
        labels["nested"]["depth"] = 99
        items.append("late")
        assert record.arguments == {
            "labels": {"colour": "red", "nested": {"depth": 2}},
            "items": ["a"],
        }
        assert inst.state()["state"]["calls"][0]["arguments"] == record.arguments


def test_arguments_json_cannot_carry_come_back_as_they_were() -> None:
    when = dt.datetime(2026, 6, 1, 9, 0, tzinfo=dt.UTC)
    thing = Opaque("dentist")
    with world.instance() as inst:
        assert (
            inst.call("schedule", when=when, thing=thing) == "dentist at 2026-06-01T09:00:00+00:00"
        )
        [record] = inst.call_log()
        assert record.arguments["when"] is when
        assert record.arguments["thing"] is thing
        # The published document still needs no encoder.
        json.dumps(inst.state())


def test_call_log_and_call_count_follow_dispatch_order() -> None:
    with world.instance() as inst:
        assert inst.call_log() == []
        assert inst.call_count == 0
        inst.call("add_note", id="n1", body="milk")
        with pytest.raises(NotFound):
            inst.call("get_note", id="n2")
        inst.call("get_note", id="n1")
        assert [record.tool for record in inst.call_log()] == ["add_note", "get_note", "get_note"]
        assert [record.arguments.get("id") for record in inst.call_log()] == ["n1", "n2", "n1"]
        assert inst.call_count == 3 == len(inst.call_log())
        # The list is the caller's.
        inst.call_log().clear()
        assert inst.call_count == 3
        # A log record's i is its call's index in the call log.
        [write] = inst.change_log()
        assert inst.call_log()[write.i or 0].tool == "add_note"


def test_a_call_by_function_is_recorded_under_its_surface_name() -> None:
    with world.instance() as inst:
        inst.call(add_note, "n1", "milk")
        [record] = inst.call_log()
        assert (record.tool, record.arguments) == ("add_note", {"id": "n1", "body": "milk"})


def test_only_dispatched_calls_are_logged() -> None:
    with world.instance(control_tools=True) as inst:
        with pytest.raises(seahaven.UnknownTool):
            inst.call("no_such_tool", x=1)
        inst.tools()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            inst.call(CONTROL_TOOL_NAME, query="SELECT 1 AS one")
        assert inst.call_log() == []
        assert inst.call_count == 0
        inst.call("add_note", id="n1", body="milk")
        assert [record.tool for record in inst.call_log()] == ["add_note"]
        assert inst.state()["call_count"] == 1


# --- composition: the caller's name, one ordinal ------------------------------------------------

payments = seahaven.World(
    name="payments",
    version="1.0.0",
    schema="CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL);",
    state_format="seahaven.state/1",
)


@payments.tool
def create_charge(ctx: seahaven.Ctx, amount: int) -> str:
    """Take a payment."""
    charge = ctx.ids.uuid()
    ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", charge, amount)
    return charge


shop = seahaven.World(
    name="shop",
    version="1.0.0",
    schema="CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL);",
    state_format="seahaven.state+calls/1",
)
shop.add_world(payments, name="payments", tool_prefix="pay_")


@shop.tool
def place_order(ctx: seahaven.Ctx, total: int) -> None:
    """Record an order and take the payment for it through the added world."""
    ctx.db.execute("INSERT INTO orders (total) VALUES (?)", total)
    ctx.worlds.payments.call("create_charge", amount=total)


def test_a_composite_records_the_surface_name_and_nested_calls_take_no_ordinal() -> None:
    with shop.instance() as inst:
        inst.call("place_order", total=500)
        inst.call("pay_create_charge", amount=20)
        assert [record.tool for record in inst.call_log()] == ["place_order", "pay_create_charge"]
        assert inst.call_count == 2
        assert [(record.i, record.world) for record in inst.change_log()] == [
            (0, "main"),
            (0, "payments"),
            (1, "payments"),
        ]
