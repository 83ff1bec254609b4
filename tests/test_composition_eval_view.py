"""What an eval sees: one inspection connection, one change log, the report, the state."""

from __future__ import annotations

from pathlib import Path

import pytest
from composition_worlds import CHARGES, STAFF, make_payments, make_world

import seahaven
from seahaven.declaration.composition import NodeReport


def _company_with_tax() -> seahaven.World:
    """company (invoices) -> payments (charges) -> tax (rates)."""
    tax = make_world("tax", "CREATE TABLE rates (id TEXT PRIMARY KEY, percent INTEGER) STRICT;")
    payments = make_payments()
    payments.add_world(tax)
    host = make_world(
        "company", "CREATE TABLE invoices (id TEXT PRIMARY KEY, charge_id TEXT NOT NULL) STRICT;"
    )
    host.add_world(payments, tool_prefix="pay_")

    @host.tool
    def invoice(ctx: seahaven.Ctx, amount: int) -> dict[str, object]:
        """Charge, note the tax rate, and file an invoice."""
        charge = ctx.worlds.payments.call("create_charge", amount=amount)
        ctx.worlds.payments.worlds.tax.db.execute(
            "INSERT INTO rates (id, percent) VALUES (?, 20)", charge["id"]
        )
        ctx.db.execute(
            "INSERT INTO invoices (id, charge_id) VALUES (?, ?)", ctx.ids.uuid(), charge["id"]
        )
        return {"charge_id": charge["id"]}

    return host


# --- inspection -----------------------------------------------------------------------------------


def test_inspection_attaches_every_node_under_its_path() -> None:
    host = _company_with_tax()

    with host.instance() as inst:
        charge_id = inst.call("invoice", amount=500)["charge_id"]
        joined = inst.inspect().one(
            "SELECT charges.amount, rates.percent FROM invoices"
            " JOIN payments.charges AS charges ON charges.id = invoices.charge_id"
            " JOIN payments__tax.rates AS rates ON rates.id = charges.id"
        )
        assert joined == {"amount": 500, "percent": 20}
        schemas = [row["name"] for row in inst.inspect().rows("PRAGMA database_list")]
        assert schemas == ["main", "payments", "payments__tax"]
        assert charge_id


def test_inspection_is_one_connection_kept_and_current() -> None:
    host = _company_with_tax()

    with host.instance() as inst:
        view = inst.inspect()
        assert view.rows("SELECT * FROM payments.charges") == []
        inst.call("pay_create_charge", amount=1)
        assert inst.inspect() is view
        assert view.rows("SELECT amount FROM payments.charges") == [{"amount": 1}]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO invoices (id, charge_id) VALUES ('i', 'c')",
        "INSERT INTO payments.charges (id, amount) VALUES ('c', 1)",
        "DELETE FROM payments__tax.rates",
        "UPDATE payments.charges SET amount = 0",
        "CREATE TABLE payments.extra (id INTEGER PRIMARY KEY)",
        "DROP TABLE payments.charges",
        "ATTACH DATABASE ':memory:' AS scratch",
        "DETACH DATABASE payments",
    ],
)
def test_inspection_denies_writes_attach_and_detach(statement: str) -> None:
    host = _company_with_tax()

    with host.instance() as inst:
        inst.call("invoice", amount=5)
        view = inst.inspect()
        with pytest.raises(seahaven.DbError):
            view.execute(statement)
        schemas = [row["name"] for row in view.rows("PRAGMA database_list")]
        assert schemas == ["main", "payments", "payments__tax"]
        assert view.one("SELECT count(*) AS n FROM payments.charges") == {"n": 1}
        assert view.one("SELECT count(*) AS n FROM invoices") == {"n": 1}


# --- the change log -------------------------------------------------------------------------------


def _two_store_writer() -> seahaven.World:
    payments = make_world(
        "payments",
        CHARGES + "CREATE TABLE cache (id TEXT PRIMARY KEY) STRICT;"
        "CREATE TABLE numbered (n INTEGER PRIMARY KEY) STRICT;",
        untracked_tables=["cache"],
    )
    host = make_world(
        "company",
        STAFF
        + "CREATE TABLE audit (id TEXT PRIMARY KEY) STRICT;"
        + "CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;"
        + "CREATE TABLE cache (id TEXT PRIMARY KEY) STRICT;",
    )
    host.add_world(payments, name="payments")
    host.add_world(payments, name="payments_eu", store="eu")

    @host.tool
    def scatter(ctx: seahaven.Ctx) -> dict[str, str]:
        """Write rows across three stores in an order the log must not keep."""
        home = ctx.worlds.payments.db
        abroad = ctx.worlds.payments_eu.db
        ctx.db.execute("INSERT INTO staff (id) VALUES ('b')")
        abroad.execute("INSERT INTO charges (id, amount) VALUES ('m', 1)")
        home.execute("INSERT INTO numbered (n) VALUES (10)")
        home.execute("INSERT INTO charges (id, amount) VALUES ('z', 1)")
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES ('h', 1)")
        home.execute("INSERT INTO numbered (n) VALUES (2)")
        home.execute("INSERT INTO cache (id) VALUES ('skipped')")
        ctx.db.execute("INSERT INTO cache (id) VALUES ('kept')")
        home.execute("INSERT INTO charges (id, amount) VALUES ('a', 1)")
        ctx.db.execute("INSERT INTO audit (id) VALUES ('x')")
        ctx.db.execute("INSERT INTO staff (id) VALUES ('a')")
        return {}

    @host.tool
    def touch_abroad(ctx: seahaven.Ctx) -> dict[str, str]:
        """One more write, in a later call."""
        ctx.worlds.payments_eu.db.execute("UPDATE charges SET amount = 2 WHERE id = 'm'")
        return {}

    return host


def test_one_change_log_over_every_node_sorted_within_a_call() -> None:
    host = _two_store_writer()

    with host.instance() as inst:
        inst.call("scatter")
        inst.call("touch_abroad")
        logged = [
            (record.i, record.world, record.table, record.key) for record in inst.change_log()
        ]

    assert logged == [
        (0, "main", "audit", {"id": "x"}),
        (0, "main", "cache", {"id": "kept"}),
        (0, "main", "charges", {"id": "h"}),
        (0, "main", "staff", {"id": "a"}),
        (0, "main", "staff", {"id": "b"}),
        (0, "payments", "charges", {"id": "a"}),
        (0, "payments", "charges", {"id": "z"}),
        (0, "payments", "numbered", {"n": 2}),
        (0, "payments", "numbered", {"n": 10}),
        (0, "payments_eu", "charges", {"id": "m"}),
        (1, "payments_eu", "charges", {"id": "m"}),
    ]


def test_a_world_that_adds_none_logs_main_on_every_record() -> None:
    alone = make_payments()

    with alone.instance() as inst:
        inst.call("create_charge", amount=1)
        inst.call("create_charge", amount=2)
        assert [record.world for record in inst.change_log()] == ["main", "main"]


def test_the_change_log_tells_two_tables_of_one_name_apart() -> None:
    host = _two_store_writer()

    with host.instance() as inst:
        inst.call("scatter")
        charges = [
            (record.world, record.key["id"])
            for record in inst.change_log()
            if record.table == "charges"
        ]
    assert charges == [("main", "h"), ("payments", "a"), ("payments", "z"), ("payments_eu", "m")]


def test_a_nodes_untracked_tables_are_its_own() -> None:
    host = _two_store_writer()

    with host.instance() as inst:
        inst.call("scatter")
        cached = [
            (record.world, record.key) for record in inst.change_log() if record.table == "cache"
        ]
        assert cached == [("main", {"id": "kept"})]
        assert inst.inspect().one("SELECT id FROM payments.cache") == {"id": "skipped"}


# --- the composition report -----------------------------------------------------------------------


def test_the_composition_report_has_one_record_per_node_root_first() -> None:
    payments = make_payments()
    shop = make_world("shop")
    shop.add_world(payments, tool_allow_list=[])
    host = make_world("company", STAFF)
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(shop)
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")

    with host.instance() as inst:
        reports = inst.composition()

    assert all(isinstance(report, NodeReport) for report in reports)
    assert reports == [
        NodeReport("main", "company", "1.0.0", None, (), host.schema_hash, None),
        NodeReport("payments", "payments", "1.0.0", None, ("shop/payments",), payments.schema_hash),
        NodeReport("shop", "shop", "1.0.0", None, (), shop.schema_hash),
        NodeReport("payments_eu", "payments", "1.0.0", "eu", (), payments.schema_hash),
    ]


def test_the_report_describes_the_stores_the_instance_holds_not_the_seal_now() -> None:
    host = make_world("company")
    host.add_world(make_payments())

    with host.instance() as inst:
        before = inst.composition()
        host.add_world(make_world("chat"))
        assert [node.path for node in host.composition().nodes] == ["main", "payments", "chat"]
        assert inst.composition() == before
        assert [report.path for report in before] == ["main", "payments"]


def test_the_report_names_the_version_a_fixture_recorded_when_it_differs(tmp_path: Path) -> None:
    frozen_with = make_world("payments", CHARGES)
    old_host = make_world("company", STAFF, fixtures_dir=tmp_path)
    old_host.add_world(frozen_with)
    with old_host.instance() as inst, inst.bulk() as ctx:
        ctx.worlds.payments.db.execute("INSERT INTO charges (id, amount) VALUES ('c', 5)")
    with old_host.instance() as inst:
        inst.freeze("acme", "One charge.")

    upgraded = seahaven.World(
        name="payments", version="1.1.0", schema=CHARGES, state_format="seahaven.state/1"
    )
    new_host = make_world("company", STAFF, fixtures_dir=tmp_path)
    new_host.add_world(upgraded)

    with new_host.instance("acme") as inst:
        root, child = inst.composition()
        assert (root.world_version, root.frozen_world_version) == ("1.0.0", None)
        assert (child.world_version, child.frozen_world_version) == ("1.1.0", "1.0.0")
    with old_host.instance("acme") as inst:
        assert [report.frozen_world_version for report in inst.composition()] == [None, None]


# --- the state document ---------------------------------------------------------------------------


def test_the_state_documents_composition_is_keyed_by_path() -> None:
    host = _company_with_tax()

    with host.instance() as inst:
        inst.call("invoice", amount=3)
        document = inst.state()
        reports = inst.composition()

    assert list(document["composition"]) == ["main", "payments", "payments/tax"]
    for report in reports:
        assert document["composition"][report.path] == report.to_dict()
    assert document["composition"]["payments/tax"]["world"] == "tax"
    logged_paths = {record["world"] for record in document["state"]["db"]["log"]}
    assert logged_paths == {"main", "payments", "payments/tax"}
    assert logged_paths <= set(document["composition"])


def test_a_composite_fixture_names_one_file_hash_per_path(tmp_path: Path) -> None:
    host = make_world("company", STAFF, fixtures_dir=tmp_path)
    host.add_world(make_payments())
    with host.instance() as inst:
        inst.freeze("blank", "Nothing yet.")

    with host.instance("blank") as inst:
        document = inst.state()
    assert document["fixture"]["id"] == "blank"
    assert sorted(document["fixture"]["nodes"]) == ["main", "payments"]
