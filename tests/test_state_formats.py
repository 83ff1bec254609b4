"""State formats: the three built-ins, a world's own, and which one an instance answers in."""

from pathlib import Path
from typing import Any

import pytest
from sample_worlds import MEMOS, cafe_world, memo_world, till_world

import seahaven

BUILT_IN = ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]


def make_world(state_format: str = "seahaven.state/1", **options: Any) -> seahaven.World:
    """A new memo world pinned to ``state_format``; each test registers formats of its own."""
    world = memo_world(state_format=state_format, **options)

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str, gist: str = "-") -> None:
        """File a memo; the gist may be left out."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, gist)

    @world.tool
    def reword(ctx: seahaven.Ctx, id: str, gist: str) -> None:
        """Replace one memo's gist."""
        ctx.db.execute("UPDATE memos SET gist = ? WHERE id = ?", gist, id)

    @world.tool
    def tally(ctx: seahaven.Ctx) -> int:
        """Count the memos, writing nothing."""
        counted = ctx.db.one("SELECT count(*) AS n FROM memos")
        assert counted is not None
        return int(counted["n"])

    @world.tool
    def fail(ctx: seahaven.Ctx) -> None:
        """Always refuse."""
        raise seahaven.ToolError("nope", "not today")

    return world


def log_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The change log a built-in document carries."""
    return list(document["state"]["db"]["log"])


# --- seahaven.state+last_step/1 -------------------------------------------------------------


def test_last_step_holds_only_the_most_recent_calls_records() -> None:
    with make_world().instance(state_format="seahaven.state+last_step/1") as inst:
        assert log_of(inst.state()) == []  # nothing before the first call
        inst.call("jot", id="m1")
        inst.call("jot", id="m2")
        document = inst.state()
        assert document["format"] == "seahaven.state+last_step/1"
        assert [(entry["i"], entry["key"]) for entry in log_of(document)] == [(1, {"id": "m2"})]
        inst.call("tally")
        # The last call read only, so the last step changed nothing.
        assert log_of(inst.state()) == []
        assert inst.state()["call_count"] == 3


def test_last_step_two_reads_between_calls_answer_the_same_document() -> None:
    # A fixed clock: under a running one the two documents' `now` may differ by a millisecond.
    with make_world().instance(
        state_format="seahaven.state+last_step/1", clock_mode="fixed"
    ) as inst:
        inst.call("jot", id="m1")
        first, second = inst.state(), inst.state()
        assert first == second
        assert len(log_of(first)) == 1


def test_last_step_documents_concatenate_into_the_whole_log() -> None:
    with make_world().instance(state_format="seahaven.state+last_step/1") as inst:
        steps = []
        for step in range(4):
            inst.call("jot", id=f"m{step}")
            inst.call("reword", id=f"m{step // 2}", gist=f"edited {step}")
            steps.append(log_of(inst.state()))
            # An unread step shows as a jump in call_count.
        assert inst.state()["call_count"] == 8
        whole = log_of(inst.state(format="seahaven.state/1"))
        assert [entry["i"] for entry in whole] == [0, 1, 2, 3, 4, 5, 6, 7]
        assert [entry for step in steps for entry in step] == [
            entry for entry in whole if entry["i"] % 2 == 1
        ]


def test_last_step_never_holds_a_bulk_write() -> None:
    with make_world().instance(state_format="seahaven.state+last_step/1") as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('b0', 'bulk')")
        assert log_of(inst.state()) == []  # a write before the first call
        inst.call("jot", id="m1")
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('b1', 'bulk')")
            inst.call("jot", id="m2")
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('b2', 'bulk')")
        assert [(entry["i"], entry["key"]["id"]) for entry in log_of(inst.state())] == [(1, "m2")]
        # The bulk writes are all in the whole log.
        whole = log_of(inst.state(format="seahaven.state/1"))
        assert [(entry["i"], entry["key"]["id"]) for entry in whole] == [
            (None, "b0"),
            (0, "m1"),
            (None, "b1"),
            (1, "m2"),
            (None, "b2"),
        ]


# --- seahaven.state+calls/1 ----------------------------------------------------------------


def test_calls_format_is_the_whole_log_plus_the_call_log() -> None:
    with make_world().instance(state_format="seahaven.state+calls/1") as inst:
        inst.call("jot", id="m1", gist="tea")
        with pytest.raises(seahaven.ToolError):
            inst.call("fail")
        inst.call("reword", id="m1", gist="green tea")
        document = inst.state()
        assert document["format"] == "seahaven.state+calls/1"
        assert list(document["state"]) == ["db", "calls"]
        assert document["state"]["db"] == inst.state(format="seahaven.state/1")["state"]["db"]
        assert document["state"]["calls"] == [
            {
                "tool": "jot",
                "arguments": {"id": "m1", "gist": "tea"},
                "error": None,
                "actor": "agent",
            },
            {"tool": "fail", "arguments": {}, "error": "not today", "actor": "agent"},
            {
                "tool": "reword",
                "arguments": {"id": "m1", "gist": "green tea"},
                "error": None,
                "actor": "agent",
            },
        ]
        for entry in log_of(document):
            assert document["state"]["calls"][entry["i"]]["tool"] in ("jot", "reword")


def test_the_calls_format_answers_on_an_instance_pinned_to_another() -> None:
    with make_world().instance() as inst:
        inst.call("tally")
        calls = inst.state(format="seahaven.state+calls/1")["state"]["calls"]
        assert calls == [{"tool": "tally", "arguments": {}, "error": None, "actor": "agent"}]


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_formats_answer_an_empty_state_for_no_instance(name: str) -> None:
    world = make_world()
    state = world.resolve_state_format(name)(world, None)
    expected: dict[str, Any] = {"db": {"log": []}}
    if name == "seahaven.state+calls/1":
        expected["calls"] = []
    assert state == expected


# --- registering a format -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["touched", "touched/", "touched/0", "touched/v1", "touched/1/2", "/1", "touched/01", ""],
)
def test_a_format_name_must_be_family_slash_major(name: str) -> None:
    world = make_world()
    with pytest.raises(seahaven.WorldBug, match="<family>/<major>"):
        world.state_format(name)
    with pytest.raises(seahaven.WorldBug, match="<family>/<major>"):
        make_world(state_format=name)


def test_the_seahaven_prefix_is_reserved() -> None:
    world = make_world()
    with pytest.raises(seahaven.WorldBug, match="reserved"):
        world.state_format("seahaven.mine/1")
    with pytest.raises(seahaven.WorldBug, match="not a format the framework publishes"):
        make_world(state_format="seahaven.state/2")


def test_a_duplicate_format_name_is_refused() -> None:
    world = make_world()

    @world.state_format("memos.summary/1")
    def summary(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match="already registers"):
        world.state_format("memos.summary/1")
    # A new major is a new name, and welcome.
    world.state_format("memos.summary/2")(summary)
    assert world.state_formats == ("memos.summary/1", "memos.summary/2")


def test_a_formatter_must_take_the_world_and_the_instance() -> None:
    world = make_world()
    with pytest.raises(seahaven.WorldBug, match=r"\(world, instance\)"):

        @world.state_format("memos.lonely/1")
        def lonely(instance: seahaven.Instance) -> dict[str, Any]:
            return {}


def test_a_world_without_a_pin_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="pins no state format"):
        seahaven.World(name="memos", version="1.0.0", schema=MEMOS)


def test_a_registered_format_produces_state_inside_the_frameworks_envelope() -> None:
    world = make_world(state_format="memos.changed/1")

    @world.state_format("memos.changed/1")
    def changed_rows(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        if instance is None:
            return {"touched": []}
        rows = {(record.world, str(record.key["id"])) for record in instance.change_log()}
        return {"touched": [{"world": node, "id": key} for node, key in sorted(rows)]}

    with world.instance() as inst:
        inst.call("jot", id="m2")
        inst.call("jot", id="m1")
        inst.call("reword", id="m1", gist="again")
        document = inst.state()
        assert inst.state_format == "memos.changed/1"
        assert world.pinned_state_format == "memos.changed/1"
    assert document["format"] == "memos.changed/1"
    assert document["seahaven_version"] == seahaven.__version__
    assert document["call_count"] == 3
    assert document["state"] == {
        "touched": [{"world": "main", "id": "m1"}, {"world": "main", "id": "m2"}]
    }
    assert changed_rows(world, None) == {"touched": []}


def test_an_unregistered_pin_is_accepted_by_world_and_refused_by_instance_before_any_file(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    world = make_world(state_format="acme.state/1", work_dir=work)
    with pytest.raises(seahaven.WorldBug, match=r"no state format 'acme\.state/1'"):
        world.instance()
    assert not work.exists() or list(work.iterdir()) == []

    # Registering it later, as a world module does below its World(...) line, is enough.
    @world.state_format("acme.state/1")
    def acme(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"acme": True}

    with world.instance() as inst:
        assert inst.state()["state"] == {"acme": True}


def test_an_unregistered_override_is_refused_before_any_file(tmp_path: Path) -> None:
    work = tmp_path / "work"
    world = make_world(work_dir=work)
    for name in ("acme.other/1", "not a format"):
        with pytest.raises(seahaven.WorldBug, match="no state format"):
            world.instance(state_format=name)
    assert not work.exists() or list(work.iterdir()) == []


def test_an_override_fixes_the_instances_format_and_the_pin_stays() -> None:
    world = make_world()
    with world.instance(state_format="seahaven.state+calls/1") as inst:
        inst.call("tally")
        assert inst.state_format == "seahaven.state+calls/1"
        assert inst.state()["format"] == "seahaven.state+calls/1"
        assert inst.state(format="seahaven.state/1")["format"] == "seahaven.state/1"
        assert inst.state_format == "seahaven.state+calls/1"
    assert world.pinned_state_format == "seahaven.state/1"
    with world.instance() as plain:
        assert plain.state_format == "seahaven.state/1"


def test_state_format_is_not_a_startup_keyword() -> None:
    world = make_world()
    received: list[dict[str, Any]] = []

    @world.instance_startup
    def everything(ctx: seahaven.Ctx, **keywords: Any) -> None:
        received.append(keywords)

    with world.instance(state_format="seahaven.state+calls/1", startup={"who": "ann"}) as inst:
        assert inst.state()["startup"] == {"who": "ann"}
    assert received == [{"who": "ann"}]


# --- what a formatter may and may not do ----------------------------------------------------


def test_a_formatter_that_raises_is_a_world_bug_naming_the_format() -> None:
    world = make_world()

    @world.state_format("memos.broken/1")
    def broken(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        raise KeyError("no such column")

    with world.instance() as inst:
        with pytest.raises(seahaven.WorldBug, match=r"'memos\.broken/1' raised KeyError") as raised:
            inst.state(format="memos.broken/1")
        assert isinstance(raised.value.__cause__, KeyError)
        # The instance is unharmed: the next read and the next call work.
        inst.call("jot", id="m1")
        assert len(log_of(inst.state())) == 1


@pytest.mark.parametrize(
    ("returned", "message"),
    [(["not", "a", "dict"], "must return a dict"), ({"when": object()}, "JSON cannot carry")],
)
def test_a_formatter_must_return_a_json_dict(returned: Any, message: str) -> None:
    world = make_world()

    @world.state_format("memos.odd/1")
    def odd(world: seahaven.World, instance: seahaven.Instance | None) -> Any:
        return returned

    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match=message):
        inst.state(format="memos.odd/1")


@pytest.mark.parametrize("how", ["db", "call", "bulk"])
def test_a_formatter_that_writes_is_a_world_bug(how: str) -> None:
    world = make_world()

    @world.state_format("memos.writer/1")
    def writer(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        if how == "db":
            instance.db.execute("INSERT INTO memos (id, gist) VALUES ('sneaky', 'write')")
        elif how == "call":
            instance.call("jot", id="sneaky")
        else:
            with instance.bulk() as ctx:
                ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('sneaky', 'write')")
        return {}

    with world.instance() as inst:
        message = "wrote to the instance" if how == "db" else "formatter may not write"
        with pytest.raises(seahaven.WorldBug, match=message):
            inst.state(format="memos.writer/1")
        # The write was refused, not merely noticed: the store and the logs are as they were.
        assert inst.inspect().rows("SELECT id FROM memos") == []
        assert inst.call_count == 0
        assert inst.change_log() == []
        # And the fence came down with the formatter: calls write again.
        inst.call("jot", id="m1")
        assert [record.key for record in inst.change_log()] == [{"id": "m1"}]


def test_a_formatter_runs_outside_any_transaction_and_may_read_other_formats() -> None:
    world = make_world()
    seen: dict[str, Any] = {}

    @world.state_format("memos.inserts/1")
    def inserts(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        seen["in_transaction"] = instance.db.in_transaction
        base = instance.state(format="seahaven.state+calls/1")["state"]
        base["db"]["log"] = [entry for entry in base["db"]["log"] if entry["op"] == "insert"]
        base["db"]["log"].append({"edited": True})  # the copy is the formatter's to edit
        return base

    with world.instance() as inst:
        inst.call("jot", id="m1")
        inst.call("reword", id="m1", gist="changed")
        state = inst.state(format="memos.inserts/1")["state"]
        assert seen["in_transaction"] is False
        assert [entry.get("op") for entry in state["db"]["log"]] == ["insert", None]
        assert [entry["tool"] for entry in state["calls"]] == ["jot", "reword"]
        # The built-in the formatter edited is untouched for the next reader.
        assert [entry["op"] for entry in log_of(inst.state())] == ["insert", "update"]


def test_registering_a_format_later_reaches_live_instances_and_keeps_the_seal() -> None:
    world = make_world()
    with world.instance() as inst:
        sealed = world.composition()
        inst.call("jot", id="m1")

        @world.state_format("memos.count/1")
        def count(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
            return {"records": 0 if instance is None else len(instance.change_log())}

        assert world.composition() is sealed
        assert inst.state(format="memos.count/1")["state"] == {"records": 1}
        inst.call("jot", id="m2")
        assert inst.state(format="memos.count/1")["state"] == {"records": 2}


# --- the root decides -----------------------------------------------------------------------


def composed() -> tuple[seahaven.World, seahaven.World]:
    """A cafe adding a till that pins a format the till itself registers."""
    till = till_world(state_format="till.journal/1")

    @till.state_format("till.journal/1")
    def journal(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"journal": "what the till would say on its own"}

    return cafe_world(till), till


def test_the_roots_pin_decides_and_an_added_worlds_formats_are_not_reachable() -> None:
    cafe, till = composed()
    with cafe.instance() as inst:
        inst.call("settle_tab", cents=500)
        document = inst.state()
        with pytest.raises(seahaven.WorldBug, match=r"no state format 'till\.journal/1'"):
            inst.state(format="till.journal/1")
    assert document["format"] == "seahaven.state/1"
    assert [(entry["i"], entry["world"], entry["table"]) for entry in log_of(document)] == [
        (0, "main", "tabs"),
        (0, "till", "receipts"),
    ]
    with pytest.raises(seahaven.WorldBug, match=r"no state format 'till\.journal/1'"):
        cafe.instance(state_format="till.journal/1")
    # On its own, the added world is a root, and its pin is what it answers in.
    with till.instance() as alone:
        assert alone.state()["state"] == {"journal": "what the till would say on its own"}


@pytest.mark.parametrize("statement", ["REINDEX", "ANALYZE", "CREATE TEMP TABLE scratch (x)"])
def test_a_formatter_that_changes_the_schema_is_refused_as_the_sandbox_classifies_it(
    statement: str,
) -> None:
    # The fence takes its write actions from seahaven.sandbox.WRITE_ACTIONS: every schema
    # change counts, the temporary schema's included. REINDEX used to get through.
    world = make_world()

    @world.state_format("memos.schema/1")
    def schema_changer(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        instance.db.execute(statement)
        return {}

    with world.instance() as inst:
        inst.call("jot", id="m1")
        with pytest.raises(seahaven.WorldBug, match="wrote to the instance"):
            inst.state(format="memos.schema/1")
        inst.call("jot", id="m2")
        assert [record.key for record in inst.change_log()] == [{"id": "m1"}, {"id": "m2"}]
