"""Scripted episodes whose change logs and state documents the corpus holds, byte for byte.

Each episode makes one instance (of a test world declared here or of a shipped
world), runs a fixed script of calls, ``bulk()`` blocks and failures on it, and
is recorded by ``record``: after every step the ``seahaven.state+last_step/1``
text, and at the end the change log, the call log, ``state_json`` and
``state()`` in every format the world offers. ``tests/corpus/regenerate.py``
writes what ``record`` returns to ``tests/corpus/<episode>.json``;
``tests/test_change_log_corpus.py`` holds the framework to it.

Everything that varies between runs is fixed (the clock, the seed) or replaced
(the instance id, the instance directory), so a document is the same bytes on
every machine.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import seahaven

NOW = "2031-03-14T08:30:00.000Z"
FORMATS = ("seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1")

Step = Callable[[seahaven.Instance], Any]


@dataclass
class Episode:
    """One scripted episode: how its instance is made, and the steps run on it in order."""

    name: str
    make: Callable[[Path], seahaven.Instance]
    steps: list[Step] = field(default_factory=list)


# --- the test worlds ---------------------------------------------------------------------------


def _kinds_world(work_dir: Path) -> seahaven.World:
    """Every kind of value and key: text, integers, reals, blobs, NULL, composite keys."""
    world = seahaven.World(
        name="corpus_kinds",
        version="1.0.0",
        schema="""
            CREATE TABLE items (
                id INTEGER PRIMARY KEY, label TEXT, weight REAL, data BLOB, note TEXT
            );
            CREATE TABLE pairs (
                a TEXT NOT NULL, b INTEGER NOT NULL, value TEXT, PRIMARY KEY (b, a)
            ) WITHOUT ROWID;
            CREATE TABLE blobs (k BLOB PRIMARY KEY, v INTEGER) WITHOUT ROWID;
            CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT NOT NULL);
            CREATE TRIGGER items_audit AFTER INSERT ON items
                BEGIN INSERT INTO audit (what) VALUES ('item ' || NEW.id); END;
            CREATE TRIGGER items_gone AFTER DELETE ON items
                BEGIN INSERT INTO audit (what) VALUES ('gone ' || OLD.id); END;
            CREATE TABLE scratch (id INTEGER PRIMARY KEY, v TEXT);
        """,
        state_format="seahaven.state/1",
        untracked_tables=["scratch"],
        work_dir=work_dir,
    )

    @world.tool
    def put(
        ctx: seahaven.Ctx,
        id: int,
        label: str | None = None,
        weight: float | None = None,
        data: str | None = None,
        note: str | None = None,
    ) -> int:
        """Insert or replace an item; ``data`` is stored as the UTF-8 bytes of the text."""
        blob = data.encode() if data is not None else None
        ctx.db.execute(
            "INSERT OR REPLACE INTO items (id, label, weight, data, note) VALUES (?, ?, ?, ?, ?)",
            id,
            label,
            weight,
            blob,
            note,
        )
        return id

    @world.tool
    def reweigh(ctx: seahaven.Ctx, id: int, weight: float | None) -> None:
        """Set an item's weight."""
        ctx.db.execute("UPDATE items SET weight = ? WHERE id = ?", weight, id)

    @world.tool
    def forever(ctx: seahaven.Ctx, id: int) -> None:
        """Make an item's weight infinite, which the log shows as null."""
        ctx.db.execute("UPDATE items SET weight = 1e999 WHERE id = ?", id)

    @world.tool
    def renumber(ctx: seahaven.Ctx, old: int, new: int) -> None:
        """Change an item's key: the log shows a delete and an insert."""
        ctx.db.execute("UPDATE items SET id = ? WHERE id = ?", new, old)

    @world.tool
    def churn(ctx: seahaven.Ctx, id: int) -> None:
        """Insert then delete a row, and update a row and put it back: no net record."""
        ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'brief')", id)
        ctx.db.execute("DELETE FROM items WHERE id = ?", id)
        row = ctx.db.one("SELECT label FROM items ORDER BY id LIMIT 1")
        if row is not None:
            ctx.db.execute("UPDATE items SET label = 'changed' WHERE label = ?", row["label"])
            ctx.db.execute("UPDATE items SET label = ? WHERE label = 'changed'", row["label"])

    @world.tool
    def drop(ctx: seahaven.Ctx, id: int) -> None:
        """Delete an item (its trigger writes an audit row)."""
        ctx.db.execute("DELETE FROM items WHERE id = ?", id)

    @world.tool
    def pair(ctx: seahaven.Ctx, a: str, b: int, value: str | None = None) -> None:
        """Upsert a row of the composite-key WITHOUT ROWID table."""
        ctx.db.execute(
            "INSERT INTO pairs (a, b, value) VALUES (?, ?, ?) "
            "ON CONFLICT (b, a) DO UPDATE SET value = excluded.value",
            a,
            b,
            value,
        )

    @world.tool
    def blob_key(ctx: seahaven.Ctx, k: str, v: int) -> None:
        """A row keyed by a BLOB, in a WITHOUT ROWID table."""
        ctx.db.execute("INSERT OR REPLACE INTO blobs (k, v) VALUES (?, ?)", k.encode(), v)

    @world.tool
    def scribble(ctx: seahaven.Ctx, v: str) -> None:
        """Write an untracked table, and a tracked one."""
        ctx.db.execute("INSERT INTO scratch (v) VALUES (?)", v)
        ctx.db.execute("INSERT INTO audit (what) VALUES (?)", "scribbled " + v)

    @world.tool
    def many(ctx: seahaven.Ctx, start: int, count: int) -> None:
        """Insert ``count`` items from ``start``, in one statement."""
        ctx.db.executemany(
            "INSERT INTO items (id, label, weight) VALUES (?, ?, ?)",
            [(start + n, f"item {start + n}", n / 7) for n in range(count)],
        )

    @world.tool
    def fail_after_writing(ctx: seahaven.Ctx, id: int) -> None:
        """Write, then refuse: nothing of it is kept."""
        ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'doomed')", id)
        raise seahaven.ToolError("refused", "refused after writing")

    @world.tool
    def crash_after_writing(ctx: seahaven.Ctx, id: int) -> None:
        """Write, then fail as a bug would."""
        ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'doomed')", id)
        raise RuntimeError("a bug in the tool")

    @world.tool(transaction=False)
    def in_two_steps(ctx: seahaven.Ctx, id: int) -> None:
        """Two transactions of the tool's own, the second refused after it wrote."""
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'first half')", id)
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'second half')", id + 1)
        ctx.db.execute("INSERT INTO items (id, label) VALUES (?, 'autocommit')", id + 2)

    @world.tool
    def weird_text(ctx: seahaven.Ctx, id: int, text: str) -> None:
        """Text that JSON must escape."""
        ctx.db.execute("INSERT INTO items (id, label, note) VALUES (?, ?, ?)", id, text, "\u2028")

    return world


def _kinds_steps() -> list[Step]:
    return [
        lambda inst: inst.call("put", id=3, label="three", weight=1.5, data="\x00bin", note=None),
        lambda inst: inst.call("put", id=1, label="one", weight=2.0),
        lambda inst: inst.call("put", id=2, label="two", weight=-0.0, note='ñ é "q" \\'),
        lambda inst: inst.call("put", id=1, label="one again"),  # REPLACE: delete + insert
        lambda inst: inst.call("reweigh", id=2, weight=1e-300),
        lambda inst: inst.call("reweigh", id=2, weight=2.0),
        lambda inst: inst.call("reweigh", id=2, weight=2.0),  # no change at all
        lambda inst: inst.call("forever", id=3),
        lambda inst: inst.call("renumber", old=2, new=20),
        lambda inst: inst.call("churn", id=99),
        lambda inst: inst.call("pair", a="x", b=2, value="first"),
        lambda inst: inst.call("pair", a="a", b=2, value="second"),
        lambda inst: inst.call("pair", a="x", b=1),
        lambda inst: inst.call("pair", a="x", b=2, value="updated"),
        lambda inst: inst.call("blob_key", k="k\x01", v=1),
        lambda inst: inst.call("blob_key", k="a", v=2),
        lambda inst: inst.call("scribble", v="hidden"),
        lambda inst: inst.call("many", start=100, count=30),
        lambda inst: inst.call("drop", id=105),
        lambda inst: inst.call("fail_after_writing", id=500),
        lambda inst: inst.call("crash_after_writing", id=501),
        lambda inst: inst.call("in_two_steps", id=600),
        lambda inst: inst.call("weird_text", id=700, text="tab\there\nline \x7f \ud7ff emoji 🦭"),
        lambda inst: inst.call("put", id="not a number"),
        lambda inst: inst.call("no_such_tool"),
        lambda inst: inst.call("reweigh", id=1, weight=math.pi),
        _bulk_kinds,
        lambda inst: inst.call("drop", id=1),
    ]


def _bulk_kinds(inst: seahaven.Instance) -> None:
    with inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO items (id, label) VALUES (800, 'bulk before')")
        inst.call("put", id=801, label="called in bulk")
        ctx.db.execute("UPDATE items SET label = 'bulk after' WHERE id = 800")
        ctx.db.execute("INSERT INTO pairs (a, b, value) VALUES ('bulk', 9, NULL)")
        with suppress(seahaven.ToolError):
            inst.call("fail_after_writing", id=802)
        ctx.db.execute("DELETE FROM items WHERE id = 3")


def _fts_world(work_dir: Path) -> seahaven.World:
    """A table indexed by an FTS5 table its triggers keep up to date."""
    world = seahaven.World(
        name="corpus_fts",
        version="1.0.0",
        schema="""
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            CREATE VIRTUAL TABLE notes_fts USING fts5(body, content='notes', content_rowid='id');
            CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
                INSERT INTO notes_fts (rowid, body) VALUES (new.id, new.body);
            END;
            CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
                INSERT INTO notes_fts (notes_fts, rowid, body) VALUES ('delete', old.id, old.body);
            END;
            CREATE TRIGGER notes_au AFTER UPDATE ON notes BEGIN
                INSERT INTO notes_fts (notes_fts, rowid, body) VALUES ('delete', old.id, old.body);
                INSERT INTO notes_fts (rowid, body) VALUES (new.id, new.body);
            END;
            CREATE VIRTUAL TABLE tags USING fts5(tag);
        """,
        state_format="seahaven.state+last_step/1",
        work_dir=work_dir,
    )

    @world.tool
    def write(ctx: seahaven.Ctx, id: int, body: str) -> None:
        """Insert or change a note."""
        ctx.db.execute(
            "INSERT INTO notes (id, body) VALUES (?, ?) "
            "ON CONFLICT (id) DO UPDATE SET body = excluded.body",
            id,
            body,
        )

    @world.tool
    def erase(ctx: seahaven.Ctx, id: int) -> None:
        """Delete a note."""
        ctx.db.execute("DELETE FROM notes WHERE id = ?", id)

    @world.tool
    def tag(ctx: seahaven.Ctx, tag: str) -> None:
        """Write the standalone FTS5 table, whose shadow tables the log never shows."""
        ctx.db.execute("INSERT INTO tags (tag) VALUES (?)", tag)

    @world.tool
    def search(ctx: seahaven.Ctx, query: str) -> list[int]:
        """Ids of the notes matching ``query``."""
        return [
            row["rowid"]
            for row in ctx.db.rows(
                "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid", query
            )
        ]

    return world


def _fts_steps() -> list[Step]:
    return [
        lambda inst: inst.call("write", id=1, body="the quick brown fox"),
        lambda inst: inst.call("write", id=2, body="a lazy dog"),
        lambda inst: inst.call("search", query="fox"),
        lambda inst: inst.call("write", id=1, body="the slow brown fox"),
        lambda inst: inst.call("tag", tag="animals"),
        lambda inst: inst.call("erase", id=2),
        lambda inst: inst.call("search", query="brown"),
    ]


def _composite_worlds(work_dir: Path) -> seahaven.World:
    """A host adding a till (shared store) and a ledger (its own store), with middleware."""
    till = seahaven.World(
        name="corpus_till",
        version="1.0.0",
        schema=(
            "CREATE TABLE receipts (id TEXT PRIMARY KEY, cents INTEGER NOT NULL) STRICT;"
            "CREATE TABLE tally (tool TEXT PRIMARY KEY, n INTEGER NOT NULL) STRICT;"
        ),
        state_format="seahaven.state/1",
    )

    @till.tool
    def ring_up(ctx: seahaven.Ctx, cents: int) -> str:
        """File a receipt with a seeded id."""
        receipt = f"rcpt-{ctx.ids.uuid()}"
        ctx.db.execute("INSERT INTO receipts (id, cents) VALUES (?, ?)", receipt, cents)
        return receipt

    @till.tool
    def void(ctx: seahaven.Ctx, receipt: str) -> None:
        """Remove a receipt."""
        ctx.db.execute("DELETE FROM receipts WHERE id = ?", receipt)

    @till.middleware
    def till_counts(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        ctx.db.execute(
            "INSERT INTO tally (tool, n) VALUES (?, 1) ON CONFLICT (tool) DO UPDATE SET n = n + 1",
            call.name,
        )
        return next_(ctx, call)

    host = seahaven.World(
        name="corpus_host",
        version="1.0.0",
        schema="""
            CREATE TABLE orders (id INTEGER PRIMARY KEY, cents INTEGER NOT NULL,
                                 receipt TEXT, at TEXT NOT NULL);
            CREATE TABLE visits (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL);
        """,
        state_format="seahaven.state+calls/1",
        work_dir=work_dir,
    )
    host.add_world(till, name="till", store="tills", tool_prefix="till_")
    ledger = seahaven.World(
        name="corpus_ledger",
        version="1.0.0",
        schema="CREATE TABLE entries (id INTEGER PRIMARY KEY, cents INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )

    @ledger.tool
    def enter(ctx: seahaven.Ctx, id: int, cents: int) -> None:
        """Write a ledger entry."""
        ctx.db.execute("INSERT INTO entries (id, cents) VALUES (?, ?)", id, cents)

    host.add_world(ledger, name="ledger", store="books", tool_prefix="ledger_")

    @host.middleware
    def visits(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        ctx.db.execute("INSERT INTO visits (tool) VALUES (?)", call.name)
        return next_(ctx, call)

    @host.tool
    def order(ctx: seahaven.Ctx, id: int, cents: int) -> str:
        """An order here, a receipt through the till's handle, an entry in the ledger."""
        receipt = ctx.worlds.till.call("ring_up", cents=cents)
        ctx.worlds.ledger.call(enter, id=id, cents=cents)
        ctx.db.execute(
            "INSERT INTO orders (id, cents, receipt, at) VALUES (?, ?, ?, ?)",
            id,
            cents,
            receipt,
            ctx.clock.iso(),
        )
        return str(receipt)

    @host.tool
    def cancel(ctx: seahaven.Ctx, id: int) -> None:
        """Void an order's receipt and delete it; a nested failure aborts everything."""
        row = ctx.db.one("SELECT receipt FROM orders WHERE id = ?", id)
        if row is None:
            raise seahaven.ToolError("not_found", f"no order {id}")
        ctx.worlds.till.call("void", receipt=row["receipt"])
        ctx.db.execute("DELETE FROM orders WHERE id = ?", id)

    @host.tool
    def half_done(ctx: seahaven.Ctx, id: int) -> None:
        """The ledger is written through a handle, then the host fails."""
        ctx.worlds.ledger.db.execute("INSERT INTO entries (id, cents) VALUES (?, 1)", id)
        ctx.worlds.till.call("ring_up", cents=1)
        raise seahaven.ToolError("half", "gave up half-way")

    @host.tool
    def nested_refusal(ctx: seahaven.Ctx, id: int) -> str:
        """A nested call refused, caught; the host goes on."""
        try:
            ctx.worlds.ledger.call("enter", id=id, cents="lots")
        except seahaven.ToolError as error:
            ctx.db.execute(
                "INSERT INTO orders (id, cents, at) VALUES (?, 0, ?)", id, ctx.clock.iso()
            )
            return error.code
        return "accepted"

    return host


def _composite_steps() -> list[Step]:
    return [
        lambda inst: inst.call("order", id=1, cents=500),
        lambda inst: inst.call("order", id=2, cents=250),
        lambda inst: inst.call("till_ring_up", cents=75),
        lambda inst: inst.call("ledger_enter", id=50, cents=-3),
        lambda inst: inst.call("cancel", id=1),
        lambda inst: inst.call("cancel", id=9),
        lambda inst: inst.call("half_done", id=77),
        lambda inst: inst.call("nested_refusal", id=3),
        lambda inst: inst.call("order", id=2, cents=1),  # a duplicate key, a DbError
        _bulk_composite,
        lambda inst: inst.call("order", id=4, cents=1000),
    ]


def _bulk_composite(inst: seahaven.Instance) -> None:
    with inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO orders (id, cents, at) VALUES (10, 10, 'then')")
        ctx.worlds.ledger.db.execute("INSERT INTO entries (id, cents) VALUES (10, 10)")
        inst.call("order", id=11, cents=11)
        ctx.worlds.till.db.execute("UPDATE tally SET n = n * 100")


def _hooked_world(work_dir: Path) -> seahaven.World:
    """Startup hooks that write, a world's own state format, setup_sql and a tick clock."""
    world = seahaven.World(
        name="corpus_hooked",
        version="2.1.0",
        schema="""
            CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
            CREATE TABLE events (id INTEGER PRIMARY KEY, at TEXT NOT NULL, what TEXT NOT NULL,
                                 token TEXT NOT NULL) STRICT;
        """,
        state_format="corpus.events/1",
        work_dir=work_dir,
    )

    @world.instance_startup
    def configure(ctx: seahaven.Ctx, *, mode: str = "plain") -> None:
        ctx.db.execute("INSERT INTO config (key, value) VALUES ('mode', ?)", mode)

    @world.state_format("corpus.events/1")
    def events_format(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        if instance is None:
            return {"events": []}
        return {
            "events": instance.inspect().rows("SELECT * FROM events ORDER BY id"),
            "records": len(instance.change_log()),
        }

    @world.tool
    def happen(ctx: seahaven.Ctx, what: str) -> dict[str, Any]:
        """Record an event at the clock's time, with a seeded token."""
        ctx.db.execute(
            "INSERT INTO events (at, what, token) VALUES (?, ?, ?)",
            ctx.clock.iso(),
            what,
            ctx.ids.uuid(),
        )
        return {"at": ctx.clock.iso()}

    @world.tool
    def set_config(ctx: seahaven.Ctx, key: str, value: str) -> None:
        """Change a configuration value."""
        ctx.db.execute(
            "INSERT INTO config (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            key,
            value,
        )

    return world


def _hooked_steps() -> list[Step]:
    return [
        lambda inst: inst.call("happen", what="opened"),
        lambda inst: inst.call("set_config", key="mode", value="loud"),
        lambda inst: inst.call("happen", what="spoke"),
        lambda inst: inst.call("happen", what=3),
        lambda inst: inst.call("set_config", key="extra", value="x"),
    ]


def _make(world: Callable[[Path], seahaven.World], **options: Any) -> Any:
    def make(work_dir: Path) -> seahaven.Instance:
        return world(work_dir).instance(**{"now": NOW, "clock_mode": "fixed", "seed": 7, **options})

    return make


# --- the shipped worlds ------------------------------------------------------------------------


def _shipped(module: str, fixture: str | None, **options: Any) -> Callable[[Path], Any]:
    def make(work_dir: Path) -> seahaven.Instance:
        import importlib

        world = importlib.import_module(module).world
        return world.instance(fixture, **{"now": NOW, "clock_mode": "fixed", "seed": 11, **options})

    return make


def _first(inst: seahaven.Instance, sql: str) -> Any:
    row = inst.inspect().one(sql)
    assert row is not None, sql
    return next(iter(row.values()))


def _payments_steps() -> list[Step]:
    def customer(inst: seahaven.Instance) -> str:
        return str(_first(inst, "SELECT id FROM customers ORDER BY id LIMIT 1"))

    def charge_id(inst: seahaven.Instance) -> str:
        return str(_first(inst, "SELECT id FROM charges ORDER BY id DESC LIMIT 1"))

    return [
        lambda inst: inst.call("create_customer", email="ada@example.test", name="Ada"),
        lambda inst: inst.call(
            "attach_payment_method", customer_id=customer(inst), token="tok_visa"
        ),
        lambda inst: inst.call(
            "create_charge", customer_id=customer(inst), amount=1234, currency="usd"
        ),
        lambda inst: inst.call("create_refund", charge_id=charge_id(inst), amount=234),
        lambda inst: inst.call("create_charge", customer_id="nobody", amount=5, currency="usd"),
        lambda inst: inst.call("create_charge", customer_id=customer(inst), amount="x"),
        lambda inst: inst.call("list_charges", limit=2),
    ]


def _chat_steps() -> list[Step]:
    def channel(inst: seahaven.Instance) -> str:
        return str(_first(inst, "SELECT id FROM channels ORDER BY id LIMIT 1"))

    def message(inst: seahaven.Instance) -> str:
        return str(_first(inst, "SELECT id FROM messages ORDER BY id DESC LIMIT 1"))

    return [
        lambda inst: inst.call("create_channel", name="corpus-room"),
        lambda inst: inst.call("post_message", channel_id=channel(inst), text="hello there"),
        lambda inst: inst.call("edit_message", message_id=message(inst), text="hello again"),
        lambda inst: inst.call("add_reaction", message_id=message(inst), emoji="tada"),
        lambda inst: inst.call("search_messages", query="hello"),
        lambda inst: inst.call("delete_message", message_id=message(inst)),
        lambda inst: inst.call("create_channel", name="corpus-room"),
    ]


def _projecttracker_steps() -> list[Step]:
    def project(inst: seahaven.Instance) -> Any:
        return _first(inst, "SELECT id FROM projects ORDER BY id LIMIT 1")

    def issue(inst: seahaven.Instance) -> Any:
        return _first(inst, "SELECT id FROM issues ORDER BY rowid DESC LIMIT 1")

    return [
        lambda inst: inst.call("create_team", key="CORP", name="Corpus"),
        lambda inst: inst.call("create_issue", project_id=project(inst), title="Corpus issue"),
        lambda inst: inst.call("add_comment", issue_id=issue(inst), body="A comment."),
        lambda inst: inst.call("assign_issue", issue_id=issue(inst), assignee_id="u_2"),
        lambda inst: inst.call("archive_issue", issue_id=issue(inst)),
        lambda inst: inst.call("search_issues", query="Corpus"),
        lambda inst: inst.call("create_team", key="CORP", name="Again"),
    ]


def _company_steps() -> list[Step]:
    def expense(inst: seahaven.Instance) -> Any:
        return _first(
            inst, "SELECT id FROM expenses WHERE status = 'submitted' ORDER BY id LIMIT 1"
        )

    return [
        lambda inst: inst.call("get_company_summary"),
        lambda inst: inst.call("list_expenses", status="submitted"),
        lambda inst: inst.call("approve_expense", expense_id=expense(inst), note="corpus"),
        lambda inst: inst.call(
            "invoice_customer",
            customer_email="ap@globex.test",
            amount=4200,
            description="Corpus work",
        ),
        lambda inst: inst.call("chat_list_channels"),
        lambda inst: inst.call("approve_expense", expense_id="nope"),
    ]


def episodes() -> list[Episode]:
    """Every episode of the corpus, in a fixed order."""
    return [
        Episode("kinds", _make(_kinds_world), _kinds_steps()),
        Episode(
            "kinds_setup_sql",
            _make(
                _kinds_world,
                setup_sql=(
                    "INSERT INTO items (id, label, weight) VALUES (40, 'from setup', 0.5);"
                    "INSERT INTO pairs (a, b, value) VALUES ('s', 1, 'setup');"
                ),
                state_format="seahaven.state+calls/1",
            ),
            [
                lambda inst: inst.call("drop", id=40),
                lambda inst: inst.call("pair", a="s", b=1, value="changed"),
            ],
        ),
        Episode("fts", _make(_fts_world), _fts_steps()),
        Episode("composite", _make(_composite_worlds), _composite_steps()),
        Episode(
            "composite_tick",
            _make(_composite_worlds, clock_mode="tick", seed=None),
            _composite_steps()[:4],
        ),
        Episode("hooked", _make(_hooked_world, startup={"mode": "quiet"}), _hooked_steps()),
        Episode("empty", _make(_hooked_world), []),
        Episode("payments_small_shop", _shipped("payments_world", "small_shop"), _payments_steps()),
        Episode("payments_blank", _shipped("payments_world", None), _payments_steps()[:1]),
        Episode("chat_team_workspace", _shipped("chat_world", "team_workspace"), _chat_steps()),
        Episode(
            "projecttracker_small_startup",
            _shipped("projecttracker", "small_startup"),
            _projecttracker_steps(),
        ),
        Episode("company_acme", _shipped("company_world", "acme"), _company_steps()),
    ]


# --- recording ---------------------------------------------------------------------------------


def _outcome(step: Step, inst: seahaven.Instance) -> Any:
    try:
        result = step(inst)
    except seahaven.ToolError as error:
        return {"tool_error": error.to_dict()}
    except Exception as error:  # the corpus records what any step raised
        return {"raised": type(error).__name__}
    return {"result": json.loads(json.dumps(result, default=repr))}


def _scrubbed(text: str, inst: seahaven.Instance) -> str:
    text = text.replace(inst.id, "<instance>")
    # An instance in memory has no directory for a document to name.
    return text.replace(str(inst.directory), "<directory>") if inst.storage == "disk" else text


@contextmanager
def _instance(episode: Episode, work_dir: Path) -> Iterator[seahaven.Instance]:
    inst = episode.make(work_dir)
    try:
        yield inst
    finally:
        inst.destroy()


def record(episode: Episode, work_dir: Path) -> dict[str, Any]:
    """Run ``episode`` and return what it produced, every instance-specific value replaced."""
    steps: list[dict[str, Any]] = []
    with _instance(episode, work_dir) as inst:
        formats = list(FORMATS)
        own = inst.state_format
        if own not in formats:
            formats.append(own)
        for step in episode.steps:
            outcome = _outcome(step, inst)
            outcome["last_step"] = _scrubbed(inst.state_json("seahaven.state+last_step/1"), inst)
            steps.append(outcome)
        documents: dict[str, Any] = {}
        for name in formats:
            text = inst.state_json(name)
            dumped = json.dumps(
                inst.state(name), separators=(",", ":"), ensure_ascii=False, allow_nan=False
            )
            documents[name] = {
                "state_json": _scrubbed(text, inst),
                "state": _scrubbed(dumped, inst),
            }
        documents["default"] = {"state_json": _scrubbed(inst.state_json(), inst)}
        return {
            "episode": episode.name,
            "steps": steps,
            "change_log": [record.to_dict() for record in inst.change_log()],
            "call_log": [
                {**record.to_dict(), "cut": record.cut, "raw_error": record.error}
                for record in inst.call_log()
            ],
            "documents": documents,
        }
