"""A record's JSON text is its published dict as ``json.dumps`` writes it, whatever it holds.

``render_changes`` writes each record's text by hand (the state document joins
the texts, never re-encoding them), with shortcuts for the common rows. Random
changes of every SQLite kind of value, keys of one and of two columns, updates
of one column and of several, all actors, are held to the plain encoding.
"""

from __future__ import annotations

import json
import random
from typing import Any

import apsw
import pytest

from seahaven.stores import changelog
from seahaven.stores.changelog import LogRecord, Shape, render_changes
from seahaven.stores.schema import TableInfo


def rendered(
    path: str,
    changes: list[Any],
    ordinal: int | None,
    describe_table: Any,
    shapes: dict[str, Shape],
    actor: str = "agent",
) -> list[tuple[LogRecord, str, tuple[Any, ...]]]:
    """What ``render_changes`` appends and returns, as (record, text, raw key) triples."""
    records: list[LogRecord] = []
    texts: list[str] = []
    raw_keys = render_changes(path, changes, ordinal, describe_table, shapes, actor, records, texts)
    assert len(records) == len(texts) == len(raw_keys)
    return list(zip(records, texts, raw_keys, strict=True))


VALUES: list[Any] = [
    None,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    0.0,
    -0.0,
    1.5,
    1e300,
    float("inf"),
    float("-inf"),
    "",
    "plain",
    'quote " and \\ backslash',
    "line\nbreak\ttab\x00nul\x1f",
    "é ü 日本 \u2028 \U0001f600",
    b"",
    b"\x00\xff blob",
]

TABLES = {
    "one": TableInfo(
        name="one", kind="table", columns=("id", "a", "b", "c"), primary_key=(0,), strict=False
    ),
    "two": TableInfo(
        name="two",
        kind="table",
        columns=("x", "k1", "é", "k2"),
        primary_key=(3, 1),
        strict=False,
    ),
    "odd name": TableInfo(
        name="odd name", kind="table", columns=('q"uote', "v"), primary_key=(0,), strict=False
    ),
}


def _change(rng: random.Random) -> tuple[str, str, Any, Any]:
    name = rng.choice(list(TABLES))
    width = len(TABLES[name].columns)
    old = tuple(rng.choice(VALUES) for _ in range(width))
    new = tuple(rng.choice(VALUES) for _ in range(width))
    # Rows of integers, text and NULL alone are rendered by a shortcut: plenty of them.
    if rng.random() < 0.5:
        plain = [value for value in VALUES if type(value) in (int, str, type(None))]
        old = tuple(rng.choice(plain) for _ in range(width))
        new = tuple(rng.choice(plain) for _ in range(width))
    op = rng.choice(["INSERT", "DELETE", "UPDATE"])
    if op == "INSERT":
        return (name, op, None, new)
    if op == "DELETE":
        return (name, op, old, None)
    kept = set(rng.sample(range(width), rng.randint(0, width)))
    return (name, op, old, tuple(apsw.no_change if i in kept else v for i, v in enumerate(new)))


def test_every_records_text_is_its_dict_as_json_dumps_writes_it() -> None:
    rng = random.Random(7)
    shapes: dict[str, Shape] = {}
    checked = 0
    for _ in range(400):
        changes = [_change(rng) for _ in range(rng.randint(1, 6))]
        ordinal = rng.choice([None, 0, 12])
        actor = rng.choice(["agent", "user", "setup", "event:tick", 'event:"odd"'])
        path = rng.choice(["main", "child/é"])
        for record, text, raw_key in rendered(
            path, changes, ordinal, TABLES.__getitem__, shapes if path == "main" else {}, actor
        ):
            published = record.to_dict()
            assert text == json.dumps(published, separators=(",", ":"), ensure_ascii=False)
            table = TABLES[record.table]
            assert list(published["key"]) == [table.columns[i] for i in table.primary_key]
            assert len(raw_key) == len(table.primary_key)
            checked += 1
    assert checked > 1000


def test_an_update_shows_the_columns_it_changed_outside_the_key() -> None:
    nothing = apsw.no_change
    changes = [
        ("two", "UPDATE", (1, "k", 2.5, b"\x01"), (nothing, "other", 3, nothing)),
        ("two", "UPDATE", (1, "k", 2.5, b"\x01"), (5, nothing, nothing, nothing)),
    ]
    (first, _, first_key), (second, _, _) = [
        item for item in rendered("main", changes, 3, TABLES.__getitem__, {})
    ]
    assert first_key == (b"\x01", "k")
    assert first.key == {"k2": "AQ==", "k1": "k"}
    assert (first.before, first.after) == ({"é": 2.5}, {"é": 3})
    assert (second.before, second.after) == ({"x": 1}, {"x": 5})


def test_a_tables_shape_is_kept_for_the_process_by_its_columns_and_key() -> None:
    # Two stores' tables of one name and path but other columns get a shape each.
    narrow = TableInfo(name="t", kind="table", columns=("id", "a"), primary_key=(0,), strict=False)
    keyed = TableInfo(name="t", kind="table", columns=("id", "a"), primary_key=(1,), strict=False)
    texts = []
    for table in (narrow, keyed, narrow):
        ((_, text, _),) = rendered(
            "main", [("t", "INSERT", None, (1, 2))], 0, {"t": table}.__getitem__, {}
        )
        texts.append(text)
    assert texts[0] == texts[2] != texts[1]
    assert '"key":{"a":2}' in texts[1]
    assert changelog._shape("main", "t", narrow) is changelog._shape("main", "t", narrow)


def test_a_plain_rows_text_is_the_same_without_the_json_modules_c_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where the json module has no C encoder, the text is built in Python, alike.
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    made = changelog._object_chunks_maker()
    assert made is changelog._object_chunks_in_python
    plain = [value for value in VALUES if type(value) in (int, str, type(None))]
    rng = random.Random(11)
    for _ in range(300):
        columns = rng.sample(["id", "a", 'q"uote', "é", "line\nbreak"], rng.randint(1, 5))
        row = {column: rng.choice(plain) for column in columns}
        expected = json.dumps(row, separators=(",", ":"), ensure_ascii=False)
        assert "".join(made(row, 0)) == expected
        assert "".join(changelog._object_chunks(row, 0)) == expected
