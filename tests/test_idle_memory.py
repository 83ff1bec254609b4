"""What an idle instance holds: its page caches given back, a smaller lookaside, no cached script.

``benchmarks/idle_memory.py`` measures the KiB; these check the configuration
that gives them, and that an instance which gave its memory back still answers
exactly as one that did not.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import apsw
from composition_worlds import CHARGES, make_world

import seahaven
from seahaven.stores.db import LOOKASIDE_SLOT_BYTES, LOOKASIDE_SLOTS, run_script


def make_shop(work_dir: Path) -> seahaven.World:
    """A shop adding a payments world: two stores, a startup that writes, a tool on each."""
    payments = make_world("payments", CHARGES)

    @payments.tool
    def create_charge(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
        """Book a charge."""
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", ctx.ids.uuid(), amount)
        return {"amount": amount}

    shop = make_world(
        "shop",
        "CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER) STRICT;",
        work_dir=work_dir,
    )
    shop.add_world(payments)

    @shop.instance_startup
    def open_shop(ctx: seahaven.Ctx) -> None:
        for index in range(200):
            ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", f"o{index}", index)

    @shop.tool
    def checkout(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
        """Take an order and charge for it through the payments world."""
        ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", ctx.ids.uuid(), amount)
        return ctx.worlds.payments.call("create_charge", amount=amount)  # type: ignore[no-any-return]

    @shop.tool
    def order_total(ctx: seahaven.Ctx) -> int:
        """The sum of every order."""
        row = ctx.db.one("SELECT sum(total) AS total FROM orders")
        assert row is not None
        return int(row["total"])

    return shop


def _cache_used(conn: apsw.Connection) -> int:
    return int(conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0])


def test_a_new_instance_holds_no_page_it_could_give_back(tmp_path: Path) -> None:
    for storage in ("disk", "memory"):
        shop = make_shop(tmp_path / storage)
        with shop.instance(seed=1, storage=storage) as inst:
            conns = [runtime.conn for runtime in inst.calls.runtimes]
            assert len(conns) == 2
            held = [_cache_used(conn) for conn in conns]
            for conn in conns:
                conn.release_memory()
            # Releasing again frees nothing: making the instance already gave its pages back.
            assert [_cache_used(conn) for conn in conns] == held, storage


def test_an_instance_that_gave_its_pages_back_answers_the_same(tmp_path: Path) -> None:
    """The same calls on a fresh instance and on one whose caches were warm give the same state."""
    shop = make_shop(tmp_path)
    documents = []
    for warm in (False, True):
        with shop.instance(seed=7, now="2031-03-14T08:30:00Z", clock_mode="fixed") as inst:
            if warm:
                # Read every page of both stores back into their caches, outside any call.
                for runtime in inst.calls.runtimes:
                    runtime.conn.execute("SELECT * FROM sqlite_schema").fetchall()
                runtime = inst.calls.runtimes[0]
                assert runtime.conn.execute("SELECT count(*) FROM orders").fetchall() == [(200,)]
            results = [inst.call("checkout", amount=amount) for amount in (5, 7)]
            results.append(inst.call("order_total"))
            document = inst.state()
            document.pop("episode_id")
            documents.append((results, document))
    fresh, warmed = documents
    assert fresh[0] == [{"amount": 5}, {"amount": 7}, sum(range(200)) + 12]
    assert fresh == warmed


def test_a_script_stays_out_of_the_statement_cache() -> None:
    conn = apsw.Connection(":memory:")
    run_script(conn, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1); PRAGMA foreign_keys=ON")
    stats = conn.cache_stats(include_entries=True)
    assert stats["no_cache"] == 3
    assert stats["entries"] == []


_BYTES_PER_CONNECTION = textwrap.dedent(
    """
    import sys
    import apsw
    if sys.argv[1] == "opened-first":
        early = apsw.Connection(":memory:")
    import seahaven.stores.db
    before = apsw.memory_used()
    conns = [apsw.Connection(":memory:") for _ in range(50)]
    print(seahaven.stores.db.SMALLER_LOOKASIDE, (apsw.memory_used() - before) // 50)
    """
)


def _bytes_per_connection(how: str) -> tuple[bool, int]:
    done = subprocess.run(
        [sys.executable, "-c", _BYTES_PER_CONNECTION, how],
        capture_output=True,
        text=True,
        check=True,
    )
    configured, size = done.stdout.split()
    return configured == "True", int(size)


def test_importing_seahaven_gives_connections_a_smaller_lookaside() -> None:
    configured, smaller = _bytes_per_connection("fresh")
    untouched, default = _bytes_per_connection("opened-first")
    assert configured and not untouched
    # SQLite's default buffer is 1,200 x 40 bytes; seahaven's is LOOKASIDE_SLOTS of them.
    assert default - smaller == LOOKASIDE_SLOT_BYTES * (40 - LOOKASIDE_SLOTS)
