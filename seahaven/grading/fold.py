"""The fold of a change log: what a whole episode did to each row, netted.

The change log says what each call did; a grader usually asks what the episode
did. ``fold`` groups the records by store, table and key, combines each group in
log order (an insert then an update is one insert with the newer values; an
insert then a delete is nothing; ...), drops the rows that came back to where
they started, and sorts what is left the way records are sorted within a call.
``Changes`` holds the result with the lookups graders need.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from seahaven.grading.values import canonical
from seahaven.stores.changelog import LogRecord, json_value
from seahaven.stores.names import AGENT, SETUP

__all__ = ["Changes", "NetChange", "fold", "row_id"]

Op = Literal["insert", "update", "delete"]
RowId = tuple[str, str, tuple[tuple[str, Any], ...]]


@dataclass(frozen=True, slots=True, eq=True)
class NetChange:
    """What an episode did to one row, all its calls netted into one record.

    ``before`` and ``after`` follow the change log's rules: an insert carries
    every column in ``after``, a delete every column in ``before``, and an
    update only the columns whose value differs between the episode's start and
    its end. ``actors`` are everyone whose records of the row were netted into
    it (``agent``, ``user``, ``event:<name>``, ``setup``), in the order each
    first touched it.
    """

    world: str
    table: str
    key: Mapping[str, Any]
    op: Op
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    actors: tuple[str, ...] = ()

    __hash__ = None  # type: ignore[assignment]

    @property
    def row(self) -> RowId:
        """The row this change is about: its store, table and key, in a form that compares."""
        return row_id(self.world, self.table, self.key)

    @property
    def where(self) -> str:
        """The row as a sentence names it: ``main.invoices {"id": "inv_3"}``."""
        keys = ", ".join(f"{column}={value!r}" for column, value in self.key.items())
        return f"{self.world}.{self.table} ({keys})"

    def values(self) -> dict[str, Any]:
        """The row's values the change speaks of: key and new values; for a delete, the old row."""
        if self.op == "delete":
            return {**self.key, **(self.before or {})}
        return {**self.key, **(self.after or {})}

    def to_dict(self) -> dict[str, Any]:
        """The change-log record shape, without ``i`` (a net change belongs to no one call).

        In place of a record's one ``actor``, ``actors`` lists everyone who touched the row.
        """
        return {
            "world": self.world,
            "table": self.table,
            "op": self.op,
            "key": dict(self.key),
            "before": None if self.before is None else dict(self.before),
            "after": None if self.after is None else dict(self.after),
            "actors": list(self.actors),
        }

    def by(self, actor: str) -> bool:
        """Whether ``actor`` is among those who touched the row."""
        return actor in self.actors


def row_id(world: str, table: str, key: Mapping[str, Any]) -> RowId:
    """A row's identity: store, table and key values, whatever order or spelling the key has.

    A key read from SQLite may hold a blob where the change log holds its base64
    text, and ``25.0`` where the log holds ``25``; both name the same row.
    """
    return (
        world,
        table,
        tuple(sorted((column, canonical(json_value(value))) for column, value in key.items())),
    )


def _fields(record: LogRecord | Mapping[str, Any]) -> tuple[str, str, Op, Any, Any, Any, str]:
    if isinstance(record, LogRecord):
        return (
            record.world,
            record.table,
            record.op,
            record.key,
            record.before,
            record.after,
            record.actor,
        )
    actor = record.get("actor")
    if not isinstance(actor, str):
        # A document saved before records said who acted: a call's were the agent's, and a
        # write with no call in flight was a bulk() block's.
        actor = AGENT if record.get("i") is not None else SETUP
    return (
        record["world"],
        record["table"],
        record["op"],
        record["key"],
        record["before"],
        record["after"],
        actor,
    )


def _combine(earlier: NetChange | None, later: NetChange) -> NetChange | None:
    if earlier is None:
        return later
    pair = (earlier.op, later.op)
    if pair == ("insert", "update"):
        assert earlier.after is not None and later.after is not None
        return _replace(earlier, after={**earlier.after, **later.after})
    if pair == ("insert", "delete"):
        return None
    if pair == ("update", "update"):
        assert earlier.before is not None and later.before is not None
        assert earlier.after is not None and later.after is not None
        old = {**later.before, **earlier.before}
        new = {**earlier.after, **later.after}
        return _as_update(earlier, old, new)
    if pair == ("update", "delete"):
        assert earlier.before is not None and later.before is not None
        return _replace(later, before={**later.before, **earlier.before})
    if pair == ("delete", "insert"):
        assert earlier.before is not None and later.after is not None
        return _as_update(earlier, earlier.before, later.after)
    raise ValueError(
        f"{earlier.where}: a change log cannot hold {pair[0]} then {pair[1]} for one row"
    )


def _replace(change: NetChange, **fields: Any) -> NetChange:
    return dataclasses.replace(change, **fields)


def _as_update(base: NetChange, old: Mapping[str, Any], new: Mapping[str, Any]) -> NetChange | None:
    changed = [
        column for column in new if column not in base.key and new[column] != old.get(column)
    ]
    if not changed:
        return None
    return _replace(
        base,
        op="update",
        before={column: old.get(column) for column in changed},
        after={column: new[column] for column in changed},
    )


def _rank(value: Any) -> tuple[int, Any]:
    # The change log's own order within a call: null, numbers, text, then a blob by its base64.
    if value is None:
        return (0, 0)
    if isinstance(value, bool | int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, bytes):
        return (3, base64.b64encode(value).decode("ascii"))
    return (4, repr(value))


def _order(change: NetChange) -> tuple[Any, ...]:
    return (change.world, change.table, tuple(_rank(value) for value in change.key.values()))


def fold(log: Iterable[LogRecord | Mapping[str, Any]]) -> Changes:
    """Net a change log (``LogRecord``s, or records as the state document holds them)."""
    rows: dict[RowId, NetChange | None] = {}
    # Everyone who touched each row, in order, kept even while the row's net is nothing.
    actors: dict[RowId, tuple[str, ...]] = {}
    for record in log:
        world, table, op, key, before, after, actor = _fields(record)
        key = dict(key)
        # The row is worked out once per record here, and handed to ``Changes`` below.
        row = row_id(world, table, key)
        change = NetChange(
            world,
            table,
            key,
            op,
            None if before is None else dict(before),
            None if after is None else dict(after),
        )
        seen = actors.get(row, ())
        if actor not in seen:
            actors[row] = (*seen, actor)
        earlier = rows.get(row)
        rows[row] = change if earlier is None else _combine(earlier, change)
    # Each change made anew with its actors (a constructor call, not dataclasses.replace).
    kept = [
        (
            row,
            NetChange(
                change.world,
                change.table,
                change.key,
                change.op,
                change.before,
                change.after,
                actors[row],
            ),
        )
        for row, change in rows.items()
        if change
    ]
    kept.sort(key=lambda pair: _order(pair[1]))
    return Changes._of_rows(kept)


class Changes:
    """An episode's net changes, sorted, with the lookups a grader needs."""

    __slots__ = ("_by_row", "_by_table", "_changes")

    def __init__(self, changes: Iterable[NetChange] = ()) -> None:
        self._changes = tuple(changes)
        self._by_row = {change.row: change for change in self._changes}
        self._index()

    @classmethod
    def _of_rows(cls, pairs: list[tuple[RowId, NetChange]]) -> Changes:
        """``fold``'s result: changes already sorted, each with its row worked out."""
        made = cls.__new__(cls)
        made._changes = tuple(change for _, change in pairs)
        made._by_row = dict(pairs)
        made._index()
        return made

    def _index(self) -> None:
        self._by_table: dict[tuple[str, str], list[NetChange]] = {}
        for change in self._changes:
            self._by_table.setdefault((change.world, change.table), []).append(change)

    def __iter__(self) -> Iterator[NetChange]:
        return iter(self._changes)

    def __len__(self) -> int:
        return len(self._changes)

    def __bool__(self) -> bool:
        return bool(self._changes)

    def __repr__(self) -> str:
        return f"Changes({len(self._changes)} rows)"

    def in_table(self, table: str, world: str = "main") -> list[NetChange]:
        """The net changes to one table of one store (``main`` is the root's)."""
        return list(self._by_table.get((world, table), ()))

    def of_row(self, table: str, key: Mapping[str, Any], world: str = "main") -> NetChange | None:
        """The net change to one row, by its key; ``None`` when the row ended as it began."""
        return self._by_row.get(row_id(world, table, key))

    def tables(self) -> list[tuple[str, str]]:
        """Every ``(store, table)`` the episode changed, in order."""
        return list(self._by_table)

    def to_list(self) -> list[dict[str, Any]]:
        """Every net change in the change-log record shape, without ``i``."""
        return [change.to_dict() for change in self._changes]
