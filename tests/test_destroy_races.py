"""``destroy()`` and ``interrupt()`` racing work on other threads.

``destroy()`` always removes the directory, and what it stops gets a ``WorldBug``;
``interrupt()`` stops the statement running now with a ``DbError`` and leaves the
instance usable. The races are made to happen, not hoped for: the other thread is held
exactly where it would lose the race (waiting for the instance lock, or inside a
running query) before the main thread acts. A statement that never ends is stopped in a
``finally`` whatever the test found, so a failing test still ends.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import apsw
import pytest
from sample_worlds import memo_world

import seahaven
import seahaven.calls.concurrency

SCHEMA = "CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;"
# Runs for many seconds unless something stops it.
LONG_QUERY = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300000000) "
    "SELECT count(*) AS n FROM c"
)


def make_world(tmp_path: Path) -> seahaven.World:
    return memo_world("raced", schema=SCHEMA, work_dir=tmp_path / "work")


class ReportingLock:
    """The instance lock, reporting when a thread other than the main one starts to wait."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.waiting = threading.Event()

    def __enter__(self) -> ReportingLock:
        if threading.current_thread() is not threading.main_thread():
            self.waiting.set()
        self.lock.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.lock.release()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return bool(self.lock.acquire(blocking, timeout))

    def release(self) -> None:
        self.lock.release()


class Reader(threading.Thread):
    """Runs ``work`` on a thread of its own and keeps what it raised."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.raised: BaseException | None = None

    def run(self) -> None:
        try:
            self.work()
        except BaseException as error:
            self.raised = error


@pytest.mark.usefixtures("on_disk")
@pytest.mark.parametrize("method", ["inspect", "state"])
def test_a_reader_that_waited_for_the_lock_while_destroy_ran_gets_a_world_bug(
    tmp_path: Path, method: str
) -> None:
    inst = make_world(tmp_path).instance()
    real = inst.calls.lock
    real.acquire()
    try:
        held = ReportingLock(real)
        inst.calls.lock = held  # type: ignore[assignment]
        reader = Reader(getattr(inst, method))
        reader.start()
        assert held.waiting.wait(60), "the reader never reached the lock"
        inst.destroy()
    finally:
        real.release()
    reader.join(60)
    assert isinstance(reader.raised, seahaven.WorldBug), reader.raised
    assert "destroyed" in str(reader.raised)
    assert not inst.directory.exists()


def wait_until_busy(conn: apsw.Connection) -> None:
    """Return once another thread is inside a statement on ``conn``."""
    for _ in range(10_000_000):
        try:
            conn.total_changes()
        except apsw.ThreadingViolationError:
            return
    raise AssertionError("the reader never started its query")


@pytest.mark.usefixtures("on_disk")
def test_destroy_while_a_reader_is_mid_query_finishes_and_removes_the_directory(
    tmp_path: Path,
) -> None:
    inst = make_world(tmp_path).instance()
    db = inst.inspect()
    directory = inst.directory
    assert any(directory.iterdir())
    reader = Reader(lambda: db.one(LONG_QUERY))
    reader.start()
    wait_until_busy(db.conn)

    inst.destroy()
    reader.join(60)
    assert not reader.is_alive()
    assert not directory.exists()
    assert isinstance(reader.raised, seahaven.WorldBug), reader.raised
    assert "destroyed" in str(reader.raised)
    # Every later use of the reader is the framework's error too.
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        db.rows("SELECT 1")
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.inspect()


@pytest.mark.usefixtures("on_disk")
def test_a_failure_closing_connections_still_removes_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inst = make_world(tmp_path).instance()
    directory = inst.directory

    def broken() -> None:
        raise OSError("the connection could not be closed")

    monkeypatch.setattr(inst, "_close_connections", broken)
    with pytest.raises(OSError):
        inst.destroy()
    assert not directory.exists()


@pytest.mark.usefixtures("on_disk")
def test_a_call_interrupted_while_it_was_finishing_still_lets_the_instance_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ctrl-C can land between two lines of the code that ends a call; the instance must
    # still be destroyable (and its directory removed) from the same thread afterwards.
    import seahaven
    from seahaven.calls.dispatch import Calls

    world = seahaven.World(
        name="interrupted",
        version="1.0.0",
        schema="CREATE TABLE t (id INTEGER PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def touch(ctx: seahaven.Ctx) -> int:
        """Write a row."""
        ctx.db.execute("INSERT INTO t DEFAULT VALUES")
        return 1

    inst = world.instance()
    directory = inst.directory

    def interrupted(self: Calls, activation: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Calls, "finish_call", interrupted)
    with pytest.raises(KeyboardInterrupt):
        inst.call("touch")
    monkeypatch.undo()
    inst.destroy()
    assert not directory.exists()


# --- stopping a statement from another thread ---------------------------------------------------

# Never ends on its own, and nothing in world code's own SQL puts a limit on it.
ENDLESS = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) AS n FROM c"
)
# The longest any test here waits for the other thread, well past what the work needs.
PATIENCE = 60


def runaway_world(tmp_path: Path) -> seahaven.World:
    """A memo world whose ``spin`` runs a statement that never ends, and ``jot`` that writes."""
    world = make_world(tmp_path)
    world.tool(seahaven.sql_tools.run_sql(tables=["memos"]))

    @world.tool
    def spin(ctx: seahaven.Ctx) -> int:
        """Count for ever."""
        row = ctx.db.one(ENDLESS)
        return int(row["n"]) if row else 0

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str) -> str:
        """File one memo."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, 'g')", id)
        return id

    return world


def busy_connection(inst: seahaven.Instance) -> apsw.Connection:
    """The root store's connection, once set up, for ``wait_until_busy``."""
    return inst.db.conn


def interrupt_until_done(worker: threading.Thread, interrupt: Callable[[], None]) -> None:
    """Interrupt until ``worker`` ends, at most ``PATIENCE`` seconds.

    An interrupt stops only a statement already running; the worker may still be on
    its way into the endless one when the first arrives, so they keep coming.
    """
    for _ in range(PATIENCE * 20):
        interrupt()
        worker.join(0.05)
        if not worker.is_alive():
            return


def test_a_reader_interrupted_from_another_thread_is_told_so_and_goes_on(tmp_path: Path) -> None:
    with make_world(tmp_path).instance() as inst:
        db = inst.inspect()
        reader = Reader(lambda: db.one(ENDLESS))
        reader.start()
        try:
            wait_until_busy(db.conn)
            interrupt_until_done(reader, db.conn.interrupt)
        finally:
            db.conn.interrupt()
        assert not reader.is_alive()
        assert isinstance(reader.raised, seahaven.DbError), reader.raised
        assert "interrupted" in reader.raised.message
        assert "destroyed" not in reader.raised.message
        assert reader.raised.sqlite_code == apsw.SQLITE_INTERRUPT
        # The reader and the instance carry on.
        assert db.one("SELECT count(*) AS n FROM memos") == {"n": 0}
        assert inst.inspect() is db


def test_interrupt_stops_a_call_and_the_instance_goes_on(tmp_path: Path) -> None:
    with runaway_world(tmp_path).instance() as inst:
        conn = busy_connection(inst)
        caller = Reader(lambda: inst.call("spin"))
        caller.start()
        try:
            wait_until_busy(conn)
            interrupt_until_done(caller, inst.interrupt)
        finally:
            conn.interrupt()
        assert not caller.is_alive()
        assert isinstance(caller.raised, seahaven.DbError), caller.raised
        assert "interrupted" in caller.raised.message
        assert inst.call("jot", id="m1") == "m1"
        assert [record.i for record in inst.change_log()] == [1]
        assert inst.state()["call_count"] == 2


def test_interrupt_stops_a_sql_door_with_the_agents_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seahaven.sandbox, "STATEMENT_SECONDS", 3600.0)
    with runaway_world(tmp_path).instance() as inst:
        conn = busy_connection(inst)
        caller = Reader(lambda: inst.call("run_sql", query=ENDLESS))
        caller.start()
        try:
            wait_until_busy(conn)
            interrupt_until_done(caller, inst.interrupt)
        finally:
            conn.interrupt()
        assert isinstance(caller.raised, seahaven.DbError), caller.raised
        assert caller.raised.message == "the statement was interrupted before it finished"
        assert inst.call("run_sql", query="SELECT 1 AS one")["rows"] == [[1]]


def test_interrupt_stops_a_control_tool_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seahaven.sandbox, "STATEMENT_SECONDS", 3600.0)

    def control(inst: seahaven.Instance, query: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return inst.call("controller_run_sql", query=query)

    with make_world(tmp_path).instance(control_tools=True) as inst:
        control(inst, "SELECT 1")  # opens the control tool's reader
        caller = Reader(lambda: control(inst, ENDLESS))
        caller.start()
        interrupt_until_done(caller, inst.interrupt)
        assert isinstance(caller.raised, seahaven.DbError), caller.raised
        assert caller.raised.message == "the statement was interrupted before it finished"
        assert control(inst, "SELECT count(*) AS n FROM memos")["rows"] == [[0]]


@pytest.mark.usefixtures("on_disk")
def test_destroy_during_a_runaway_call_stops_it_and_returns(tmp_path: Path) -> None:
    inst = runaway_world(tmp_path).instance()
    conn = busy_connection(inst)
    directory = inst.directory
    caller = Reader(lambda: inst.call("spin"))
    caller.start()
    destroyer = Reader(inst.destroy)
    try:
        wait_until_busy(conn)
        destroyer.start()
        destroyer.join(PATIENCE)
        assert not destroyer.is_alive(), "destroy() waited on a statement that never ends"
    finally:
        if destroyer.is_alive() or caller.is_alive():
            conn.interrupt()
        caller.join(PATIENCE)
        destroyer.join(PATIENCE)
    assert destroyer.raised is None, destroyer.raised
    assert isinstance(caller.raised, seahaven.WorldBug), caller.raised
    assert "destroyed" in str(caller.raised)
    assert not directory.exists()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.call("jot", id="late")


def test_interrupt_all_stops_a_runaway_setup_sql_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Far past the test's patience, so only an interrupt can end it in time.
    monkeypatch.setattr(seahaven.sandbox, "SETUP_SQL_SECONDS", 600.0)
    world = make_world(tmp_path)
    endless = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        "INSERT INTO memos (id, gist) SELECT 'm', count(*) FROM c"
    )
    maker = Reader(lambda: world.instance(setup_sql=endless))
    maker.start()
    # The main thread cannot see the setup connection; interrupt until the maker gives up.
    interrupt_until_done(maker, seahaven.calls.concurrency.interrupt_all)
    assert not maker.is_alive(), "setup_sql ran on through interrupt_all()"
    assert isinstance(maker.raised, seahaven.WorldBug), maker.raised
    assert "setup_sql statement 1 of 1" in str(maker.raised)
    assert "interrupted" in str(maker.raised)
    work = tmp_path / "work"
    assert not work.exists() or list(work.iterdir()) == []
