"""``inst.interrupt()``: another thread stops a long statement, and the instance goes on.

A server that is shutting down interrupts before it destroys, since ``destroy()``
waits for the call in flight. The statement's own time limit is raised out of
reach here, so only the interrupt can end it within the test's bound.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from sample_worlds import add_jot, memo_ids, memo_world

import seahaven
import seahaven.sql_tools
from seahaven import sandbox

# Runs for hours unless something stops it.
RUNAWAY = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
BOUND_SECONDS = 60.0


class Runner(threading.Thread):
    """Runs ``work`` on a thread of its own and keeps what it raised."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.started_work = threading.Event()
        self.raised: BaseException | None = None

    def run(self) -> None:
        self.started_work.set()
        try:
            self.work()
        except BaseException as error:
            self.raised = error


@contextmanager
def running(inst: seahaven.Instance, work: Callable[[], object]) -> Iterator[Runner]:
    """``work`` on a thread of its own; a runner the test left running is stopped after it.

    The stop goes to the raw connections, so a test that fails does not leave its
    statement holding the instance (and the test's end) for an hour.
    """
    runner = Runner(work)
    runner.start()
    try:
        yield runner
    finally:
        while runner.is_alive():
            inst.db.conn.interrupt()
            inst.inspect().conn.interrupt()
            runner.join(0.02)


def interrupt_until_done(inst: seahaven.Instance, runner: Runner) -> None:
    """Interrupt, again and again, until ``runner`` ends (it may start its statement late)."""
    runner.started_work.wait(BOUND_SECONDS)
    for _ in range(int(BOUND_SECONDS / 0.02)):
        inst.interrupt()
        runner.join(0.02)
        if not runner.is_alive():
            return
    pytest.fail("the statement was still running after the interrupts")


@pytest.fixture
def sql_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> seahaven.World:
    monkeypatch.setattr(sandbox, "STATEMENT_SECONDS", 3600.0)
    world = memo_world("interrupted", work_dir=tmp_path / "work")
    add_jot(world)
    world.tool(seahaven.sql_tools.run_sql(tables=["memos"]))
    return world


def test_a_runaway_call_is_interrupted_and_the_instance_goes_on(
    sql_world: seahaven.World,
) -> None:
    with sql_world.instance() as inst:
        inst.call("jot", id="m1", gist="before")
        with running(inst, lambda: inst.call("run_sql", query=RUNAWAY)) as runner:
            interrupt_until_done(inst, runner)

        assert isinstance(runner.raised, seahaven.SeahavenError), runner.raised
        assert "interrupted" in str(runner.raised)
        # The instance is whole: later calls run and are logged, and state reads.
        inst.call("jot", id="m2", gist="after")
        assert memo_ids(inst) == ["m1", "m2"]
        assert inst.call("run_sql", query="SELECT count(*) AS n FROM memos")["rows"] == [[2]]
        assert [record.key for record in inst.change_log()] == [{"id": "m1"}, {"id": "m2"}]
        assert inst.state()["call_count"] == 4


def test_a_reader_is_interrupted_too(sql_world: seahaven.World) -> None:
    with sql_world.instance() as inst:
        reader = inst.inspect()
        with running(inst, lambda: reader.one(RUNAWAY)) as runner:
            interrupt_until_done(inst, runner)
        assert isinstance(runner.raised, seahaven.SeahavenError), runner.raised
        assert reader.one("SELECT count(*) AS n FROM memos") == {"n": 0}


@pytest.mark.usefixtures("on_disk")
def test_an_interrupt_with_nothing_running_or_after_destroy_does_nothing(
    sql_world: seahaven.World,
) -> None:
    inst = sql_world.instance()
    inst.interrupt()
    inst.call("jot", id="m1", gist="unaffected")
    assert memo_ids(inst) == ["m1"]
    directory = inst.directory
    inst.destroy()
    inst.interrupt()
    assert not directory.exists()


def test_an_interrupt_caught_while_sqlite_prepares_reads_as_an_interrupt() -> None:
    # SQLite stops a statement it is still parsing with SQLITE_ERROR and the text
    # "interrupted" (APSW's SQLError); one already running with InterruptError.
    from seahaven.stores.db import INTERRUPTED, db_error, is_interrupt

    while_preparing = apsw.SQLError("interrupted")
    assert is_interrupt(while_preparing)
    assert is_interrupt(apsw.InterruptError("interrupted"))
    assert not is_interrupt(apsw.SQLError('near "SELEC": syntax error'))
    translated = db_error(while_preparing)
    assert isinstance(translated, seahaven.DbError)
    assert translated.message == INTERRUPTED


def test_an_interrupt_stopping_the_change_logs_first_look_fails_the_call_as_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store's first recorded call looks at its schema; an interrupt landing while that
    # statement is prepared (the race tests/test_destroy_races.py runs) fails the call as
    # interrupted, not with a raw SQLite error, and the instance goes on.
    from seahaven.stores import capture

    world = memo_world("interrupted_start", work_dir=tmp_path / "work")
    add_jot(world)
    real = capture._has_virtual_columns
    stopped: list[bool] = []

    def interrupted_once(conn: apsw.Connection) -> bool:
        if not stopped:
            stopped.append(True)
            raise apsw.SQLError("interrupted")
        return real(conn)

    monkeypatch.setattr(capture, "_has_virtual_columns", interrupted_once)
    monkeypatch.setattr(capture, "_BY_SESSION", {})
    with world.instance() as inst:
        with pytest.raises(seahaven.DbError) as raised:
            inst.call("jot", id="m0", gist="stopped")
        assert raised.value.message == "the statement was interrupted before it finished"
        assert inst.call("jot", id="m1", gist="kept") is None
        assert memo_ids(inst) == ["m1"]
