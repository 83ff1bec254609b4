"""``sandbox.interruptible()``: another thread stops a statement that would run its whole allowance.

A server runs each piece of a session's work in such a block, so that a client
going away, or the server stopping, ends a runaway ``setup_sql`` at once.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sample_worlds import memo_world

import seahaven
from seahaven import sandbox

ENDLESS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "INSERT INTO memos (id, gist) SELECT 'm', CAST(count(*) AS TEXT) FROM c"
)
# Long enough for SQLite to look at the progress handler many times, and then done.
FINITE = ENDLESS.replace("FROM c)", "FROM c WHERE x < 200000)")


def start_endless_reset(world: seahaven.World) -> dict[str, Any]:
    """Make an instance whose setup_sql never ends, on a thread; what it met lands in the dict."""
    outcome: dict[str, Any] = {"started": threading.Event()}

    def run() -> None:
        with sandbox.interruptible() as ident:
            outcome["ident"] = ident
            outcome["started"].set()
            try:
                world.instance(setup_sql=ENDLESS)
            except BaseException as error:
                outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    outcome["thread"] = thread
    assert outcome["started"].wait(10)
    return outcome


def test_an_interrupted_setup_sql_fails_its_reset_and_leaves_nothing(tmp_path: Path) -> None:
    world = memo_world(work_dir=tmp_path / "work")
    outcome = start_endless_reset(world)
    sandbox.interrupt_thread(outcome["ident"])
    # Well inside the 30 seconds setup_sql is allowed: only the interruption can end it.
    outcome["thread"].join(timeout=sandbox.SETUP_SQL_SECONDS / 2)
    assert not outcome["thread"].is_alive()
    assert isinstance(outcome["error"], seahaven.WorldBug)
    assert "setup_sql" in str(outcome["error"])
    assert not any(path.is_dir() for path in (tmp_path / "work").rglob("inst-*"))


def test_an_interruption_outside_a_block_is_not_kept(tmp_path: Path) -> None:
    world = memo_world(work_dir=tmp_path / "work")
    ready, go = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def run() -> None:
        outcome["ident"] = threading.get_ident()
        ready.set()
        go.wait(30)
        with sandbox.interruptible():
            inst = world.instance(setup_sql=FINITE)
            outcome["rows"] = inst.db.one("SELECT gist FROM memos")
            inst.destroy()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    # The thread is in no block yet: nothing it runs later is stopped by this.
    sandbox.interrupt_thread(outcome["ident"])
    go.set()
    thread.join(timeout=60)
    assert outcome["rows"] == {"gist": "200000"}
