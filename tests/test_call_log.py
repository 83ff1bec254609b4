"""The call log: one ``CallRecord`` per dispatched call, in dispatch order."""

import dataclasses
import datetime as dt
import json
import tracemalloc
import warnings
from typing import Any

import pytest
from sample_worlds import add_jot, cafe_world, memo_world, till_world

import seahaven
from seahaven.stores.arguments import (
    CALL_LOG_ARGUMENT_BYTES,
    CUT_KEY,
    MAX_KEPT_ERROR_CHARACTERS,
    REFUSED_ARGUMENT_BYTES,
)
from seahaven.stores.names import CONTROL_TOOL_NAME


class NotFound(seahaven.ToolError):
    """A world's own error, written for the agent."""

    def __init__(self, what: str) -> None:
        super().__init__("not_found", f"{what} not found")


@dataclasses.dataclass
class Opaque:
    """An argument JSON cannot carry as it is."""

    label: str


world = memo_world("calls", state_format="seahaven.state+calls/1")
mutated_by_middleware: list[str] = []


@world.middleware
def scribble(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
    # A careless middleware that edits the dict it was handed, at two depths.
    if call.name == "tag":
        call.arguments["labels"]["added_by_middleware"] = True
        call.arguments["extra"] = "middleware"
        mutated_by_middleware.append(call.name)
    return next_(ctx, call)


jot = add_jot(world)


@world.tool
def read_memo(ctx: seahaven.Ctx, id: str) -> dict[str, Any]:
    """Answer one memo, or raise the world's own not-found error."""
    found = ctx.db.one("SELECT id, gist FROM memos WHERE id = ?", id)
    if found is None:
        raise NotFound(f"memo {id}")
    return found


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
        inst.call("jot", id="m1", gist="tea")
        [record] = inst.call_log()
        assert isinstance(record, seahaven.CallRecord)
        assert record.tool == "jot"
        assert record.arguments == {"id": "m1", "gist": "tea"}
        assert record.error is None
        assert record.tool_error is False
        assert record.to_dict() == {
            "tool": "jot",
            "arguments": {"id": "m1", "gist": "tea"},
            "error": None,
            "actor": "agent",
        }
        assert list(record.to_dict()) == ["tool", "arguments", "error", "actor"]


def test_a_tool_error_is_recorded_and_published_as_written() -> None:
    with world.instance() as inst:
        with pytest.raises(NotFound):
            inst.call("read_memo", id="m9")
        [record] = inst.call_log()
        assert record.error == "memo m9 not found"
        assert record.tool_error is True
        assert record.to_dict()["error"] == "memo m9 not found"


def test_an_argument_error_is_a_dispatched_call_with_the_frameworks_message() -> None:
    with world.instance() as inst:
        with pytest.raises(seahaven.ArgumentError) as raised:
            inst.call("jot", id="m1")
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
            {
                "tool": "misbehave",
                "arguments": {"how": how},
                "error": "internal error",
                "actor": "agent",
            }
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
        inst.call("jot", id="m1", gist="tea")
        with pytest.raises(NotFound):
            inst.call("read_memo", id="m2")
        inst.call("read_memo", id="m1")
        assert [record.tool for record in inst.call_log()] == ["jot", "read_memo", "read_memo"]
        assert [record.arguments.get("id") for record in inst.call_log()] == ["m1", "m2", "m1"]
        assert inst.call_count == 3 == len(inst.call_log())
        # The list is the caller's.
        inst.call_log().clear()
        assert inst.call_count == 3
        # A log record's i is its call's index in the call log.
        [write] = inst.change_log()
        assert inst.call_log()[write.i or 0].tool == "jot"


def test_a_call_by_function_is_recorded_under_its_surface_name() -> None:
    with world.instance() as inst:
        inst.call(jot, "m1", "tea")
        [record] = inst.call_log()
        assert (record.tool, record.arguments) == ("jot", {"id": "m1", "gist": "tea"})


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
        inst.call("jot", id="m1", gist="tea")
        assert [record.tool for record in inst.call_log()] == ["jot"]
        assert inst.state()["call_count"] == 1


# --- composition: the caller's name, one ordinal ------------------------------------------------

cafe = cafe_world(till_world(), prefix="pay_", state_format="seahaven.state+calls/1")


def test_a_composite_records_the_surface_name_and_nested_calls_take_no_ordinal() -> None:
    with cafe.instance() as inst:
        inst.call("settle_tab", cents=500)
        inst.call("pay_ring_up", cents=20)
        assert [record.tool for record in inst.call_log()] == ["settle_tab", "pay_ring_up"]
        assert inst.call_count == 2
        assert [(record.i, record.world) for record in inst.change_log()] == [
            (0, "main"),
            (0, "till"),
            (1, "till"),
        ]


# --- what the log keeps of large arguments -------------------------------------------------------

EIGHT_MIB = 8 * 1024 * 1024


def kept_size(record: seahaven.CallRecord) -> int:
    """The length of what the log keeps of one call, as the document's JSON text."""
    return len(json.dumps(record.to_dict()))


def test_a_refused_call_keeps_a_few_kilobytes_of_its_arguments_however_large() -> None:
    with world.instance() as inst:
        huge = "x" * EIGHT_MIB
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(3):
                with pytest.raises(seahaven.ArgumentError):
                    inst.call("jot", id="m1", gist="tea", note=huge)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        # Three refused 8 MiB frames leave kilobytes behind, not 24 MiB.
        assert held < 200_000, held
        for record in inst.call_log():
            assert record.cut
            assert record.arguments == {
                "id": "m1",
                "gist": "tea",
                "note": {CUT_KEY: f"a string of {EIGHT_MIB} characters"},
            }
            assert kept_size(record) < REFUSED_ARGUMENT_BYTES + 1_000


def test_a_refused_calls_arguments_are_cut_to_the_refused_budget() -> None:
    with world.instance() as inst:
        # Within what a call keeps, but past what a refused one does.
        medium = "y" * (REFUSED_ARGUMENT_BYTES * 2)
        with pytest.raises(seahaven.ArgumentError):
            inst.call("jot", id="m1", gist=medium, note="small")
        [record] = inst.call_log()
        assert record.arguments["id"] == "m1"
        assert record.arguments["gist"] == {CUT_KEY: f"a string of {len(medium)} characters"}
        assert record.arguments["note"] == "small"
        published = inst.state()["state"]["calls"][0]["arguments"]
        assert published == record.arguments


def test_a_successful_call_keeps_its_arguments_whole_up_to_the_log_budget() -> None:
    with world.instance() as inst:
        fits = "z" * (CALL_LOG_ARGUMENT_BYTES // 2)
        inst.call("jot", id="m1", gist=fits)
        past = ["item"] * CALL_LOG_ARGUMENT_BYTES
        inst.call("tag", labels={"a": 1}, items=past)
        whole, cut = inst.call_log()
        assert (whole.arguments, whole.cut) == ({"id": "m1", "gist": fits}, False)
        assert cut.cut
        assert cut.arguments == {
            "labels": {"a": 1},
            "items": {CUT_KEY: f"an array of {len(past)} items"},
        }
        assert kept_size(cut) < CALL_LOG_ARGUMENT_BYTES + 1_000


def test_too_many_argument_names_are_counted_not_kept() -> None:
    with world.instance() as inst:
        many = {f"argument_{n:06d}": n for n in range(20_000)}
        with pytest.raises(seahaven.ArgumentError):
            inst.call("jot", **many)
        [record] = inst.call_log()
        kept = record.arguments
        assert kept[CUT_KEY].endswith("more arguments")
        assert len(kept) < 1_000
        assert len(json.dumps(kept)) < REFUSED_ARGUMENT_BYTES + 1_000


def test_a_huge_error_message_is_kept_cut() -> None:
    with world.instance() as inst:
        huge_id = "k" * 100_000
        with pytest.raises(seahaven.ToolError) as raised:
            inst.call("read_memo", id=huge_id)
        assert len(raised.value.message) > 100_000  # the agent's answer is another matter
        [record] = inst.call_log()
        assert record.error is not None
        assert len(record.error) <= MAX_KEPT_ERROR_CHARACTERS
        assert CUT_KEY in record.error
        assert record.error.startswith(raised.value.message[:100])


def test_an_argument_error_echoes_a_huge_argument_name_cut() -> None:
    with world.instance() as inst:
        name = "k" * 100_000
        with pytest.raises(seahaven.ArgumentError) as raised:
            inst.call("jot", id="m1", gist="g", **{name: 1})
        assert len(raised.value.message) < 1_000
        assert "(100000 characters)" in raised.value.message
        [record] = inst.call_log()
        assert record.error is not None
        assert len(record.error) <= MAX_KEPT_ERROR_CHARACTERS
