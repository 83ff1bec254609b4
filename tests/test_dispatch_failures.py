"""Whatever a call raises, wherever between logging it and ending it, the instance stays whole.

Between the moment dispatch logs a call and the moment it ends the call's work,
anything may be raised: an argument nested too deep for Python's stack,
``MemoryError``, Ctrl-C. Each test here raises at one of those steps and then
checks that the instance is not left inside the call (``state()`` answers), that
the change log shows exactly the rows the stores hold, and that the next call's
writes are recorded.
"""

from __future__ import annotations

from typing import Any

import apsw
import pytest
from sample_worlds import memo_world

import seahaven
import seahaven.calls.activation
import seahaven.calls.dispatch
from seahaven.stores.arguments import MAX_ARGUMENT_DEPTH
from seahaven.stores.capture import Capture


def world_with(middleware: bool) -> seahaven.World:
    """A memo world whose ``jot`` takes any JSON ``meta``; with or without a middleware."""
    world = memo_world("failures", state_format="seahaven.state+calls/1")
    if middleware:

        @world.middleware
        def passing(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
            return next_(ctx, call)

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str, meta: dict[str, Any] | None = None) -> str:
        """File one memo; ``meta`` is any JSON object, and only its depth matters here."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, "g")
        return id

    return world


def nested(depth: int) -> list[Any]:
    """A list holding a list ... ``depth`` lists in all, the innermost empty."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def logged_ids(inst: seahaven.Instance) -> list[tuple[int | None, str]]:
    """Each change-log record's call ordinal and memo id."""
    return [(record.i, record.key["id"]) for record in inst.change_log()]


def stored_ids(inst: seahaven.Instance) -> list[str]:
    """The memo ids the root store holds, read on the instance's own connection."""
    return [row["id"] for row in inst.db.rows("SELECT id FROM memos ORDER BY id")]


def assert_whole(inst: seahaven.Instance, ordinal: int) -> None:
    """The instance is out of the call, its log matches its rows, and call ``ordinal`` records."""
    assert inst.activation is None
    document = inst.state()
    assert document["call_count"] == ordinal
    assert sorted(key for _, key in logged_ids(inst)) == stored_ids(inst)
    inst.call("jot", id=f"after-{ordinal}")
    assert logged_ids(inst)[-1] == (ordinal, f"after-{ordinal}")
    assert inst.state()["call_count"] == ordinal + 1


# --- an argument nested too deep ----------------------------------------------------------------


@pytest.mark.parametrize("middleware", [False, True], ids=["bare", "middleware"])
@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH, 600, 900, 5000])
def test_an_argument_nested_past_the_limit_is_refused_and_the_instance_goes_on(
    middleware: bool, depth: int
) -> None:
    with world_with(middleware).instance() as inst:
        inst.call("jot", id="first")
        with pytest.raises(seahaven.ArgumentError) as refused:
            inst.call("jot", id="deep", meta={"k": nested(depth)})
        assert refused.value.error_type == "invalid_args"
        assert refused.value.code == "invalid_arguments"
        assert [(v["loc"], v["type"]) for v in refused.value.violations] == [(["meta"], "too_deep")]
        assert str(MAX_ARGUMENT_DEPTH) in refused.value.message
        calls = inst.state()["state"]["calls"]
        assert calls[1]["error"] == refused.value.message
        assert "seahaven_cut" in calls[1]["arguments"]["meta"]
        assert_whole(inst, 2)
        assert stored_ids(inst) == ["after-2", "first"]


def test_an_argument_exactly_at_the_limit_is_taken() -> None:
    # meta is one object, "k" holds the rest: MAX_ARGUMENT_DEPTH containers in all.
    with world_with(False).instance() as inst:
        inst.call("jot", id="edge", meta={"k": nested(MAX_ARGUMENT_DEPTH - 1)})
        assert logged_ids(inst) == [(0, "edge")]
        kept = inst.call_log()[0].arguments["meta"]
        assert kept == {"k": nested(MAX_ARGUMENT_DEPTH - 1)}


def test_an_argument_that_holds_itself_is_refused() -> None:
    endless: dict[str, Any] = {}
    endless["again"] = endless
    with world_with(False).instance() as inst:
        with pytest.raises(seahaven.ArgumentError, match="nests more than"):
            inst.call("jot", id="loop", meta=endless)
        assert_whole(inst, 1)


def test_a_deep_argument_inside_bulk_leaves_the_block_recording() -> None:
    with world_with(False).instance() as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('before', 'g')")
            with pytest.raises(seahaven.ArgumentError):
                inst.call("jot", id="deep", meta={"k": nested(700)})
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('later', 'g')")
        assert logged_ids(inst) == [(None, "before"), (None, "later")]
        assert_whole(inst, 1)


# --- anything raised at any step ----------------------------------------------------------------

RAISED = [MemoryError, KeyboardInterrupt, RecursionError]


@pytest.mark.parametrize("raised", RAISED, ids=lambda kind: kind.__name__)
def test_a_failure_making_the_call_record_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException]
) -> None:
    with world_with(False).instance() as inst:
        real = seahaven.calls.dispatch.CallRecord

        def failing(tool: str, arguments: Any, actor: str = "agent") -> seahaven.CallRecord:
            raise raised()

        monkeypatch.setattr(seahaven.calls.dispatch, "CallRecord", failing)
        with pytest.raises(raised):
            inst.call("jot", id="never")
        monkeypatch.setattr(seahaven.calls.dispatch, "CallRecord", real)
        assert inst.call_count == 0
        assert_whole(inst, 0)


@pytest.mark.parametrize("middleware", [False, True], ids=["bare", "middleware"])
@pytest.mark.parametrize("raised", RAISED, ids=lambda kind: kind.__name__)
def test_a_failure_opening_the_change_log_session_ends_the_call(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException], middleware: bool
) -> None:
    with world_with(middleware).instance() as inst:
        real = seahaven.calls.activation.Activation.touch

        def failing(self: seahaven.calls.activation.Activation, runtime: Any) -> None:
            raise raised()

        monkeypatch.setattr(seahaven.calls.activation.Activation, "touch", failing)
        with pytest.raises(raised):
            inst.call("jot", id="never")
        monkeypatch.setattr(seahaven.calls.activation.Activation, "touch", real)
        assert stored_ids(inst) == []
        assert inst.call_log()[0].error is not None
        assert_whole(inst, 1)


@pytest.mark.parametrize("raised", RAISED, ids=lambda kind: kind.__name__)
def test_a_failure_rendering_the_records_takes_the_rows_back_out(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException]
) -> None:
    with world_with(False).instance() as inst:
        inst.call("jot", id="kept")
        real = seahaven.calls.activation.render_changes

        def failing(*args: Any) -> Any:
            raise raised()

        monkeypatch.setattr(seahaven.calls.activation, "render_changes", failing)
        # An Exception becomes the framework's WorldBug; Ctrl-C stays Ctrl-C.
        expected = raised if not issubclass(raised, Exception) else seahaven.WorldBug
        with pytest.raises(expected):
            inst.call("jot", id="undone")
        monkeypatch.setattr(seahaven.calls.activation, "render_changes", real)
        assert stored_ids(inst) == ["kept"]
        assert_whole(inst, 2)


@pytest.mark.parametrize("raised", RAISED, ids=lambda kind: kind.__name__)
def test_a_failure_rendering_the_second_store_drops_the_first_stores_records(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException]
) -> None:
    # Records are appended store by store: what the first store's rendering appended
    # goes with the failure of the second's, and both stores' rows are taken back out.
    host = world_with(False)
    host.add_world(memo_world("failures_side"), name="side", tool_allow_list=[])

    @host.tool
    def jot_both(ctx: seahaven.Ctx, id: str) -> str:
        """One memo here and one in the added store."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, "g")
        ctx.worlds.side.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, "g")
        return id

    with host.instance() as inst:
        inst.call("jot_both", id="kept")
        real = seahaven.calls.activation.render_changes
        paths: list[str] = []

        def second_fails(path: str, *args: Any) -> Any:
            paths.append(path)
            if len(paths) == 2:
                raise raised()
            return real(path, *args)

        monkeypatch.setattr(seahaven.calls.activation, "render_changes", second_fails)
        expected = raised if not issubclass(raised, Exception) else seahaven.WorldBug
        with pytest.raises(expected):
            inst.call("jot_both", id="undone")
        monkeypatch.setattr(seahaven.calls.activation, "render_changes", real)
        assert len(paths) == 2
        assert inst.query("SELECT id FROM memos", store="side") == [{"id": "kept"}]
        assert stored_ids(inst) == ["kept"]
        logged = [(record.i, record.world, record.key["id"]) for record in inst.change_log()]
        assert logged == [(0, "main", "kept"), (0, "side", "kept")]
        assert inst.activation is None and inst.state()["call_count"] == 2
        inst.call("jot_both", id="after")
        logged = [(record.i, record.world, record.key["id"]) for record in inst.change_log()]
        assert logged[2:] == [(2, "main", "after"), (2, "side", "after")]


def _unappliable(self: Any) -> None:
    """Stands in for ``Capture.undo``: fails to put the rows back, as a full disk would."""
    raise apsw.FullError("database or disk is full")


@pytest.mark.usefixtures("on_disk")
def test_rows_that_can_be_neither_logged_nor_undone_make_the_instance_refuse_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = world_with(False).instance()

    def failing(*args: Any) -> Any:
        raise MemoryError()

    monkeypatch.setattr(seahaven.calls.activation, "render_changes", failing)
    monkeypatch.setattr(Capture, "undo", _unappliable)
    with pytest.raises(seahaven.WorldBug, match="refuses further use: destroy it"):
        inst.call("jot", id="stuck")
    monkeypatch.undo()
    assert inst.activation is None
    # Its document would no longer be true, so none is given, and no call runs.
    for use in (inst.state, lambda: inst.call("jot", id="next"), inst.inspect):
        with pytest.raises(seahaven.WorldBug, match="no longer matches its state document"):
            use()
    directory = inst.directory
    inst.destroy()
    assert not directory.exists()


def test_a_block_that_cannot_reopen_its_session_keeps_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with world_with(False).instance() as inst:
        real = seahaven.calls.activation.Activation.touch
        touched: list[Any] = []

        def failing_on_reopen(self: seahaven.calls.activation.Activation, runtime: Any) -> None:
            # The call's own session opens; reopening the block's afterwards fails.
            if touched:
                raise MemoryError()
            touched.append(runtime)
            real(self, runtime)

        with (
            pytest.raises(seahaven.WorldBug, match="none of it was kept"),
            inst.bulk() as ctx,
        ):
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('before', 'g')")
            monkeypatch.setattr(seahaven.calls.activation.Activation, "touch", failing_on_reopen)
            with pytest.raises(MemoryError):
                inst.call("jot", id="inside")
            monkeypatch.setattr(seahaven.calls.activation.Activation, "touch", real)
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('later', 'g')")
        assert stored_ids(inst) == []
        assert logged_ids(inst) == []
        assert_whole(inst, 1)
