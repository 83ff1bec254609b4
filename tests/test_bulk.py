"""``inst.bulk()``: loading rows fast, in one transaction, outside any call."""

import threading
from pathlib import Path
from typing import Any

import pytest

import seahaven

ledger = seahaven.World(
    name="ledger",
    version="1.0.0",
    schema="CREATE TABLE postings (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@ledger.tool
def post(ctx: seahaven.Ctx, id: str, amount: int) -> None:
    """Post one amount to the ledger."""
    ctx.db.execute("INSERT INTO postings (id, amount) VALUES (?, ?)", id, amount)


books = seahaven.World(
    name="books",
    version="1.0.0",
    schema="CREATE TABLE books (id TEXT PRIMARY KEY, title TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)
books.add_world(ledger, name="ledger", tool_prefix="ledger_")
reach: dict[str, Any] = {}


@books.tool
def add_book(ctx: seahaven.Ctx, id: str, title: str) -> None:
    """Add a book."""
    ctx.db.execute("INSERT INTO books (id, title) VALUES (?, ?)", id, title)


@books.tool
def open_bulk(ctx: seahaven.Ctx) -> None:
    """Try to open a bulk block from inside a call."""
    with reach["instance"].bulk():
        pass


def ids(inst: seahaven.Instance, table: str = "books") -> list[str]:
    """The committed ids of ``table``, read on the second connection."""
    return [row["id"] for row in inst.inspect().rows(f"SELECT id FROM {table} ORDER BY id")]


def test_bulk_yields_the_roots_context_with_no_call() -> None:
    with books.instance(seed=1) as inst, inst.bulk() as ctx:
        assert isinstance(ctx, seahaven.Ctx)
        assert ctx.call is None
        assert ctx.db is inst.db
        assert ctx.clock is inst.clock
        assert ctx.instance.id == inst.id
        assert ctx.worlds.ledger.db is not ctx.db


def test_bulk_is_one_transaction_per_node_committed_together() -> None:
    with books.instance() as inst:
        with inst.bulk() as ctx:
            assert ctx.db.in_transaction
            ledger_db = ctx.worlds.ledger.db
            assert ledger_db.in_transaction
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b1', 'Moby Dick')")
            ledger_db.execute("INSERT INTO postings (id, amount) VALUES ('e1', 12)")
            # Nothing is visible to a second connection until the block ends.
            assert ids(inst) == []
            assert ids(inst, "ledger.postings") == []
        assert not inst.db.in_transaction
        assert ids(inst) == ["b1"]
        assert ids(inst, "ledger.postings") == ["e1"]
        assert [(record.i, record.world) for record in inst.change_log()] == [
            (None, "ledger"),
            (None, "main"),
        ]


def test_a_block_that_raises_is_rolled_back_and_the_error_passes_through() -> None:
    class Abandon(Exception):
        pass

    with books.instance() as inst:
        with pytest.raises(Abandon), inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b1', 'Moby Dick')")
            ctx.worlds.ledger.db.execute("INSERT INTO postings (id, amount) VALUES ('e1', 12)")
            inst.call("add_book", id="b2", title="Emma")
            raise Abandon
        assert ids(inst) == []
        assert ids(inst, "ledger.postings") == []
        assert inst.change_log() == []
        # The instance is fine afterwards.
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b3', 'Ulysses')")
        assert ids(inst) == ["b3"]


def test_a_failed_call_inside_bulk_undoes_only_itself() -> None:
    with books.instance() as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b1', 'Moby Dick')")
            with pytest.raises(seahaven.DbError):
                inst.call("add_book", id="b1", title="a duplicate key")
            inst.call("add_book", id="b2", title="Emma")
        assert ids(inst) == ["b1", "b2"]
        assert [(record.i, record.key["id"]) for record in inst.change_log()] == [
            (None, "b1"),
            (1, "b2"),
        ]


def test_bulk_holds_the_instance_lock_so_another_threads_call_waits() -> None:
    with books.instance() as inst:
        started, finished = threading.Event(), threading.Event()

        def other_thread() -> None:
            started.set()
            inst.call("add_book", id="b2", title="from the other thread")
            finished.set()

        worker = threading.Thread(target=other_thread)
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b1', 'from the block')")
            worker.start()
            assert started.wait(5)
            assert not finished.wait(0.3)  # queued behind the block
        worker.join(5)
        assert finished.is_set()
        assert [(record.i, record.key["id"]) for record in inst.change_log()] == [
            (None, "b1"),
            (0, "b2"),
        ]


def test_freeze_state_and_a_nested_bulk_are_refused_inside_bulk(tmp_path: Path) -> None:
    frozen = seahaven.World(
        name="frozen_books",
        version="1.0.0",
        schema="CREATE TABLE books (id TEXT PRIMARY KEY, title TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        fixtures_dir=tmp_path / "fixtures",
    )
    with frozen.instance() as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO books (id, title) VALUES ('b1', 'Moby Dick')")
            with pytest.raises(seahaven.WorldBug, match="freeze"):
                inst.freeze("inside", "Should not be written.")
            with pytest.raises(seahaven.WorldBug, match="inside a transaction"):
                inst.state()
            with pytest.raises(seahaven.WorldBug, match="bulk"), inst.bulk():
                pass
            with pytest.raises(seahaven.WorldBug):
                inst.destroy()
        assert not (tmp_path / "fixtures" / "inside").exists()
        # The refusals left the block intact: it committed.
        assert ids(inst) == ["b1"]
        assert inst.freeze("after", "One book.").id == "after"


def test_bulk_is_refused_inside_a_tool_call() -> None:
    with books.instance() as inst:
        reach["instance"] = inst
        try:
            with pytest.raises(seahaven.WorldBug, match="bulk"):
                inst.call("open_bulk")
        finally:
            reach.clear()
        assert inst.call_count == 1


def test_bulk_on_a_destroyed_instance_is_refused() -> None:
    inst = books.instance()
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"), inst.bulk():
        pass


def test_a_handle_from_a_bulk_block_is_stale_after_it() -> None:
    with books.instance() as inst:
        with inst.bulk() as ctx:
            handle = ctx.worlds.ledger
            handle.call("post", id="e1", amount=5)
        with pytest.raises(seahaven.WorldBug, match="after the call"):
            handle.call("post", id="e2", amount=6)
        assert ids(inst, "ledger.postings") == ["e1"]
        # A handle call inside bulk belongs to the block, not to a call of its own.
        assert inst.call_count == 0
        assert [(record.i, record.world) for record in inst.change_log()] == [(None, "ledger")]
