"""The change log and the call log.

Each store's ``Capture`` (``seahaven.stores.capture``) records what each call
changed. When the call ends, the net changes are rendered into
``LogRecord``s, sorted, and kept; the state document then only copies them.
``CallRecord`` is one dispatched call, whatever it raised. Both say who acted
(``actor``): the agent, a simulated user, an event, or the harness's setup.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, NamedTuple

import apsw
from pydantic_core import to_jsonable_python

from seahaven.errors import ArgumentError, ToolError, WorldBug
from seahaven.stores.arguments import (
    CALL_LOG_ARGUMENT_BYTES,
    REFUSED_ARGUMENT_BYTES,
    kept_arguments,
    kept_error,
)
from seahaven.stores.capture import Change
from seahaven.stores.names import AGENT, SETUP, USER
from seahaven.stores.schema import TableInfo

__all__ = [
    "CallRecord",
    "ChangeLog",
    "LogRecord",
    "Shape",
    "json_text",
    "json_value",
    "published",
    "render_changes",
    "sort_key",
]

Op = Literal["insert", "update", "delete"]
_OPS: dict[str, Op] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
# Typed as an object: the stubs type a changed value as an instance of no_change, the sentinel
# being the class itself, which a strict identity check would call non-overlapping.
_NO_CHANGE: object = apsw.no_change


def json_value(value: Any) -> Any:
    """A SQLite value as JSON: BLOB as base64 text, an infinite REAL as null."""
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind is float:
        return None if math.isinf(value) else value
    if kind is bytes:
        return base64.b64encode(value).decode("ascii")
    return value


def _sort_part(value: Any) -> tuple[int, Any]:
    # SQLite's own order between storage classes; a blob by its base64 text.
    if value is None:
        return (0, 0)
    kind = type(value)
    if kind is int or kind is float:
        return (1, value)
    if kind is str:
        return (2, value)
    return (3, base64.b64encode(value).decode("ascii"))


class LogRecord(NamedTuple):
    """One row changed by one call (or by ``inst.bulk()``, with ``i`` of ``None``).

    ``actor`` says who made the change (``seahaven.names.ACTORS``): ``agent``
    for a call made the ordinary way, ``user`` or ``event:<name>`` for one made
    under ``inst.acting_as(...)``, ``setup`` for a ``bulk()`` block's own
    writes. A record belongs to its instance and cannot be edited; ``to_dict``
    hands out a copy in the published shape.
    """

    i: int | None
    world: str
    table: str
    op: Op
    key: dict[str, Any]
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    actor: str = AGENT

    def to_dict(self) -> dict[str, Any]:
        """The published shape an eval reads, with ``i`` first and ``actor`` last."""
        i, world, table, op, key, before, after, actor = self
        return {
            "i": i,
            "world": world,
            "table": table,
            "op": op,
            "key": dict(key),
            "before": dict(before) if before is not None else None,
            "after": dict(after) if after is not None else None,
            "actor": actor,
        }


_new_record = tuple.__new__


def published(records: Iterable[LogRecord]) -> list[dict[str, Any]]:
    """Each record's ``to_dict()``, built in one loop without a method call per record."""
    return [
        {
            "i": i,
            "world": world,
            "table": table,
            "op": op,
            "key": key.copy(),
            "before": None if before is None else before.copy(),
            "after": None if after is None else after.copy(),
            "actor": actor,
        }
        for i, world, table, op, key, before, after, actor in records
    ]


# JSON text of a string, escaped as ``json.dumps(..., ensure_ascii=False)`` escapes it.
_encode_text: Callable[[str], str] = json.encoder.encode_basestring
_int_text = int.__repr__
_float_text = float.__repr__
# The end of a record's JSON text for the actors most records have, worked out once.
_ACTOR_CLOSINGS = {actor: ',"actor":' + _encode_text(actor) + "}" for actor in (AGENT, USER, SETUP)}
# The SQLite values that are their own JSON value, and whose text needs no base64 or inf check.
_PLAIN = frozenset({int, str, type(None)})


def _object_chunks_in_python(row: dict[str, Any], _level: int) -> list[str]:
    return [
        "{"
        + ",".join(
            [
                _encode_text(column)
                + ":"
                + (
                    _encode_text(value)
                    if type(value) is str
                    else "null"
                    if value is None
                    else _int_text(value)
                )
                for column, value in row.items()
            ]
        )
        + "}"
    ]


def _object_chunks_maker() -> Callable[[dict[str, Any], int], list[str]]:
    """What ``"".join(chunks(row, 0))`` makes ``json.dumps(row, separators=(",", ":"),
    ensure_ascii=False)`` of, for a row of ``_PLAIN`` values: the json module's C encoder,
    called without ``dumps``'s Python around it (a third of an insert's rendering), or the
    same text built in Python where there is none."""
    # Not in the json module's stubs, and None where the module was built without C.
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _object_chunks_in_python
    # No cycle markers (the row is flat), no default (every value is plain), no NaN.
    chunks: Callable[[dict[str, Any], int], list[str]] = make(
        None, None, _encode_text, None, ":", ",", False, False, False
    )
    return chunks


_object_chunks = _object_chunks_maker()


def json_text(value: Any) -> str:
    """A SQLite value as ``json.dumps(json_value(value), ensure_ascii=False)`` writes it."""
    kind = type(value)
    if kind is int:
        return _int_text(value)
    if kind is str:
        return _encode_text(value)
    if value is None:
        return "null"
    if kind is float:
        return "null" if math.isinf(value) else _float_text(value)
    if kind is bytes:
        return '"' + base64.b64encode(value).decode("ascii") + '"'
    return json.dumps(value, ensure_ascii=False)


class Shape:
    """What rendering one table's changes needs, worked out once per table (and kept)."""

    __slots__ = (
        "columns",
        "insert_prefix",
        "key_columns",
        "key_names",
        "names",
        "others",
        "prefixes",
    )

    def __init__(self, path: str, name: str, table: TableInfo) -> None:
        self.columns = table.columns
        self.key_columns = table.primary_key
        # Each column's name as a JSON object key, with its colon.
        self.names = tuple(_encode_text(column) + ":" for column in table.columns)
        self.key_names = tuple(self.names[index] for index in table.primary_key)
        # The columns outside the key, which an update's before and after show.
        self.others = tuple(
            index for index in range(len(table.columns)) if index not in table.primary_key
        )
        where = f'"world":{_encode_text(path)},"table":{_encode_text(name)},"op":'
        self.prefixes = {op: f'{where}"{op}","key":{{' for op in ("insert", "update", "delete")}
        # An insert's text up to its one-column key's value (the value's text follows).
        self.insert_prefix = self.prefixes["insert"] + (self.key_names[0] if self.key_names else "")


# (path, table, columns, key) -> the table's Shape, for every store of the process: a store's
# own ``shapes`` starts empty with each instance. Kept to a bound.
_SHAPES: dict[tuple[str, str, tuple[str, ...], tuple[int, ...]], Shape] = {}
_SHAPES_KEPT = 1024


def _shape(path: str, name: str, table: TableInfo) -> Shape:
    key = (path, name, table.columns, table.primary_key)
    shape = _SHAPES.get(key)
    if shape is None:
        if len(_SHAPES) >= _SHAPES_KEPT:
            # Emptied whole, which no other thread's lookup can trip over mid-way.
            _SHAPES.clear()
        shape = _SHAPES[key] = Shape(path, name, table)
    return shape


def _columns_changed(path: str, name: str, declared: int, found: int) -> str:
    return (
        f"table {name!r} of the store at {path!r} has {found} columns where its world's schema "
        f"declares {declared}: something altered it, and the change log records a table as the "
        "schema declares it. Change the world's schema instead (a store's schema is its "
        "world's); this store keeps the altered table, so writes to it fail until the instance "
        "is made again"
    )


def sort_key(record: LogRecord, raw_key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The order records of one call are kept in: by store, table, then key as SQLite orders it."""
    return (record.world, record.table, tuple(map(_sort_part, raw_key)))


def render_changes(
    path: str,
    changes: Iterable[Change],
    ordinal: int | None,
    describe_table: Callable[[str], TableInfo],
    shapes: dict[str, Shape],
    actor: str,
    records: list[LogRecord],
    texts: list[str],
) -> list[tuple[Any, ...]]:
    """Turn one node's changes into records, appended to ``records`` with their JSON texts.

    ``changes`` are ``(table, op, old, new)`` in a changeset's shape (``Capture.changes``).
    Each record's JSON text, appended to ``texts`` in step, is its ``to_dict()`` as
    ``json.dumps(..., separators=(",", ":"), ensure_ascii=False)`` writes it, so
    the state document's JSON is assembled from the texts and never re-encoded.
    Returns each appended record's raw key (the key's SQLite values), which
    ``sort_key`` orders by. ``shapes`` is the store's own cache of each table's
    ``Shape``, filled as tables appear. ``actor`` is who made the changes,
    written on every record. What raises part way leaves the records appended
    before it in place: the caller drops them.
    """
    raw_keys: list[tuple[Any, ...]] = []
    opening = '{"i":' + ("null" if ordinal is None else str(ordinal)) + ","
    # The actor closes every record's text: a key added after the ones the format always had.
    closing = _ACTOR_CLOSINGS.get(actor) or ',"actor":' + _encode_text(actor) + "}"
    plain = _PLAIN.issuperset
    join = "".join
    add_record, add_text, add_key = records.append, texts.append, raw_keys.append
    for name, op_name, old, new in changes:
        shape = shapes.get(name)
        if shape is None:
            shape = shapes[name] = _shape(path, name, describe_table(name))
        columns, names = shape.columns, shape.names
        key_columns = shape.key_columns
        row_now = new if new is not None else old
        if row_now is not None and len(row_now) != len(columns):
            raise WorldBug(_columns_changed(path, name, len(columns), len(row_now)))
        if old is None and new is not None and len(key_columns) == 1 and plain(map(type, new)):
            # An insert of integers, text and NULL under a one-column key, the usual
            # record: every value is its own JSON value, the key's among them.
            part = new[key_columns[0]]
            kind = type(part)
            key_text = (
                _int_text(part) if kind is int else _encode_text(part) if kind is str else "null"
            )
            key = {columns[key_columns[0]]: part}
            whole = dict(zip(columns, new))  # noqa: B905 (the width was checked above)
            record = (ordinal, path, name, "insert", key, None, whole, actor)
            add_record(_new_record(LogRecord, record))
            add_text(
                opening
                + shape.insert_prefix
                + key_text
                + '},"before":null,"after":'
                + join(_object_chunks(whole, 0))
                + closing
            )
            add_key((part,))
            continue
        op = _OPS[op_name]
        if op == "update":
            assert old is not None and new is not None
            source = old
            changed = [index for index in shape.others if new[index] is not _NO_CHANGE]
            if len(changed) == 1:
                # One column changed, the usual update.
                index = changed[0]
                was, now = old[index], new[index]
                before = {columns[index]: json_value(was)}
                after = {columns[index]: json_value(now)}
                body = (
                    f',"before":{{{names[index]}{json_text(was)}}},'
                    f'"after":{{{names[index]}{json_text(now)}}}'
                )
            else:
                before = {columns[index]: json_value(old[index]) for index in changed}
                after = {columns[index]: json_value(new[index]) for index in changed}
                body = (
                    ',"before":{'
                    + ",".join([names[index] + json_text(old[index]) for index in changed])
                    + '},"after":{'
                    + ",".join([names[index] + json_text(new[index]) for index in changed])
                    + "}"
                )
        else:
            row = new if op == "insert" else old
            assert row is not None
            source = row
            # The row's width was checked against the columns above, and zip's strict
            # keyword costs a seventh of a microsecond a call.
            if plain(map(type, row)):
                # Integers, text and NULL, the common row, are their own JSON values.
                whole = dict(zip(columns, row))  # noqa: B905
                text = join(_object_chunks(whole, 0))
            else:
                values = [json_value(value) for value in row]
                whole = dict(zip(columns, values))  # noqa: B905
                # A JSON value's text is the SQLite value's: json_text renders both alike.
                texts_of = [column + json_text(value) for column, value in zip(names, values)]  # noqa: B905
                text = "{" + ",".join(texts_of) + "}"
            if op == "insert":
                before, after = None, whole
                body = ',"before":null,"after":' + text
            else:
                before, after = whole, None
                body = ',"before":' + text + ',"after":null'
        if len(key_columns) == 1:
            part = source[key_columns[0]]
            raw_key: tuple[Any, ...] = (part,)
            key = {columns[key_columns[0]]: json_value(part)}
            key_text = shape.key_names[0] + json_text(part)
        else:
            raw_key = tuple([source[index] for index in key_columns])
            key = {
                columns[index]: json_value(value)
                for index, value in zip(key_columns, raw_key, strict=True)
            }
            key_text = ",".join(map(str.__add__, shape.key_names, map(json_text, raw_key)))
        add_record(_new_record(LogRecord, (ordinal, path, name, op, key, before, after, actor)))
        add_text(f"{opening}{shape.prefixes[op]}{key_text}}}{body}{closing}")
        add_key(raw_key)
    return raw_keys


class CallRecord:
    """One call dispatched to an instance: what was asked, and what it raised.

    ``arguments`` is a copy taken when the call was made, each argument whole
    up to ``seahaven.arguments.CALL_LOG_ARGUMENT_BYTES`` of JSON text (and
    ``REFUSED_ARGUMENT_BYTES`` once the arguments were refused); one past that
    is kept as ``{"seahaven_cut": "<what it was>"}``, and ``cut`` says so.
    ``actor`` is who made the call: ``agent`` unless it was made under
    ``inst.acting_as(...)``.
    """

    __slots__ = ("actor", "arguments", "cut", "error", "tool", "tool_error")

    def __init__(self, tool: str, arguments: Mapping[str, Any], actor: str = AGENT) -> None:
        self.tool = tool
        self.actor = actor
        self.arguments: dict[str, Any]
        self.cut: bool
        self.arguments, self.cut = kept_arguments(arguments, CALL_LOG_ARGUMENT_BYTES)
        self.error: str | None = None
        self.tool_error = False

    def record_failure(self, error: BaseException) -> None:
        """Note what the call raised: a ``ToolError``'s message, or else the error's text.

        Arguments that were refused are kept only up to ``REFUSED_ARGUMENT_BYTES``.
        """
        self.tool_error = isinstance(error, ToolError)
        self.error = kept_error(
            error.message if isinstance(error, ToolError) else (str(error) or type(error).__name__)
        )
        if isinstance(error, ArgumentError) and self.arguments:
            self.arguments, cut = kept_arguments(self.arguments, REFUSED_ARGUMENT_BYTES)
            self.cut = self.cut or cut

    def to_dict(self) -> dict[str, Any]:
        """The published shape: a ``ToolError``'s message as written, anything else hidden."""
        if self.error is None:
            error = None
        elif self.tool_error:
            error = self.error
        else:
            error = "internal error"
        return {
            "tool": self.tool,
            "arguments": to_jsonable_python(self.arguments, fallback=repr),
            "error": error,
            "actor": self.actor,
        }

    def __repr__(self) -> str:
        if self.actor != AGENT:
            return f"CallRecord(tool={self.tool!r}, error={self.error!r}, actor={self.actor!r})"
        return f"CallRecord(tool={self.tool!r}, error={self.error!r})"


# How many records a log made with ``prepare=True`` builds the published dicts of at once.
PREPARED_BATCH = 64


class ChangeLog:
    """An instance's change log: each record with its JSON text, and where each call's records are.

    Records are appended a call (or a ``bulk()`` block) at a time. Each call's
    records are found by its ordinal without scanning, so reading the last
    call costs the size of that call, not of the log; the JSON texts sit beside
    the records, so the state document's text is a join.

    A log made with ``prepare=True`` (an instance whose own state format
    carries the whole log) also builds the records' published dicts as they
    are appended, ``PREPARED_BATCH`` records at a time, and ``published_all()``
    hands those out rather than copying the records again: the first state
    document of an episode is then a list of dicts already built, whatever the
    log's length, and at most a batch's worth built when it is read.
    """

    __slots__ = ("_calls", "_fresh", "_fresh_from", "prepare", "records", "texts")

    def __init__(self, *, prepare: bool = False) -> None:
        self.records: list[LogRecord] = []
        """Every record, oldest first. The framework's to append to through ``extend``."""
        self.texts: list[str] = []
        """Each record's JSON text, in step with ``records``."""
        self.prepare = prepare
        """Whether each record's published dict is built as it is appended."""
        # ordinal -> (first index, index past the last) of that call's records.
        self._calls: dict[int, tuple[int, int]] = {}
        # The published dicts of records[_fresh_from:_fresh_from + len(_fresh)], built after they
        # were appended and never handed out: the log keeps no reference to a dict once a
        # caller has it. The records after those wait to be built as a batch.
        self._fresh: list[dict[str, Any]] = []
        self._fresh_from = 0

    def __len__(self) -> int:
        return len(self.records)

    def _prepared(self) -> None:
        # Built a batch at a time: one dict at a time, as each call ends, cost a call more
        # than the dicts themselves (a function call and a list per call).
        start = self._fresh_from + len(self._fresh)
        if not self.prepare:
            self._fresh_from = len(self.records)
        elif len(self.records) - start >= PREPARED_BATCH:
            self._fresh += published(self.records[start:])

    def extend(self, records: list[LogRecord], texts: list[str]) -> None:
        """Append one stretch of work's records; a call's records arrive together, in one run."""
        start = len(self.records)
        self.records.extend(records)
        self.texts.extend(texts)
        calls = self._calls
        previous: int | None = None
        for position, record in enumerate(records, start):
            ordinal = record.i
            if ordinal is not None and ordinal != previous:
                calls[ordinal] = (position, position + 1)
            elif ordinal is not None:
                calls[ordinal] = (calls[ordinal][0], position + 1)
            previous = ordinal
        self._prepared()

    def extend_call(self, ordinal: int, records: list[LogRecord], texts: list[str]) -> None:
        """Append the records of call ``ordinal`` alone (each record's ``i`` is ``ordinal``)."""
        start = len(self.records)
        self.records.extend(records)
        self.texts.extend(texts)
        self._calls[ordinal] = (start, start + len(records))
        self._prepared()

    def published_all(self) -> list[dict[str, Any]]:
        """``published(self.records)``: a new list of new dicts the caller owns.

        The dicts built when records were appended and not handed out yet are
        handed out now, and the log forgets them; the records before them were
        handed out by an earlier read (or never prepared) and are copied again.
        """
        fresh, start = self._fresh, self._fresh_from
        records = self.records
        self._fresh = []
        self._fresh_from = len(records)
        # The records logged since the last batch, built now.
        fresh += published(records[start + len(fresh) :])
        if start == 0:
            return fresh
        document = published(records[:start])
        document += fresh
        return document

    def of_call(self, ordinal: int) -> tuple[list[LogRecord], list[str]]:
        """The records call ``ordinal`` made, and their texts (empty when it made none)."""
        span = self._calls.get(ordinal)
        if span is None:
            return [], []
        start, end = span
        return self.records[start:end], self.texts[start:end]
