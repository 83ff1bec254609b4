"""One instance, many stores: files, one clock, per-node seeds, the root's handles, and bulk()."""

from __future__ import annotations

from typing import Any

import pytest
from composition_worlds import CHARGES, NOW, STAFF, make_payments, make_world

import seahaven

TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
SALTED = (
    "CREATE TABLE tokens (id INTEGER PRIMARY KEY, salt BLOB NOT NULL DEFAULT (randomblob(8)),"
    " roll INTEGER NOT NULL DEFAULT (random())) STRICT;"
)


def _minting(name: str, schema: str = SALTED, **options: Any) -> seahaven.World:
    """A world whose ``mint`` draws three ids and one SQL-defaulted row."""
    world = make_world(name, schema, **options)

    @world.tool
    def mint(ctx: seahaven.Ctx) -> dict[str, object]:
        """Draw from this node's streams."""
        ids = [ctx.ids.uuid() for _ in range(3)]
        ctx.db.execute("INSERT INTO tokens DEFAULT VALUES")
        row = ctx.db.one("SELECT hex(salt) AS salt, roll FROM tokens ORDER BY id DESC LIMIT 1")
        assert row is not None
        return {
            "ids": ids,
            "salt": row["salt"],
            "roll": row["roll"],
            "choice": ctx.ids.random.random(),
        }

    return world


# --- files ----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("on_disk")
def test_one_file_per_node_named_by_its_path() -> None:
    tax = make_world("tax", "CREATE TABLE rates (id TEXT PRIMARY KEY) STRICT;")
    payments = make_payments()
    payments.add_world(tax)
    host = make_world("company", STAFF)
    host.add_world(payments)

    with host.instance() as inst:
        files = sorted(path.name for path in inst.directory.glob("*.sqlite"))
        assert files == ["state.payments.sqlite", "state.payments__tax.sqlite", "state.sqlite"]
        assert inst.state_path == inst.directory / "state.sqlite"


def test_every_file_carries_its_own_worlds_schema() -> None:
    tax = make_world("tax", "CREATE TABLE rates (id TEXT PRIMARY KEY) STRICT;")
    payments = make_payments()
    payments.add_world(tax)
    host = make_world("company", STAFF)
    host.add_world(payments)

    with host.instance() as inst:
        view = inst.inspect()
        query = "SELECT name FROM {}.sqlite_master WHERE type = 'table'"
        assert [row["name"] for row in view.rows(query.format("main"))] == ["staff"]
        assert [row["name"] for row in view.rows(query.format("payments"))] == ["charges"]
        assert [row["name"] for row in view.rows(query.format("payments__tax"))] == ["rates"]


# --- one clock ------------------------------------------------------------------------------------


def _clocked_payments(**options: Any) -> seahaven.World:
    payments = make_world("payments", CHARGES, **options)

    @payments.tool
    def readings(ctx: seahaven.Ctx) -> dict[str, object]:
        """Read the clock from Python and from SQL."""
        row = ctx.db.one("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now")
        assert row is not None
        return {"python": ctx.clock.iso(), "sql": row["now"], "mode": ctx.clock.mode}

    return payments


def test_one_clock_in_the_roots_mode_for_every_node() -> None:
    host = make_world("company", default_clock_mode="fixed")
    # The added world's own default mode is not used.
    host.add_world(_clocked_payments(default_clock_mode="tick"))

    with host.instance(now=NOW) as inst:
        assert inst.clock.mode == "fixed"
        for _ in range(2):
            assert inst.call("readings") == {"python": NOW, "sql": NOW, "mode": "fixed"}


def test_the_callers_clock_mode_covers_every_node() -> None:
    host = make_world("company", default_clock_mode="fixed")
    host.add_world(_clocked_payments(default_clock_mode="fixed"))

    with host.instance(now=NOW, clock_mode="tick") as inst:
        first = inst.call("readings")
        second = inst.call("readings")
    assert first["python"] == first["sql"] == "2026-06-01T09:00:01.000Z"
    assert second["python"] == second["sql"] == "2026-06-01T09:00:02.000Z"


def test_every_context_reads_the_one_clock_object() -> None:
    clocks: list[seahaven.Clock] = []
    payments = make_payments()

    @payments.tool
    def which_clock(ctx: seahaven.Ctx) -> dict[str, str]:
        """Keep the clock this node was given."""
        clocks.append(ctx.clock)
        return {}

    host = make_world("company")
    host.add_world(payments)

    with host.instance() as inst:
        inst.call("which_clock")
        with inst.bulk() as ctx:
            clocks.append(ctx.clock)
        assert all(clock is inst.clock for clock in clocks)


# --- one seed, a stream per node ------------------------------------------------------------------


def test_the_roots_stream_is_the_instance_seed_untouched() -> None:
    company = _minting("company")
    with company.instance(seed=7) as inst:
        alone = inst.call("mint")

    company.add_world(_minting("payments"), tool_prefix="pay_")
    company.add_world(make_world("chat"))
    with company.instance(seed=7) as inst:
        as_root = inst.call("mint")

    assert as_root == alone


def test_adding_a_node_does_not_change_another_nodes_ids() -> None:
    payments = _minting("payments")
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    with host.instance(seed=3) as inst:
        before = inst.call("pay_mint")

    host.add_world(_minting("chat"), tool_prefix="chat_")
    with host.instance(seed=3) as inst:
        inst.call("chat_mint")
        after = inst.call("pay_mint")

    assert after == before


def test_each_node_draws_from_its_own_stream_and_replays() -> None:
    payments = _minting("payments")
    host = _minting("company")
    host.add_world(payments, name="payments", tool_prefix="pay_")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")

    def draw() -> dict[str, Any]:
        with host.instance(seed=11) as inst:
            return {name: inst.call(name) for name in ("mint", "pay_mint", "eu_mint")}

    first, second = draw(), draw()
    assert first == second
    streams = list(first.values())
    for field in ("ids", "salt", "roll", "choice"):
        values = [repr(drawn[field]) for drawn in streams]
        assert len(set(values)) == 3, f"two nodes drew the same {field}"


def test_another_seed_draws_other_values_on_every_node() -> None:
    payments = _minting("payments")
    host = _minting("company")
    host.add_world(payments, tool_prefix="pay_")

    def draw(seed: int) -> list[Any]:
        with host.instance(seed=seed) as inst:
            return [inst.call("mint"), inst.call("pay_mint")]

    for root_a, root_b in zip(draw(1), draw(2), strict=True):
        assert root_a["ids"] != root_b["ids"]
        assert root_a["salt"] != root_b["salt"]


# --- the instance's handles are the root's --------------------------------------------------------


@pytest.mark.usefixtures("on_disk")
def test_inst_db_and_state_path_are_the_roots() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())

    with host.instance() as inst:
        tables = [row["name"] for row in inst.db.rows(TABLES)]
        assert tables == ["staff"]
        assert inst.state_path.name == "state.sqlite"
        with pytest.raises(seahaven.DbError):
            inst.db.rows("SELECT * FROM payments.charges")


def test_the_roots_tool_and_bulk_get_the_roots_context() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())

    @host.tool
    def my_tables(ctx: seahaven.Ctx) -> dict[str, list[str]]:
        """The tables this tool's own store holds."""
        return {"tables": [row["name"] for row in ctx.db.rows(TABLES)]}

    with host.instance() as inst:
        assert inst.call("my_tables") == {"tables": ["staff"]}
        with inst.bulk() as ctx:
            assert ctx.db.rows(TABLES) == [{"name": "staff"}]


def test_isolation_between_nodes_is_structural() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())

    @host.tool
    def peek(ctx: seahaven.Ctx, sql: str) -> dict[str, str]:
        """Try to read a sibling's table through the host's own db."""
        ctx.db.rows(sql)
        return {}

    with host.instance() as inst:
        for sql in ("SELECT * FROM charges", "SELECT * FROM payments.charges"):
            with pytest.raises(seahaven.DbError):
                inst.call("peek", sql=sql)


# --- bulk() ---------------------------------------------------------------------------------------


def test_bulk_opens_one_transaction_per_node_and_commits_them_all() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())
    open_during: list[bool] = []

    with host.instance() as inst:
        with inst.bulk() as ctx:
            child = ctx.worlds.payments
            open_during.extend([ctx.db.in_transaction, child.db.in_transaction])
            ctx.db.execute("INSERT INTO staff (id) VALUES ('ada')")
            child.db.execute("INSERT INTO charges (id, amount) VALUES ('c1', 5)")
        assert open_during == [True, True]
        assert inst.db.in_transaction is False
        view = inst.inspect()
        assert view.rows("SELECT id FROM staff") == [{"id": "ada"}]
        assert view.rows("SELECT id FROM payments.charges") == [{"id": "c1"}]
        assert [(record.i, record.world) for record in inst.change_log()] == [
            (None, "main"),
            (None, "payments"),
        ]


def test_bulk_rolls_every_node_back_when_the_block_raises() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())

    with host.instance() as inst:
        with pytest.raises(RuntimeError, match="generator failed"), inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO staff (id) VALUES ('ada')")
            ctx.worlds.payments.db.execute("INSERT INTO charges (id, amount) VALUES ('c1', 5)")
            raise RuntimeError("generator failed")
        view = inst.inspect()
        assert view.rows("SELECT id FROM staff") == []
        assert view.rows("SELECT id FROM payments.charges") == []
        assert inst.change_log() == []


def test_a_failed_commit_keeps_the_nodes_committed_before_it_and_the_root_commits_last() -> None:
    ledger = make_world(
        "ledger",
        "CREATE TABLE accounts (id TEXT PRIMARY KEY) STRICT;"
        "CREATE TABLE entries (id TEXT PRIMARY KEY, account_id TEXT NOT NULL"
        " REFERENCES accounts (id) DEFERRABLE INITIALLY DEFERRED) STRICT;",
    )
    host = make_world("company", STAFF)
    host.add_world(make_payments())
    host.add_world(ledger)

    with host.instance() as inst:
        with pytest.raises(seahaven.DbError), inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO staff (id) VALUES ('ada')")
            ctx.worlds.payments.db.execute("INSERT INTO charges (id, amount) VALUES ('c1', 5)")
            ctx.worlds.ledger.db.execute("INSERT INTO entries (id, account_id) VALUES ('e', 'x')")
        view = inst.inspect()
        # payments committed before the ledger failed; the root, last, never did.
        assert view.rows("SELECT id FROM payments.charges") == [{"id": "c1"}]
        assert view.rows("SELECT id FROM ledger.entries") == []
        assert view.rows("SELECT id FROM staff") == []
        assert [record.world for record in inst.change_log()] == ["payments"]
        # The instance is still usable afterwards.
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO staff (id) VALUES ('grace')")
        assert view.rows("SELECT id FROM staff") == [{"id": "grace"}]
