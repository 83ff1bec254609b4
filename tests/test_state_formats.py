"""State formats: the three built-ins, a world's own, and which one an instance answers in."""

from pathlib import Path
from typing import Any

import pytest

import seahaven

SCHEMA = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;"
BUILT_IN = ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]


def make_world(state_format: str = "seahaven.state/1", **options: Any) -> seahaven.World:
    """A fresh notes world pinned to ``state_format``, so each test registers its own formats."""
    world = seahaven.World(
        name="notes", version="1.0.0", schema=SCHEMA, state_format=state_format, **options
    )

    @world.tool
    def add_note(ctx: seahaven.Ctx, id: str, body: str = "note") -> None:
        """Write a note."""
        ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body)

    @world.tool
    def edit_note(ctx: seahaven.Ctx, id: str, body: str) -> None:
        """Change a note's body."""
        ctx.db.execute("UPDATE notes SET body = ? WHERE id = ?", body, id)

    @world.tool
    def count_notes(ctx: seahaven.Ctx) -> int:
        """Read only."""
        row = ctx.db.one("SELECT count(*) AS n FROM notes")
        assert row is not None
        return int(row["n"])

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
        inst.call("add_note", id="n1")
        inst.call("add_note", id="n2")
        document = inst.state()
        assert document["format"] == "seahaven.state+last_step/1"
        assert [(entry["i"], entry["key"]) for entry in log_of(document)] == [(1, {"id": "n2"})]
        inst.call("count_notes")
        # The last call read only, so the last step changed nothing.
        assert log_of(inst.state()) == []
        assert inst.state()["call_count"] == 3


def test_last_step_two_reads_between_calls_answer_the_same_document() -> None:
    with make_world().instance(state_format="seahaven.state+last_step/1") as inst:
        inst.call("add_note", id="n1")
        first, second = inst.state(), inst.state()
        assert first == second
        assert len(log_of(first)) == 1


def test_last_step_documents_concatenate_into_the_whole_log() -> None:
    with make_world().instance(state_format="seahaven.state+last_step/1") as inst:
        steps = []
        for step in range(4):
            inst.call("add_note", id=f"n{step}")
            inst.call("edit_note", id=f"n{step // 2}", body=f"edited {step}")
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
            ctx.db.execute("INSERT INTO notes (id, body) VALUES ('b0', 'bulk')")
        assert log_of(inst.state()) == []  # a write before the first call
        inst.call("add_note", id="n1")
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (id, body) VALUES ('b1', 'bulk')")
            inst.call("add_note", id="n2")
            ctx.db.execute("INSERT INTO notes (id, body) VALUES ('b2', 'bulk')")
        assert [(entry["i"], entry["key"]["id"]) for entry in log_of(inst.state())] == [(1, "n2")]
        # The bulk writes are all in the whole log.
        whole = log_of(inst.state(format="seahaven.state/1"))
        assert [(entry["i"], entry["key"]["id"]) for entry in whole] == [
            (None, "b0"),
            (0, "n1"),
            (None, "b1"),
            (1, "n2"),
            (None, "b2"),
        ]


# --- seahaven.state+calls/1 ----------------------------------------------------------------


def test_calls_format_is_the_whole_log_plus_the_call_log() -> None:
    with make_world().instance(state_format="seahaven.state+calls/1") as inst:
        inst.call("add_note", id="n1", body="milk")
        with pytest.raises(seahaven.ToolError):
            inst.call("fail")
        inst.call("edit_note", id="n1", body="oat milk")
        document = inst.state()
        assert document["format"] == "seahaven.state+calls/1"
        assert list(document["state"]) == ["db", "calls"]
        assert document["state"]["db"] == inst.state(format="seahaven.state/1")["state"]["db"]
        assert document["state"]["calls"] == [
            {"tool": "add_note", "arguments": {"id": "n1", "body": "milk"}, "error": None},
            {"tool": "fail", "arguments": {}, "error": "not today"},
            {"tool": "edit_note", "arguments": {"id": "n1", "body": "oat milk"}, "error": None},
        ]
        for entry in log_of(document):
            assert document["state"]["calls"][entry["i"]]["tool"] in ("add_note", "edit_note")


def test_the_calls_format_answers_on_an_instance_pinned_to_another() -> None:
    with make_world().instance() as inst:
        inst.call("count_notes")
        calls = inst.state(format="seahaven.state+calls/1")["state"]["calls"]
        assert calls == [{"tool": "count_notes", "arguments": {}, "error": None}]


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

    @world.state_format("notes.summary/1")
    def summary(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match="already registers"):
        world.state_format("notes.summary/1")
    # A new major is a new name, and welcome.
    world.state_format("notes.summary/2")(summary)
    assert world.state_formats == ("notes.summary/1", "notes.summary/2")


def test_a_formatter_must_take_the_world_and_the_instance() -> None:
    world = make_world()
    with pytest.raises(seahaven.WorldBug, match=r"\(world, instance\)"):

        @world.state_format("notes.lonely/1")
        def lonely(instance: seahaven.Instance) -> dict[str, Any]:
            return {}


def test_a_world_without_a_pin_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="pins no state format"):
        seahaven.World(name="notes", version="1.0.0", schema=SCHEMA)


def test_a_registered_format_produces_state_inside_the_frameworks_envelope() -> None:
    world = make_world(state_format="notes.touched/1")

    @world.state_format("notes.touched/1")
    def touched(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        if instance is None:
            return {"touched": []}
        rows = {(record.world, str(record.key["id"])) for record in instance.change_log()}
        return {"touched": [{"world": node, "id": key} for node, key in sorted(rows)]}

    with world.instance() as inst:
        inst.call("add_note", id="n2")
        inst.call("add_note", id="n1")
        inst.call("edit_note", id="n1", body="again")
        document = inst.state()
        assert inst.state_format == "notes.touched/1"
        assert world.pinned_state_format == "notes.touched/1"
    assert document["format"] == "notes.touched/1"
    assert document["seahaven_version"] == seahaven.__version__
    assert document["call_count"] == 3
    assert document["state"] == {
        "touched": [{"world": "main", "id": "n1"}, {"world": "main", "id": "n2"}]
    }
    assert touched(world, None) == {"touched": []}


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
        inst.call("count_notes")
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

    @world.state_format("notes.broken/1")
    def broken(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        raise KeyError("no such column")

    with world.instance() as inst:
        with pytest.raises(seahaven.WorldBug, match=r"'notes\.broken/1' raised KeyError") as raised:
            inst.state(format="notes.broken/1")
        assert isinstance(raised.value.__cause__, KeyError)
        # The instance is unharmed: the next read and the next call work.
        inst.call("add_note", id="n1")
        assert len(log_of(inst.state())) == 1


@pytest.mark.parametrize(
    ("returned", "message"),
    [(["not", "a", "dict"], "must return a dict"), ({"when": object()}, "JSON cannot carry")],
)
def test_a_formatter_must_return_a_json_dict(returned: Any, message: str) -> None:
    world = make_world()

    @world.state_format("notes.odd/1")
    def odd(world: seahaven.World, instance: seahaven.Instance | None) -> Any:
        return returned

    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match=message):
        inst.state(format="notes.odd/1")


@pytest.mark.parametrize("how", ["db", "call", "bulk"])
def test_a_formatter_that_writes_is_a_world_bug(how: str) -> None:
    world = make_world()

    @world.state_format("notes.writer/1")
    def writer(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        if how == "db":
            instance.db.execute("INSERT INTO notes (id, body) VALUES ('sneaky', 'write')")
        elif how == "call":
            instance.call("add_note", id="sneaky")
        else:
            with instance.bulk() as ctx:
                ctx.db.execute("INSERT INTO notes (id, body) VALUES ('sneaky', 'write')")
        return {}

    with world.instance() as inst:
        message = "wrote to the instance" if how == "db" else "formatter may not write"
        with pytest.raises(seahaven.WorldBug, match=message):
            inst.state(format="notes.writer/1")
        # The write was refused, not merely noticed: the store and the logs are as they were.
        assert inst.inspect().rows("SELECT id FROM notes") == []
        assert inst.call_count == 0
        assert inst.change_log() == []
        # And the fence came down with the formatter: calls write again.
        inst.call("add_note", id="n1")
        assert [record.key for record in inst.change_log()] == [{"id": "n1"}]


def test_a_formatter_runs_outside_any_transaction_and_may_read_other_formats() -> None:
    world = make_world()
    seen: dict[str, Any] = {}

    @world.state_format("notes.inserts/1")
    def inserts(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        seen["in_transaction"] = instance.db.in_transaction
        base = instance.state(format="seahaven.state+calls/1")["state"]
        base["db"]["log"] = [entry for entry in base["db"]["log"] if entry["op"] == "insert"]
        base["db"]["log"].append({"edited": True})  # the copy is the formatter's to edit
        return base

    with world.instance() as inst:
        inst.call("add_note", id="n1")
        inst.call("edit_note", id="n1", body="changed")
        state = inst.state(format="notes.inserts/1")["state"]
        assert seen["in_transaction"] is False
        assert [entry.get("op") for entry in state["db"]["log"]] == ["insert", None]
        assert [entry["tool"] for entry in state["calls"]] == ["add_note", "edit_note"]
        # The built-in the formatter edited is untouched for the next reader.
        assert [entry["op"] for entry in log_of(inst.state())] == ["insert", "update"]


def test_registering_a_format_later_reaches_live_instances_and_keeps_the_seal() -> None:
    world = make_world()
    with world.instance() as inst:
        sealed = world.composition()
        inst.call("add_note", id="n1")

        @world.state_format("notes.count/1")
        def count(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
            return {"records": 0 if instance is None else len(instance.change_log())}

        assert world.composition() is sealed
        assert inst.state(format="notes.count/1")["state"] == {"records": 1}
        inst.call("add_note", id="n2")
        assert inst.state(format="notes.count/1")["state"] == {"records": 2}


# --- the root decides -----------------------------------------------------------------------


def composed() -> tuple[seahaven.World, seahaven.World]:
    """A shop that adds a payments world pinned to a format of the payments world's own."""
    payments = seahaven.World(
        name="payments",
        version="1.0.0",
        schema="CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="payments.ledger/1",
    )

    @payments.state_format("payments.ledger/1")
    def ledger(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"ledger": "the payments world's own view"}

    @payments.tool
    def create_charge(ctx: seahaven.Ctx, amount: int) -> str:
        """Take a payment."""
        charge = ctx.ids.uuid()
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", charge, amount)
        return charge

    shop = seahaven.World(
        name="shop",
        version="1.0.0",
        schema="CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    shop.add_world(payments, name="payments", tool_prefix="payments_")

    @shop.tool
    def place_order(ctx: seahaven.Ctx, total: int) -> None:
        """Record an order and take the payment."""
        ctx.db.execute("INSERT INTO orders (total) VALUES (?)", total)
        ctx.worlds.payments.call("create_charge", amount=total)

    return shop, payments


def test_the_roots_pin_decides_and_an_added_worlds_formats_are_not_reachable() -> None:
    shop, payments = composed()
    with shop.instance() as inst:
        inst.call("place_order", total=500)
        document = inst.state()
        with pytest.raises(seahaven.WorldBug, match=r"no state format 'payments\.ledger/1'"):
            inst.state(format="payments.ledger/1")
    assert document["format"] == "seahaven.state/1"
    assert [(entry["i"], entry["world"], entry["table"]) for entry in log_of(document)] == [
        (0, "main", "orders"),
        (0, "payments", "charges"),
    ]
    with pytest.raises(seahaven.WorldBug, match=r"no state format 'payments\.ledger/1'"):
        shop.instance(state_format="payments.ledger/1")
    # On its own, the added world is a root, and its pin is what it answers in.
    with payments.instance() as alone:
        assert alone.state()["state"] == {"ledger": "the payments world's own view"}
