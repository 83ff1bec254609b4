"""The fold of the change log equals SQLite's own cumulative changeset over the episode.

The fold is the one Seahaven ships, ``seahaven.grading.fold``, read back in
the published record shape. The
property test drives random episodes of inserts, updates, deletes and key
rewrites, in calls that commit, calls that raise and roll back, and ``bulk()``
blocks; SQLite's session extension then works out, on a connection of the
test's own, the changeset from the store's image before the episode to its image
after. The two accounts of what changed must agree.
"""

import base64
import math
from collections.abc import Iterable, Mapping
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seahaven
from seahaven import grading

SCHEMA = """
CREATE TABLE items (tag TEXT NOT NULL, k INTEGER NOT NULL, a, b TEXT, PRIMARY KEY (tag, k));
CREATE TABLE solo (id INTEGER PRIMARY KEY, a);
"""
# Columns in table order, and the key's columns in primary-key order.
TABLES = {
    "items": (("tag", "k", "a", "b"), ("tag", "k")),
    "solo": (("id", "a"), ("id",)),
}

world = seahaven.World(
    name="foldable", version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1"
)


@world.tool
def run(ctx: seahaven.Ctx, statements: list[str], fail: bool = False) -> None:
    """Run the statements; with ``fail``, raise afterwards so the call rolls back."""
    for statement in statements:
        ctx.db.execute(statement)
    if fail:
        raise seahaven.ToolError("abandoned", "rolled back on purpose")


def fold(log: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The shipped fold of ``log``, as the published records graders read."""
    return grading.fold(log).to_list()


# --- the fold itself, on hand-made logs ------------------------------------------------------


def rec(op: str, key: dict[str, Any], before: Any = None, after: Any = None) -> dict[str, Any]:
    """A published log record of table ``t`` on ``main`` (``i`` does not matter to the fold)."""
    return {
        "i": 0,
        "world": "main",
        "table": "t",
        "op": op,
        "key": key,
        "before": before,
        "after": after,
    }


ROW = {"id": 1, "x": "a", "y": 1}


def test_untouched_plus_any_record_is_that_record() -> None:
    for record in (
        rec("insert", {"id": 1}, after=ROW),
        rec("update", {"id": 1}, {"x": "a"}, {"x": "b"}),
        rec("delete", {"id": 1}, before=ROW),
    ):
        [folded] = fold([record])
        # A record saved without an actor was a call's, so the agent's.
        expected = {key: value for key, value in record.items() if key != "i"}
        assert folded == {**expected, "actors": ["agent"]}


def test_insert_then_update_is_the_insert_with_the_update_overlaid() -> None:
    log = [rec("insert", {"id": 1}, after=ROW), rec("update", {"id": 1}, {"x": "a"}, {"x": "b"})]
    [folded] = fold(log)
    assert (folded["op"], folded["before"], folded["after"]) == (
        "insert",
        None,
        {"id": 1, "x": "b", "y": 1},
    )


def test_insert_then_delete_is_untouched() -> None:
    assert fold([rec("insert", {"id": 1}, after=ROW), rec("delete", {"id": 1}, before=ROW)]) == []


def test_update_then_update_keeps_first_before_last_after_and_drops_reverted_columns() -> None:
    log = [
        rec("update", {"id": 1}, {"x": "a", "y": 1}, {"x": "b", "y": 2}),
        rec("update", {"id": 1}, {"x": "b"}, {"x": "a"}),
        rec("update", {"id": 1}, {"y": 2}, {"y": 3}),
    ]
    [folded] = fold(log)
    assert (folded["op"], folded["before"], folded["after"]) == ("update", {"y": 1}, {"y": 3})
    reverted = [
        rec("update", {"id": 1}, {"x": "a"}, {"x": "b"}),
        rec("update", {"id": 1}, {"x": "b"}, {"x": "a"}),
    ]
    assert fold(reverted) == []


def test_update_then_delete_is_a_delete_of_the_row_as_it_started() -> None:
    log = [
        rec("update", {"id": 1}, {"x": "a"}, {"x": "b"}),
        rec("delete", {"id": 1}, before={"id": 1, "x": "b", "y": 1}),
    ]
    [folded] = fold(log)
    assert (folded["op"], folded["before"], folded["after"]) == ("delete", ROW, None)


def test_delete_then_insert_is_an_update_of_the_differing_columns_or_nothing() -> None:
    changed = [
        rec("delete", {"id": 1}, before=ROW),
        rec("insert", {"id": 1}, after={"id": 1, "x": "a", "y": 9}),
    ]
    [folded] = fold(changed)
    assert (folded["op"], folded["before"], folded["after"]) == ("update", {"y": 1}, {"y": 9})
    same = [rec("delete", {"id": 1}, before=ROW), rec("insert", {"id": 1}, after=dict(ROW))]
    assert fold(same) == []


def test_groups_are_per_row_and_the_result_is_sorted_like_records_in_a_call() -> None:
    log = [
        rec("insert", {"id": 2}, after={"id": 2, "x": "b", "y": 0}),
        rec("insert", {"id": 1}, after=ROW),
        {**rec("delete", {"id": 5}, before={"id": 5, "x": "e", "y": 0}), "table": "a"},
    ]
    assert [(record["table"], record["key"]["id"]) for record in fold(log)] == [
        ("a", 5),
        ("t", 1),
        ("t", 2),
    ]


def test_a_log_no_episode_could_produce_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot hold insert then insert for one row"):
        fold([rec("insert", {"id": 1}, after=ROW), rec("insert", {"id": 1}, after=ROW)])


def test_trap_one_two_calls_on_one_row_are_two_records_and_one_folded_row() -> None:
    with world.instance(setup_sql="INSERT INTO solo (id, a) VALUES (1, 'first')") as inst:
        inst.call("run", statements=["UPDATE solo SET a = 'second'"])
        inst.call("run", statements=["UPDATE solo SET a = 'third'"])
        log = inst.state()["state"]["db"]["log"]
    assert len(log) == 2
    [folded] = fold(log)
    assert (folded["before"], folded["after"]) == ({"a": "first"}, {"a": "third"})


def test_trap_two_same_end_state_different_logs_same_fold() -> None:
    def episode(statements: list[list[str]]) -> list[dict[str, Any]]:
        with world.instance(setup_sql="INSERT INTO solo (id, a) VALUES (1, 'open')") as inst:
            for step in statements:
                inst.call("run", statements=step)
            return [record.to_dict() for record in inst.change_log()]

    direct = episode([["UPDATE solo SET a = 'closed'"]])
    winding = episode(
        [
            ["UPDATE solo SET a = 'closed'"],
            ["UPDATE solo SET a = 'open'"],
            ["UPDATE solo SET a = 'closed'"],
        ]
    )
    assert direct != winding
    assert fold(direct) == fold(winding)


# --- the property: the fold equals SQLite's cumulative changeset ------------------------------

# Small domains, so that steps collide on the same rows often. No infinities and
# no floats equal to integers: those are the two places the JSON mapping loses
# information (documented), where a fold of JSON values cannot match SQLite.
VALUES = st.sampled_from([None, 7, -2, 0.5, "x", "", b"\xff\x01"])
TEXTS = st.sampled_from([None, "p", "q"])
ITEM_KEYS = st.tuples(st.sampled_from(["m", "n"]), st.integers(1, 2))
SOLO_KEYS = st.integers(1, 3)


def literal(value: Any) -> str:
    """``value`` as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def where(table: str, key: Any) -> str:
    """The WHERE clause that picks the row ``key`` of ``table``."""
    if table == "items":
        tag, k = key
        return f"tag = {literal(tag)} AND k = {k}"
    return f"id = {key}"


@st.composite
def statements(draw: st.DrawFn) -> str:
    """One write: an insert, an update, a delete, or a rewrite of the primary key."""
    table = draw(st.sampled_from(["items", "solo"]))
    key = draw(ITEM_KEYS if table == "items" else SOLO_KEYS)
    kind = draw(st.sampled_from(["insert", "update", "update", "update", "delete", "rekey"]))
    if kind == "insert":
        if table == "items":
            tag, k = key
            a, b = draw(VALUES), draw(TEXTS)
            return (
                f"INSERT OR IGNORE INTO items (tag, k, a, b) "
                f"VALUES ({literal(tag)}, {k}, {literal(a)}, {literal(b)})"
            )
        return f"INSERT OR IGNORE INTO solo (id, a) VALUES ({key}, {literal(draw(VALUES))})"
    if kind == "update":
        if table == "items" and draw(st.booleans()):
            return f"UPDATE items SET b = {literal(draw(TEXTS))} WHERE {where(table, key)}"
        return f"UPDATE {table} SET a = {literal(draw(VALUES))} WHERE {where(table, key)}"
    if kind == "delete":
        return f"DELETE FROM {table} WHERE {where(table, key)}"
    if table == "items":
        tag, k = draw(ITEM_KEYS)
        change = f"tag = {literal(tag)}, k = {k}"
    else:
        change = f"id = {draw(SOLO_KEYS)}"
    return f"UPDATE OR IGNORE {table} SET {change} WHERE {where(table, key)}"


STEPS = st.lists(
    st.tuples(
        st.sampled_from(["call", "call", "call", "failing call", "bulk"]),
        st.lists(statements(), min_size=1, max_size=4),
    ),
    min_size=3,
    max_size=10,
)
STARTING_ROWS = st.tuples(
    st.dictionaries(ITEM_KEYS, st.tuples(VALUES, TEXTS), min_size=1, max_size=4),
    st.dictionaries(SOLO_KEYS, VALUES, min_size=1, max_size=3),
)


def setup_sql_for(items: Mapping[Any, Any], solo: Mapping[int, Any]) -> str:
    """The starting rows, written before the episode (so neither account holds them)."""
    rows = [
        f"INSERT INTO items (tag, k, a, b) VALUES ({literal(tag)}, {k}, {literal(a)}, {literal(b)})"
        for (tag, k), (a, b) in items.items()
    ]
    rows += [f"INSERT INTO solo (id, a) VALUES ({id}, {literal(a)})" for id, a in solo.items()]
    return ";\n".join(rows)


def as_json(value: Any) -> Any:
    """SQLite's storage classes as the format maps them (written here, not borrowed)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and math.isinf(value):
        return None
    return value


Comparable = tuple[str, str, tuple[tuple[str, Any], ...], str, Any, Any]


def frozen(row: Mapping[str, Any] | None) -> Any:
    """A row dict as something a set can hold."""
    return None if row is None else frozenset(row.items())


def comparable(records: Iterable[Mapping[str, Any]]) -> set[Comparable]:
    """Records as (world, table, key, op, before, after), hashable and order-free."""
    return {
        (
            record["world"],
            record["table"],
            tuple(record["key"].items()),
            record["op"],
            frozen(record["before"]),
            frozen(record["after"]),
        )
        for record in records
    }


def changeset_records(changeset: bytes) -> list[dict[str, Any]]:
    """SQLite's own changeset, rendered into the record shape by this test."""
    records = []
    for change in apsw.Changeset.iter(changeset):
        columns, key_columns = TABLES[change.name]
        old = None if change.old is None else dict(zip(columns, change.old, strict=True))
        new = None if change.new is None else dict(zip(columns, change.new, strict=True))
        row = old if old is not None else new
        assert row is not None
        key = {column: as_json(row[column]) for column in key_columns}
        op = change.op.lower()
        if op == "update":
            assert old is not None and new is not None
            changed = [
                column
                for column in columns
                if column not in key_columns and new[column] is not apsw.no_change
            ]
            before = {column: as_json(old[column]) for column in changed}
            after: dict[str, Any] | None = {column: as_json(new[column]) for column in changed}
        else:
            before = None if old is None else {c: as_json(v) for c, v in old.items()}
            after = None if new is None else {c: as_json(v) for c, v in new.items()}
        records.append(
            {
                "world": "main",
                "table": change.name,
                "op": op,
                "key": key,
                "before": before,
                "after": after,
            }
        )
    return records


def play(inst: seahaven.Instance, steps: list[tuple[str, list[str]]]) -> None:
    """Run an episode: each step a call, a call that rolls back, or a bulk() block."""
    for kind, writes in steps:
        if kind == "bulk":
            with inst.bulk() as ctx:
                for statement in writes:
                    ctx.db.execute(statement)
        elif kind == "failing call":
            with pytest.raises(seahaven.ToolError):
                inst.call("run", statements=writes, fail=True)
        else:
            inst.call("run", statements=writes)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(starting=STARTING_ROWS, steps=STEPS)
def test_the_fold_of_the_log_equals_sqlites_cumulative_changeset(
    starting: tuple[dict[Any, Any], dict[int, Any]], steps: list[tuple[str, list[str]]]
) -> None:
    with world.instance(setup_sql=setup_sql_for(*starting) or None) as inst:
        before = inst.db.conn.serialize("main")
        play(inst, steps)
        after = inst.db.conn.serialize("main")
        log = inst.state()["state"]["db"]["log"]
    assert comparable(fold(log)) == comparable(changeset_records(net_changeset(before, after)))


def _rollback_journal(image: bytes) -> bytes:
    # A store shared with readers is in WAL mode, which an image in memory cannot open:
    # the header's read and write versions say the rollback journal instead.
    header = bytearray(image)
    header[18:20] = b"\x01\x01"
    return bytes(header)


def net_changeset(before: bytes, after: bytes) -> bytes:
    """SQLite's own changeset from the ``before`` image to ``after`` (``sqlite3session_diff``).

    The session runs on a connection of the test's own, since the instance's
    connection has its change capture's preupdate hook, which a session cannot share.
    """
    conn = apsw.Connection(":memory:")
    try:
        conn.execute("ATTACH ':memory:' AS before")
        conn.deserialize("main", _rollback_journal(after))
        conn.deserialize("before", _rollback_journal(before))
        session = apsw.Session(conn, "main")
        try:
            for table in TABLES:
                session.attach(table)
                session.diff("before", table)
            return session.changeset()
        finally:
            session.close()
    finally:
        conn.close()
