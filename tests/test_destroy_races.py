"""``destroy()`` racing readers on other threads: the directory always goes, readers get WorldBug.

The races are made to happen, not hoped for: a reader is held exactly where it would lose
the race (waiting for the instance lock, or inside a running query) before ``destroy()``
runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import apsw
import pytest
from sample_worlds import memo_world

import seahaven

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


@pytest.mark.parametrize("method", ["inspect", "state"])
def test_a_reader_that_waited_for_the_lock_while_destroy_ran_gets_a_world_bug(
    tmp_path: Path, method: str
) -> None:
    inst = make_world(tmp_path).instance()
    real = inst._lock
    real.acquire()
    try:
        held = ReportingLock(real)
        inst._lock = held  # type: ignore[assignment]
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


def test_a_call_interrupted_while_it_was_finishing_still_lets_the_instance_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ctrl-C can land between two lines of the code that ends a call; the instance must
    # still be destroyable (and its directory removed) from the same thread afterwards.
    import seahaven
    from seahaven.instance import Instance

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

    def interrupted(self: Instance, activation: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Instance, "finish_call", interrupted)
    with pytest.raises(KeyboardInterrupt):
        inst.call("touch")
    monkeypatch.undo()
    inst.destroy()
    assert not directory.exists()
