"""The built-in graders, the ways to combine them, and graders written as Python.

A grader reads an ``Episode`` and returns a ``Grade``. Each built-in grader is
also data: ``spec()`` gives the ``{kind: arguments}`` mapping a scenario's YAML
holds, and ``seahaven.grading.spec.grader_from_spec`` builds the grader back
from it, so a scenario's content hash covers exactly what it grades.

The checks, by what they read:

- the end state, through SQL on the read-only view: ``exists``, ``absent``,
  ``count``;
- the net change of each row (the fold), with the end state to find rows:
  ``changed``, ``deleted``, ``unchanged``, ``nothing_else_changed``,
  ``matches_solution``;
- what the agent did: ``answer``, ``submitted``, ``called``;
- and the combinators ``all_of`` (every part; the lowest score), ``any_of``
  (some part; the highest score) and ``weighted`` (partial credit), plus
  ``python`` for any callable.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import linecache
import math
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from seahaven.errors import DbError, WorldBug
from seahaven.grading.actors import actor_filter
from seahaven.grading.episode import Episode
from seahaven.grading.fold import NetChange
from seahaven.grading.grade import Check, Grade
from seahaven.grading.values import as_number, canonical, same, show
from seahaven.registry.targets import import_target

__all__ = [
    "OPERATORS",
    "Absent",
    "AllOf",
    "Allowance",
    "Answer",
    "AnyOf",
    "Called",
    "Changed",
    "Count",
    "Deleted",
    "Exists",
    "Grader",
    "MatchesSolution",
    "NothingElseChanged",
    "PythonGrader",
    "Reference",
    "Submitted",
    "Unchanged",
    "Weighted",
    "as_grader",
]

Where = Mapping[str, Any]

_PAST = {"insert": "inserted", "update": "updated", "delete": "deleted"}
# How many offending rows a failing check names before it says "and N more".
_NAMED = 5


@dataclass(frozen=True, slots=True)
class Reference:
    """Something a grader names that must exist: a store's table and columns, or a tool."""

    store: str | None = None
    table: str | None = None
    columns: tuple[str, ...] = ()
    tool: str | None = None


class Grader(ABC):
    """Reads a finished episode and grades it."""

    kind: ClassVar[str]

    @abstractmethod
    def grade(self, episode: Episode) -> Grade:
        """The grade of ``episode``."""

    @abstractmethod
    def spec(self) -> Any:
        """This grader as data: ``{kind: arguments}``, what a scenario's YAML writes."""

    def references(self) -> Iterator[Reference]:
        """The tables, columns and tools this grader names, for ``seahaven scenarios check``."""
        return iter(())

    def parts(self) -> tuple[Grader, ...]:
        """The graders this one combines; none for a check."""
        return ()

    def walk(self) -> Iterator[Grader]:
        """This grader and every grader inside it, depth first."""
        yield self
        for part in self.parts():
            yield from part.walk()

    def __call__(self, episode: Episode) -> Grade:
        return self.grade(episode)

    def __repr__(self) -> str:
        return f"<grader {show(self.spec(), 120)}>"


# --- helpers --------------------------------------------------------------------------------


def _identifier(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise WorldBug(f"{what} must be a name, a non-empty string; got {value!r}")
    return value


# What a ``where`` may say about a column instead of giving its value:
# ``{text: {contains: INV-0011}}``, ``{amount: {at_least: 5000}}``, ``{detached_at: {not: null}}``.
OPERATORS: tuple[str, ...] = ("contains", "pattern", "not", "at_least", "at_most")


def _plain(value: Any) -> bool:
    return not isinstance(value, Mapping | list)


def _operators(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """Check one column's operator mapping; a ``WorldBug`` says what each operator takes."""
    if not value:
        raise WorldBug(f"{what}: an empty mapping tests nothing; use one of {', '.join(OPERATORS)}")
    checked: dict[str, Any] = {}
    for name, argument in value.items():
        if name not in OPERATORS:
            raise WorldBug(
                f"{what}: {name!r} is not an operator; compare a column to a value, a list of "
                f"values (any of them), or a mapping of {', '.join(OPERATORS)}"
            )
        if name == "contains":
            pieces = argument if isinstance(argument, list) else [argument]
            if not pieces or not all(isinstance(piece, str) and piece for piece in pieces):
                raise WorldBug(f"{what}: contains takes a piece of text or a list of them")
        elif name == "pattern":
            if not isinstance(argument, str):
                raise WorldBug(f"{what}: pattern takes a regular expression, as text")
            try:
                re.compile(argument)
            except re.error as error:
                raise WorldBug(
                    f"{what}: pattern {argument!r} is not a regular expression: {error}"
                ) from None
        elif name == "not":
            if not (
                _plain(argument)
                or (isinstance(argument, list) and all(_plain(item) for item in argument))
            ):
                raise WorldBug(f"{what}: not takes a value or a list of plain values")
        elif isinstance(argument, bool) or not isinstance(argument, int | float):
            raise WorldBug(f"{what}: {name} takes a number, not {argument!r}")
        checked[str(name)] = argument
    return checked


def _where(value: Any, what: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise WorldBug(f"{what} must map column names to values, as {{status: paid}}")
    checked: dict[str, Any] = {}
    for column, expected in value.items():
        _identifier(column, f"{what}: a column")
        if isinstance(expected, Mapping):
            checked[column] = _operators(expected, f"{what}.{column}")
            continue
        if isinstance(expected, list) and any(
            isinstance(item, Mapping | list) for item in expected
        ):
            raise WorldBug(f"{what}.{column}: a list of values holds plain values only")
        checked[column] = expected
    return checked


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _passes(actual: Any, name: str, argument: Any) -> bool:
    """Whether a column's value passes one operator."""
    if name == "contains":
        if not isinstance(actual, str):
            return False
        pieces = argument if isinstance(argument, list) else [argument]
        return all(piece.casefold() in actual.casefold() for piece in pieces)
    if name == "pattern":
        return isinstance(actual, str) and re.search(argument, actual, re.IGNORECASE) is not None
    if name == "not":
        unwanted = argument if isinstance(argument, list) else [argument]
        return not any(same(actual, item) for item in unwanted)
    number, bound = _number(actual), float(argument)
    if number is None:
        return False
    return number >= bound if name == "at_least" else number <= bound


def _value_matches(actual: Any, expected: Any) -> bool:
    """Whether a column's value is what ``where`` (or ``to``) asks of it."""
    if isinstance(expected, Mapping):
        return all(_passes(actual, name, argument) for name, argument in expected.items())
    if isinstance(expected, list):
        return any(same(actual, item) for item in expected)
    return same(actual, expected)


def _split_where(where: Where | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``where`` as the part SQL compares (plain values) and the part Python tests (operators)."""
    plain: dict[str, Any] = {}
    tested: dict[str, Any] = {}
    for column, expected in (where or {}).items():
        (tested if isinstance(expected, Mapping) else plain)[column] = expected
    return plain, tested


def _quote(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _where_sql(where: Where | None) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause for the plain values of ``where``; operators are tested in Python."""
    if not where:
        return "", []
    clauses: list[str] = []
    params: list[Any] = []
    for column, expected in where.items():
        if isinstance(expected, Mapping):
            continue
        if expected is None:
            clauses.append(f"{_quote(column)} IS NULL")
        elif isinstance(expected, list):
            if not expected:
                clauses.append("0")
                continue
            clauses.append(f"{_quote(column)} IN ({', '.join('?' for _ in expected)})")
            params.extend(_sql_value(item) for item in expected)
        else:
            clauses.append(f"{_quote(column)} = ?")
            params.append(_sql_value(expected))
    if not clauses:
        return "", []
    return " WHERE " + " AND ".join(clauses), params


def _sql_value(value: Any) -> Any:
    # SQLite holds no booleans: a YAML ``true`` means the integer 1 a store keeps.
    return int(value) if isinstance(value, bool) else value


def _matches(values: Mapping[str, Any], where: Where | None) -> bool:
    if not where:
        return True
    for column, expected in where.items():
        if column not in values:
            return False
        if not _value_matches(values[column], expected):
            return False
    return True


def _describe_test(expected: Mapping[str, Any]) -> str:
    """An operator mapping as words: ``contains "INV-0011" and >= 5``."""
    words = {"not": "is not", "at_least": ">=", "at_most": "<="}
    return " and ".join(
        f"{words.get(name, name)} {show(argument)}" for name, argument in expected.items()
    )


def _describe_value(column: str, expected: Any) -> str:
    if isinstance(expected, Mapping):
        return f"{column} {_describe_test(expected)}"
    if isinstance(expected, list):
        return f"{column} in {show(expected)}"
    return f"{column}={show(expected)}"


def _describe_where(where: Where | None) -> str:
    if not where:
        return ""
    return " where " + ", ".join(
        _describe_value(column, expected) for column, expected in where.items()
    )


def _name(store: str, table: str) -> str:
    return table if store == "main" else f"{store}.{table}"


def _rows_word(count: int) -> str:
    return "1 row" if count == 1 else f"{count} rows"


def _listing(items: Sequence[str]) -> str:
    named = "; ".join(items[:_NAMED])
    if len(items) > _NAMED:
        named += f"; and {len(items) - _NAMED} more"
    return named


def _read(
    episode: Episode, store: str, table: str, sql: Callable[[str], str], params: Sequence[Any]
) -> list[dict[str, Any]]:
    """Rows of the end state; SQLite's refusal (a table that is not there) is the grader's bug."""
    try:
        return episode.read(table, sql, params, store=store)
    except DbError as error:
        raise WorldBug(f"the check's query failed: {error.sqlite_message}") from None


def _end_row(episode: Episode, change: NetChange) -> Mapping[str, Any]:
    """The row a change left, as the end state holds it (the change's own values if gone)."""
    clause, params = _where_sql(dict(change.key))
    rows = _read(
        episode, change.world, change.table, lambda name: f"SELECT * FROM {name}{clause}", params
    )
    return rows[0] if rows else change.values()


def _changes_matching(
    episode: Episode, store: str, table: str, where: Where | None
) -> list[NetChange]:
    """The net changes to rows of a table that match ``where``, deleted rows included.

    A row still in the store is matched on its values at the end, a deleted row
    on the values it had. The change itself holds the end values of an inserted
    row and of an updated row's key and changed columns; the end state is read
    only for an updated row whose ``where`` names a column the update left alone.
    """
    found: list[NetChange] = []
    for change in episode.changes.in_table(table, store):
        values: Mapping[str, Any] = change.values()
        if where and change.op == "update" and not set(where) <= set(values):
            values = _end_row(episode, change)
        if _matches(values, where):
            found.append(change)
    return found


def _one_of(args: Mapping[str, Any], names: Sequence[str], what: str) -> str:
    given = [name for name in names if args.get(name) is not None]
    if len(given) != 1:
        raise WorldBug(f"{what} takes exactly one of {', '.join(names)}; it was given {given}")
    return given[0]


# --- the end state ----------------------------------------------------------------------------


class _TableCheck(Grader):
    """A check about the rows of one table that match ``where``."""

    def __init__(self, table: str, where: Where | None = None, *, store: str = "main") -> None:
        self.table = _identifier(table, f"{self.kind}: table")
        self.store = _identifier(store, f"{self.kind}: store")
        self.where = _where(where, f"{self.kind}: where")

    def _base_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"table": self.table}
        if self.store != "main":
            spec["store"] = self.store
        if self.where:
            spec["where"] = dict(self.where)
        return spec

    def references(self) -> Iterator[Reference]:
        yield Reference(store=self.store, table=self.table, columns=tuple(self.where or ()))

    def _count(self, episode: Episode) -> int:
        plain, tested = _split_where(self.where)
        clause, params = _where_sql(plain)
        if not tested:
            rows = _read(
                episode,
                self.store,
                self.table,
                lambda name: f"SELECT count(*) AS n FROM {name}{clause}",
                params,
            )
            return int(rows[0]["n"]) if rows else 0
        # Operators are tested in Python, on the rows the plain values leave.
        columns = ", ".join(_quote(column) for column in tested)
        rows = _read(
            episode,
            self.store,
            self.table,
            lambda name: f"SELECT {columns} FROM {name}{clause}",
            params,
        )
        return sum(1 for row in rows if _matches(row, tested))

    def _title(self, verb: str) -> str:
        return f"{verb} {_name(self.store, self.table)}{_describe_where(self.where)}"


class Exists(_TableCheck):
    """At the end, at least one row of ``table`` matches ``where``."""

    kind = "exists"

    def spec(self) -> Any:
        return {self.kind: self._base_spec()}

    def grade(self, episode: Episode) -> Grade:
        found = self._count(episode)
        where = _describe_where(self.where) or " at all"
        why = (
            f"{_rows_word(found)} of {_name(self.store, self.table)} match"
            f"{'es' if found == 1 else ''}{where}"
            if found
            else f"no row of {_name(self.store, self.table)} matches{where}"
        )
        return Grade.of(Check(self._title("a row of"), found > 0, why))


class Absent(_TableCheck):
    """At the end, no row of ``table`` matches ``where``."""

    kind = "absent"

    def spec(self) -> Any:
        return {self.kind: self._base_spec()}

    def grade(self, episode: Episode) -> Grade:
        found = self._count(episode)
        where = _describe_where(self.where)
        why = (
            f"no row of {_name(self.store, self.table)} matches{where}"
            if not found
            else f"{_rows_word(found)} of {_name(self.store, self.table)} still "
            f"match{'es' if found == 1 else ''}{where}"
        )
        return Grade.of(Check(self._title("no row of"), found == 0, why))


class Count(_TableCheck):
    """At the end, the number of rows of ``table`` matching ``where`` is as given."""

    kind = "count"

    def __init__(
        self,
        table: str,
        where: Where | None = None,
        *,
        store: str = "main",
        equals: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
    ) -> None:
        super().__init__(table, where, store=store)
        for name, bound in (("equals", equals), ("at_least", at_least), ("at_most", at_most)):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, int) or bound < 0
            ):
                raise WorldBug(f"count: {name} must be a whole number, 0 or more; got {bound!r}")
        if equals is None and at_least is None and at_most is None:
            raise WorldBug("count needs equals, at_least or at_most")
        if equals is not None and (at_least is not None or at_most is not None):
            raise WorldBug("count takes equals, or at_least and at_most, not both")
        self.equals, self.at_least, self.at_most = equals, at_least, at_most

    def spec(self) -> Any:
        spec = self._base_spec()
        for name in ("equals", "at_least", "at_most"):
            if getattr(self, name) is not None:
                spec[name] = getattr(self, name)
        return {self.kind: spec}

    def _wanted(self) -> str:
        if self.equals is not None:
            return f"exactly {self.equals}"
        if self.at_least is not None and self.at_most is not None:
            return f"from {self.at_least} to {self.at_most}"
        if self.at_least is not None:
            return f"at least {self.at_least}"
        return f"at most {self.at_most}"

    def grade(self, episode: Episode) -> Grade:
        found = self._count(episode)
        held = (
            found == self.equals
            if self.equals is not None
            else (self.at_least is None or found >= self.at_least)
            and (self.at_most is None or found <= self.at_most)
        )
        title = f"count of {_name(self.store, self.table)}"
        title += _describe_where(self.where)
        why = f"{_rows_word(found)} match, and {self._wanted()} {'were' if held else 'are'} wanted"
        return Grade.of(Check(title, held, why))


# --- net changes ------------------------------------------------------------------------------


class Changed(_TableCheck):
    """The episode changed a row of ``table`` matching ``where`` so it now holds ``to``.

    ``where`` is matched against the row as the episode left it. Every column in
    ``to`` must be one the episode set: a row inserted with it, or updated to
    it. ``op`` (``insert`` or ``update``) asks for one kind of change; ``by``
    and ``not_by`` (``seahaven.grading.actors``) for a change by some actors.
    """

    kind = "changed"

    def __init__(
        self,
        table: str,
        where: Where | None = None,
        *,
        to: Where | None = None,
        store: str = "main",
        op: str | None = None,
        by: Any = None,
        not_by: Any = None,
    ) -> None:
        super().__init__(table, where, store=store)
        self.to = _where(to, "changed: to")
        if op not in (None, "insert", "update"):
            raise WorldBug(f"changed: op is insert or update, not {op!r}")
        self.op = op
        self.actors = actor_filter(by, not_by, what="changed")

    def spec(self) -> Any:
        spec = self._base_spec()
        if self.to:
            spec["to"] = dict(self.to)
        if self.op:
            spec["op"] = self.op
        if self.actors is not None:
            spec.update(self.actors.spec())
        return {self.kind: spec}

    def references(self) -> Iterator[Reference]:
        columns = (*tuple(self.where or ()), *tuple(self.to or ()))
        yield Reference(store=self.store, table=self.table, columns=columns)

    def grade(self, episode: Episode) -> Grade:
        what = (
            "inserted" if self.op == "insert" else "updated" if self.op == "update" else "changed"
        )
        title = f"{what} {_name(self.store, self.table)}{_describe_where(self.where)}"
        if self.to:
            title += " to " + ", ".join(_describe_value(k, v) for k, v in self.to.items())
        if self.actors is not None:
            title += self.actors.describe()
        candidates = [
            change
            for change in _changes_matching(episode, self.store, self.table, self.where)
            if change.op != "delete"
        ]
        if not candidates:
            rows = self._count(episode)
            why = (
                f"no row of {_name(self.store, self.table)}{_describe_where(self.where)} "
                "is left in the store"
                if rows == 0
                else f"{_rows_word(rows)} match{'es' if rows == 1 else ''}, but the episode "
                "did not change any of them"
            )
            return Grade.of(Check(title, False, why))
        misses: list[str] = []
        for change in candidates:
            if self.actors is not None and not self.actors.change(change):
                misses.append(self.actors.why_not(change))
                continue
            if self.op is not None and change.op != self.op:
                misses.append(f"{change.where} was {_PAST[change.op]}, not {_PAST[self.op]}")
                continue
            problem = self._short_of(change)
            if problem is None:
                who = f" by {' and '.join(change.actors)}" if self.actors is not None else ""
                return Grade.of(
                    Check(title, True, f"{change.where} was {_PAST[change.op]}{who} as asked")
                )
            misses.append(problem)
        return Grade.of(Check(title, False, _listing(misses)))

    def _short_of(self, change: NetChange) -> str | None:
        after = change.after or {}
        for column, expected in (self.to or {}).items():
            if column not in after:
                return f"{change.where}: the episode did not set {column}"
            value = after[column]
            if not _value_matches(value, expected):
                wanted = (
                    f"one that {_describe_test(expected)}"
                    if isinstance(expected, Mapping)
                    else show(expected)
                )
                return f"{change.where}: {column} is {show(value)}, not {wanted}"
        return None


class _ActorCheck(_TableCheck):
    """A check about one table's rows that may count only the changes of some actors."""

    def __init__(
        self,
        table: str,
        where: Where | None = None,
        *,
        store: str = "main",
        by: Any = None,
        not_by: Any = None,
    ) -> None:
        super().__init__(table, where, store=store)
        self.actors = actor_filter(by, not_by, what=self.kind)

    def spec(self) -> Any:
        spec = self._base_spec()
        if self.actors is not None:
            spec.update(self.actors.spec())
        return {self.kind: spec}

    def _counted(self, change: NetChange) -> bool:
        return self.actors is None or self.actors.change(change)

    def _by(self) -> str:
        return "" if self.actors is None else self.actors.describe()


class Deleted(_ActorCheck):
    """The episode deleted a row of ``table`` that matched ``where`` when it was deleted."""

    kind = "deleted"

    def grade(self, episode: Episode) -> Grade:
        title = f"deleted a row of {_name(self.store, self.table)}{_describe_where(self.where)}"
        title += self._by()
        matching = [
            change
            for change in episode.changes.in_table(self.table, self.store)
            if change.op == "delete" and _matches(change.values(), self.where)
        ]
        gone = [change for change in matching if self._counted(change)]
        if gone:
            return Grade.of(Check(title, True, f"{gone[0].where} was deleted"))
        if matching and self.actors is not None:
            return Grade.of(Check(title, False, self.actors.why_not(matching[0])))
        return Grade.of(Check(title, False, "the episode deleted no such row"))


class Unchanged(_ActorCheck):
    """The episode left every row of ``table`` matching ``where`` as it found it.

    A row matches when it matched at the start or matches at the end, so an
    update that moves a row out of ``where`` is caught too. With ``by`` (or
    ``not_by``), only changes those actors made count against it: "the agent
    left it alone", whatever the user did.
    """

    kind = "unchanged"

    def grade(self, episode: Episode) -> Grade:
        title = f"left {_name(self.store, self.table)}{_describe_where(self.where)} as it was"
        if self.actors is not None:
            title += f" (counting changes{self._by()})"
        touched = _changes_matching(episode, self.store, self.table, self.where)
        seen = {change.row for change in touched}
        for change in episode.changes.in_table(self.table, self.store):
            if change.op == "update" and change.row not in seen:
                started = {**_end_row(episode, change), **(change.before or {})}
                if _matches(started, self.where):
                    touched.append(change)
        touched = [change for change in touched if self._counted(change)]
        if not touched:
            return Grade.of(Check(title, True, "the episode changed none of those rows"))
        described = [_describe_change(change) for change in touched]
        return Grade.of(Check(title, False, "the episode changed " + _listing(described)))


@dataclass(frozen=True, slots=True)
class Allowance:
    """A change ``nothing_else_changed`` allows: to a table, optionally only some rows or columns.

    ``where`` is matched against the row's values as the episode left it (for a
    deleted row, as it was); ``columns`` limits an update to those columns;
    ``ops`` limits the kinds of change.
    """

    table: str
    store: str = "main"
    where: Mapping[str, Any] | None = None
    columns: tuple[str, ...] | None = None
    ops: tuple[str, ...] | None = None

    def spec(self) -> Any:
        """This allowance as data: ``store.table`` when it allows the whole table."""
        if self.where is None and self.columns is None and self.ops is None:
            return self.table if self.store == "main" else f"{self.store}.{self.table}"
        spec: dict[str, Any] = {"table": self.table}
        if self.store != "main":
            spec["store"] = self.store
        if self.where is not None:
            spec["where"] = dict(self.where)
        if self.columns is not None:
            spec["columns"] = list(self.columns)
        if self.ops is not None:
            spec["ops"] = list(self.ops)
        return spec

    @classmethod
    def parse(cls, value: Any, what: str) -> Allowance:
        """An allowance from data: ``"table"``, ``"store.table"`` or a mapping."""
        if isinstance(value, Allowance):
            return value
        if isinstance(value, str):
            store, _, table = value.rpartition(".")
            return cls(table=_identifier(table, what), store=store or "main")
        if not isinstance(value, Mapping):
            raise WorldBug(f"{what}: allow a table as 'store.table', or as {{table: ..., ...}}")
        stray = sorted(set(value) - {"table", "store", "where", "columns", "ops"})
        if stray:
            raise WorldBug(f"{what} does not take {', '.join(stray)}")
        columns = value.get("columns")
        ops = value.get("ops")
        if columns is not None and (
            not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
        ):
            raise WorldBug(f"{what}.columns is a list of column names")
        if ops is not None and (
            not isinstance(ops, list) or not set(ops) <= {"insert", "update", "delete"}
        ):
            raise WorldBug(f"{what}.ops is a list of insert, update and delete")
        return cls(
            table=_identifier(value.get("table"), f"{what}.table"),
            store=_identifier(value.get("store", "main"), f"{what}.store"),
            where=_where(value.get("where"), f"{what}.where"),
            columns=tuple(columns) if columns is not None else None,
            ops=tuple(ops) if ops is not None else None,
        )

    def allows(
        self, change: NetChange, end_values: Callable[[NetChange], Mapping[str, Any]]
    ) -> bool:
        """Whether this allowance covers ``change``."""
        if change.world != self.store or change.table != self.table:
            return False
        if self.ops is not None and change.op not in self.ops:
            return False
        if (
            self.columns is not None
            and change.op == "update"
            and not set(change.after or {}) <= set(self.columns)
        ):
            return False
        if not self.where:
            return True
        values: Mapping[str, Any] = change.values()
        if not set(self.where) <= set(values):
            values = end_values(change)
        return _matches(values, self.where)


def _describe_change(change: NetChange) -> str:
    # Who made it, once someone other than the agent has acted in the episode.
    who = "" if change.actors in ((), ("agent",)) else f" by {' and '.join(change.actors)}"
    if change.op == "update":
        columns = ", ".join(change.after or {})
        return f"{change.where} update of {columns}{who}"
    return f"{change.where} {change.op}{who}"


class NothingElseChanged(Grader):
    """Every net change the episode made is one the scenario allows: no collateral damage."""

    kind = "nothing_else_changed"

    def __init__(
        self,
        allow: Iterable[Allowance | str | Mapping[str, Any]] = (),
        *,
        by: Any = None,
        not_by: Any = None,
    ) -> None:
        self.allow = tuple(
            Allowance.parse(item, f"nothing_else_changed: allow[{index}]")
            for index, item in enumerate(allow)
        )
        # With by (or not_by), only those actors' changes are held to the allowances.
        self.actors = actor_filter(by, not_by, what="nothing_else_changed")

    def spec(self) -> Any:
        spec: dict[str, Any] = {"allow": [allowance.spec() for allowance in self.allow]}
        if self.actors is not None:
            spec.update(self.actors.spec())
        return {self.kind: spec}

    def references(self) -> Iterator[Reference]:
        for allowance in self.allow:
            columns = (*tuple(allowance.where or ()), *tuple(allowance.columns or ()))
            yield Reference(store=allowance.store, table=allowance.table, columns=columns)

    def grade(self, episode: Episode) -> Grade:
        cache: dict[Any, Mapping[str, Any]] = {}

        def end_values(change: NetChange) -> Mapping[str, Any]:
            if change.op != "update":
                return change.values()
            if change.row not in cache:
                cache[change.row] = _end_row(episode, change)
            return cache[change.row]

        held = [
            change
            for change in episode.changes
            if self.actors is None or self.actors.change(change)
        ]
        stray = [
            change
            for change in held
            if not any(allowance.allows(change, end_values) for allowance in self.allow)
        ]
        allowed = ", ".join(str(allowance.spec()) for allowance in self.allow) or "nothing"
        title = f"nothing changed beyond what is allowed ({allowed})"
        if self.actors is not None:
            title = f"nothing changed{self.actors.describe()} beyond what is allowed ({allowed})"
        if not stray:
            total = len(held)
            why = (
                f"all {_rows_word(total)} the episode changed are allowed"
                if total
                else ("the episode changed nothing")
            )
            return Grade.of(Check(title, True, why))
        described = [_describe_change(change) for change in stray]
        why = f"{_rows_word(len(stray))} changed beyond what is allowed: {_listing(described)}"
        return Grade.of(Check(title, False, why))


class MatchesSolution(Grader):
    """The episode's net changes are the reference solution's, from the same start.

    Rows are matched by content, not by position or order. Columns named in
    ``ignore`` (``column``, ``table.column`` or ``store.table.column``: minted
    ids, timestamps) are left out of the comparison, and numbers compare by
    value, so ``25`` matches ``25.0``.
    """

    kind = "matches_solution"

    def __init__(self, ignore: Iterable[str] = ()) -> None:
        self.ignore = tuple(ignore)
        self._ignored_by_table: dict[tuple[str, str], frozenset[str]] = {}
        for name in self.ignore:
            if not isinstance(name, str) or not name or len(name.split(".")) > 3:
                raise WorldBug(
                    f"matches_solution: ignore {name!r}; name a column as column, "
                    "table.column or store.table.column"
                )

    def spec(self) -> Any:
        return {self.kind: {"ignore": list(self.ignore)} if self.ignore else {}}

    def references(self) -> Iterator[Reference]:
        for name in self.ignore:
            parts = name.split(".")
            if len(parts) == 3:
                yield Reference(store=parts[0], table=parts[1], columns=(parts[2],))
            elif len(parts) == 2:
                yield Reference(table=parts[0], columns=(parts[1],))

    def _ignored(self, world: str, table: str) -> frozenset[str]:
        """The columns of ``world.table`` left out, worked out once per table and kept."""
        found = self._ignored_by_table.get((world, table))
        if found is None:
            columns = set()
            for name in self.ignore:
                *scope, column = name.split(".")
                if scope in ([], [table], [world, table]):
                    columns.add(column)
            found = self._ignored_by_table[(world, table)] = frozenset(columns)
        return found

    def _form(self, change: NetChange) -> tuple[Any, ...]:
        ignored = self._ignored(change.world, change.table)
        kept = tuple(
            sorted(
                (column, canonical(value))
                for column, value in change.values().items()
                if column not in ignored
            )
        )
        return (change.world, change.table, change.op, kept)

    def _raw_form(self, change: NetChange) -> tuple[Any, ...]:
        values = change.values()  # a new dict: popping from it changes nothing else
        for column in self._ignored(change.world, change.table):
            values.pop(column, None)
        return (change.world, change.table, change.op, frozenset(values.items()))

    def _counted(self, changes: Iterable[NetChange]) -> list[NetChange]:
        """The changes that count: an update of ignored columns only is no change at all."""
        if not self.ignore:
            return list(changes)
        return [
            change
            for change in changes
            if change.op != "update"
            or not set(change.after or ()) <= self._ignored(change.world, change.table)
        ]

    def _same_as_written(self, solution: list[NetChange], changes: list[NetChange]) -> bool:
        """Whether the net changes match value for value, before any value is canonicalised.

        Equal values have equal canonical forms, so a match here is a match; the
        usual passing episode is decided without canonicalising a value.
        """
        try:
            wanted = Counter(self._raw_form(change) for change in solution)
            return wanted == Counter(self._raw_form(change) for change in changes)
        except TypeError:  # a value that does not hash, which canonical forms handle
            return False

    def same(self, solution: Iterable[NetChange], changes: Iterable[NetChange]) -> bool:
        """Whether two runs' net changes are the same as this check compares them.

        The comparison ``grade`` makes, without the reasons: what the mutant panel
        asks before it claims two writes swapped are still a right episode.
        """
        counted, mine = self._counted(solution), self._counted(changes)
        if self._same_as_written(counted, mine):
            return True
        return Counter(self._form(change) for change in counted) == Counter(
            self._form(change) for change in mine
        )

    def grade(self, episode: Episode) -> Grade:
        title = "the same net changes as the reference solution"
        if self.ignore:
            title += f" (ignoring {', '.join(self.ignore)})"
        solution = self._counted(episode.solution)
        changes = self._counted(episode.changes)
        if self._same_as_written(solution, changes):
            why = f"both changed the same {_rows_word(len(solution))}"
            return Grade.of(Check(title, True, why))
        wanted = Counter(self._form(change) for change in solution)
        got = Counter(self._form(change) for change in changes)
        if wanted == got:
            why = f"both changed the same {_rows_word(sum(wanted.values()))}"
            return Grade.of(Check(title, True, why))
        examples = {self._form(change): change for change in solution}
        examples.update({self._form(change): change for change in changes})
        missing = [examples[form] for form in (wanted - got).elements()]
        extra = [examples[form] for form in (got - wanted).elements()]
        return Grade.of(Check(title, False, self._differences(missing, extra)))

    def _differences(self, missing: list[NetChange], extra: list[NetChange]) -> str:
        """Why the two runs differ: a row both changed, value by value; then the rest."""
        unpaired: dict[tuple[Any, ...], list[NetChange]] = {}
        for change in extra:
            unpaired.setdefault(self._row_form(change), []).append(change)
        changed: list[str] = []
        not_done: list[str] = []
        for change in missing:
            partners = unpaired.get(self._row_form(change))
            if partners:
                changed.append(self._compared(change, partners.pop(0)))
            else:
                not_done.append(self._described(change))
        not_made = [self._described(change) for found in unpaired.values() for change in found]
        parts = []
        if changed:
            parts.append(_listing(changed))
        if not_done:
            parts.append(f"the solution's {_listing(not_done)} did not happen")
        if not_made:
            parts.append(f"the solution did not make {_listing(not_made)}")
        return "; ".join(parts)

    def _row_form(self, change: NetChange) -> tuple[Any, ...]:
        """The row a change is of, as the comparison sees it: its key's counted columns."""
        ignored = self._ignored(change.world, change.table)
        key = tuple(
            sorted(
                (column, canonical(value))
                for column, value in change.key.items()
                if column not in ignored
            )
        )
        return (change.world, change.table, change.op, key)

    def _described(self, change: NetChange) -> str:
        if change.op == "update":
            ignored = self._ignored(change.world, change.table)
            columns = ", ".join(column for column in change.after or {} if column not in ignored)
            return f"{change.where} update of {columns}"
        return f"{change.where} {change.op}"

    def _compared(self, solution: NetChange, episode: NetChange) -> str:
        """One row both runs changed, column by column: the episode's value and the solution's."""
        ignored = self._ignored(solution.world, solution.table)
        wanted = {k: v for k, v in _changed_values(solution).items() if k not in ignored}
        got = {k: v for k, v in _changed_values(episode).items() if k not in ignored}
        differing = []
        for column in dict.fromkeys([*wanted, *got]):
            if column in wanted and column in got and same(wanted[column], got[column]):
                continue
            left = show(got[column], _VALUE_SHOWN) if column in got else "unchanged"
            right = show(wanted[column], _VALUE_SHOWN) if column in wanted else "left unchanged"
            differing.append(f"{column} is {left}, the solution's {right}")
        shown = ", ".join(differing[:_COLUMNS_SHOWN])
        if len(differing) > _COLUMNS_SHOWN:
            shown += f", and {len(differing) - _COLUMNS_SHOWN} more columns"
        return f"{episode.where}: {shown}"


def _changed_values(change: NetChange) -> dict[str, Any]:
    """The values a change set: an update's new values, an insert's row, a delete's old row."""
    if change.op == "update":
        return dict(change.after or {})
    return change.values()


# How much of a value, and how many columns of a row, a reason quotes.
_VALUE_SHOWN = 40
_COLUMNS_SHOWN = 4


# --- what the agent did -----------------------------------------------------------------------

_UNSET: Any = object()


def _as_json(value: Any) -> Any:
    # An answer is text; when the wanted value is not, the text is read as the JSON it spells.
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else show(value, 10_000)


class Answer(Grader):
    """The agent submitted an answer, and it is the one asked for.

    One of: ``equals`` (the same value; text compared ignoring case and the
    spaces around it unless ``case_sensitive``), ``number`` (within
    ``tolerance``; text like ``"$1,250.00"`` is read as a number), ``pattern`` (a
    regular expression found in the answer) or ``contains`` (a piece of text, or
    a list of pieces, all in the answer).
    """

    kind = "answer"

    def __init__(
        self,
        *,
        equals: Any = _UNSET,
        number: float | None = None,
        tolerance: float = 0.0,
        pattern: str | None = None,
        contains: str | list[str] | None = None,
        case_sensitive: bool = False,
    ) -> None:
        modes = {
            "equals": None if equals is _UNSET else True,
            "number": number,
            "pattern": pattern,
            "contains": contains,
        }
        self.mode = _one_of(modes, list(modes), "answer")
        self.equals = equals
        # The number as given stays in the spec (and the scenario's hash); this is what compares.
        self._number_value = None if number is None else as_number(number)
        if number is not None and self._number_value is None:
            raise WorldBug(f"answer: number must be a number, not {number!r}")
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            raise WorldBug(f"answer: tolerance is a number, 0 or more; got {tolerance!r}")
        self.number = number
        self.tolerance = float(tolerance)
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:
                raise WorldBug(
                    f"answer: pattern {pattern!r} is not a regular expression: {error}"
                ) from None
        self.pattern = pattern
        if contains is not None and not (
            isinstance(contains, str)
            or (isinstance(contains, list) and all(isinstance(item, str) for item in contains))
        ):
            raise WorldBug("answer: contains is a piece of text or a list of them")
        self.contains = contains
        self.case_sensitive = bool(case_sensitive)

    def spec(self) -> Any:
        spec: dict[str, Any] = {}
        if self.mode == "equals":
            spec["equals"] = self.equals
        elif self.mode == "number":
            spec["number"] = self.number
            if self.tolerance:
                spec["tolerance"] = self.tolerance
        elif self.mode == "pattern":
            spec["pattern"] = self.pattern
        else:
            spec["contains"] = self.contains
        if self.case_sensitive:
            spec["case_sensitive"] = True
        return {self.kind: spec}

    def _fold(self, text: str) -> str:
        return text.strip() if self.case_sensitive else text.strip().casefold()

    def grade(self, episode: Episode) -> Grade:
        title = f"the answer {self._wanted()}"
        if not episode.submitted:
            return Grade.of(Check(title, False, "no answer was submitted"))
        answer = episode.answer
        if self.mode == "equals":
            if isinstance(answer, str) and isinstance(self.equals, str):
                held = self._fold(answer) == self._fold(self.equals)
            else:
                held = same(_as_json(answer), self.equals)
        elif self.mode == "number":
            value = as_number(answer)
            assert self._number_value is not None
            held = value is not None and abs(value - self._number_value) <= self.tolerance + 1e-9
        elif self.mode == "pattern":
            assert self.pattern is not None
            flags = 0 if self.case_sensitive else re.IGNORECASE
            held = re.search(self.pattern, _as_text(answer), flags) is not None
        else:
            pieces = (
                [self.contains] if isinstance(self.contains, str) else list(self.contains or [])
            )
            text = self._fold(_as_text(answer))
            held = all(self._fold(piece) in text for piece in pieces)
        why = f"the answer was {show(answer)}"
        return Grade.of(Check(title, held, why))

    def _wanted(self) -> str:
        if self.mode == "equals":
            return f"is {show(self.equals)}"
        if self.mode == "number":
            within = f" within {self.tolerance:g}" if self.tolerance else ""
            return f"is the number {self.number}{within}"
        if self.mode == "pattern":
            return f"matches /{self.pattern}/"
        return f"contains {show(self.contains)}"


class Submitted(Grader):
    """The agent ended the episode by submitting an answer."""

    kind = "submitted"

    def spec(self) -> Any:
        return self.kind

    def grade(self, episode: Episode) -> Grade:
        why = "the agent submitted an answer" if episode.submitted else "the agent never submitted"
        return Grade.of(Check("an answer was submitted", episode.submitted, why))


class Called(Grader):
    """The agent called ``tool`` (with ``arguments`` among its arguments) a number of times.

    Without a bound, at least once. ``ok`` counts only calls that returned;
    ``by`` and ``not_by`` only the calls of some actors (``seahaven.grading.actors``).
    """

    kind = "called"

    def __init__(
        self,
        tool: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        times: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
        ok: bool = False,
        by: Any = None,
        not_by: Any = None,
    ) -> None:
        self.tool = _identifier(tool, "called: tool")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise WorldBug("called: arguments maps argument names to values")
        self.arguments = dict(arguments) if arguments is not None else None
        for name, bound in (("times", times), ("at_least", at_least), ("at_most", at_most)):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, int) or bound < 0
            ):
                raise WorldBug(f"called: {name} must be a whole number, 0 or more; got {bound!r}")
        if times is not None and (at_least is not None or at_most is not None):
            raise WorldBug("called takes times, or at_least and at_most, not both")
        if times is None and at_least is None and at_most is None:
            at_least = 1
        self.times, self.at_least, self.at_most = times, at_least, at_most
        self.ok = bool(ok)
        self.actors = actor_filter(by, not_by, what="called")

    def spec(self) -> Any:
        spec: dict[str, Any] = {"tool": self.tool}
        if self.arguments is not None:
            spec["arguments"] = dict(self.arguments)
        for name in ("times", "at_least", "at_most"):
            value = getattr(self, name)
            if value is not None and not (name == "at_least" and value == 1 and self._default()):
                spec[name] = value
        if self.ok:
            spec["ok"] = True
        if self.actors is not None:
            spec.update(self.actors.spec())
        return {self.kind: spec}

    def _default(self) -> bool:
        return self.times is None and self.at_most is None and self.at_least == 1

    def references(self) -> Iterator[Reference]:
        yield Reference(tool=self.tool)

    def grade(self, episode: Episode) -> Grade:
        calls = [
            call
            for call in episode.calls_to(self.tool)
            if (not self.ok or call.get("error") is None)
            and (self.actors is None or self.actors.call(call))
            and all(
                name in (call.get("arguments") or {}) and same(call["arguments"][name], value)
                for name, value in (self.arguments or {}).items()
            )
        ]
        count = len(calls)
        if self.times is not None:
            held, wanted = count == self.times, f"exactly {self.times}"
        else:
            held = (self.at_least is None or count >= self.at_least) and (
                self.at_most is None or count <= self.at_most
            )
            if self.at_least is not None and self.at_most is not None:
                wanted = f"from {self.at_least} to {self.at_most}"
            elif self.at_least is not None:
                wanted = f"at least {self.at_least}"
            else:
                wanted = f"at most {self.at_most}"
        times = "time" if wanted.endswith(" 1") else "times"
        with_args = f" with {show(self.arguments)}" if self.arguments else ""
        by = "" if self.actors is None else self.actors.describe()
        title = f"{self.tool} called{with_args}{by} {wanted} {times}"
        why = f"it was called {count} time{'' if count == 1 else 's'}"
        return Grade.of(Check(title, held, why))


# --- combining --------------------------------------------------------------------------------


class AllOf(Grader):
    """Every part must pass; the score is the lowest part's."""

    kind = "all_of"

    def __init__(self, parts: Iterable[Any]) -> None:
        self._parts = tuple(as_grader(part, f"all_of[{index}]") for index, part in enumerate(parts))
        if not self._parts:
            raise WorldBug("all_of needs at least one grader")

    def parts(self) -> tuple[Grader, ...]:
        return self._parts

    def spec(self) -> Any:
        return {self.kind: [part.spec() for part in self._parts]}

    def grade(self, episode: Episode) -> Grade:
        grades = [part.grade(episode) for part in self._parts]
        return Grade.combine(
            min(grade.score for grade in grades), all(grade.passed for grade in grades), grades
        )


class AnyOf(Grader):
    """Some part must pass; the score is the highest part's."""

    kind = "any_of"

    def __init__(self, parts: Iterable[Any]) -> None:
        self._parts = tuple(as_grader(part, f"any_of[{index}]") for index, part in enumerate(parts))
        if not self._parts:
            raise WorldBug("any_of needs at least one grader")

    def parts(self) -> tuple[Grader, ...]:
        return self._parts

    def spec(self) -> Any:
        return {self.kind: [part.spec() for part in self._parts]}

    def grade(self, episode: Episode) -> Grade:
        grades = [part.grade(episode) for part in self._parts]
        return Grade.combine(
            max(grade.score for grade in grades), any(grade.passed for grade in grades), grades
        )


class Weighted(Grader):
    """Partial credit: the weighted mean of the parts' scores; passed at ``pass_at`` or above."""

    kind = "weighted"

    def __init__(self, parts: Iterable[tuple[Any, float]], *, pass_at: float = 1.0) -> None:
        built: list[tuple[Grader, float]] = []
        for index, (part, weight) in enumerate(parts):
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
                raise WorldBug(f"weighted[{index}]: a weight is a number, 0 or more")
            built.append((as_grader(part, f"weighted[{index}]"), float(weight)))
        if not built or sum(weight for _, weight in built) <= 0:
            raise WorldBug("weighted needs at least one grader with a weight above 0")
        if (
            isinstance(pass_at, bool)
            or not isinstance(pass_at, int | float)
            or not (0 <= pass_at <= 1)
        ):
            raise WorldBug(f"weighted: pass_at is a score from 0 to 1, not {pass_at!r}")
        self.weighted = tuple(built)
        self.pass_at = float(pass_at)

    def parts(self) -> tuple[Grader, ...]:
        return tuple(part for part, _ in self.weighted)

    def spec(self) -> Any:
        spec: dict[str, Any] = {
            "parts": [{"weight": weight, "grader": part.spec()} for part, weight in self.weighted]
        }
        if self.pass_at != 1.0:
            spec["pass_at"] = self.pass_at
        return {self.kind: spec}

    def grade(self, episode: Episode) -> Grade:
        total = sum(weight for _, weight in self.weighted)
        grades = [(part.grade(episode), weight) for part, weight in self.weighted]
        score = sum(grade.score * weight for grade, weight in grades) / total
        score = min(1.0, max(0.0, score))
        return Grade.combine(score, score >= self.pass_at - 1e-9, [grade for grade, _ in grades])


# --- graders written in Python ----------------------------------------------------------------


def _source_sha256(fn: Callable[..., Any]) -> str | None:
    try:
        # The file may have been edited since it was first read: read what it holds now.
        linecache.checkcache(inspect.getsourcefile(fn))
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _qualified(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}:{name}"


class PythonGrader(Grader):
    """Any callable ``fn(episode)``, returning a ``Grade``, a ``Check``, a bool or a score.

    A bool passes or fails; a number from 0 to 1 is the score, passing at 1. In a
    scenario's YAML, ``python: module:function`` names one. Its content hash
    covers the function's source, so editing it changes the scenario's hash.
    """

    kind = "python"

    def __init__(self, fn: Callable[[Episode], Any], *, name: str | None = None) -> None:
        if not callable(fn):
            raise WorldBug(f"python: {fn!r} is not callable")
        self.fn = fn
        self.name = name or _qualified(fn)
        # Read once, with the function: the hash covers the code this grader runs.
        self.source_sha256 = _source_sha256(fn)

    @classmethod
    def named(cls, target: str, what: str = "python") -> PythonGrader:
        """The grader at ``module:attr``, imported now."""
        found: Any = import_target(
            target, label=what, what="a function", example="my_graders:refund_issued"
        )
        return cls(found, name=target)

    def spec(self) -> Any:
        if self.source_sha256 is None:
            return {self.kind: self.name}
        return {self.kind: self.name, "source_sha256": self.source_sha256}

    def grade(self, episode: Episode) -> Grade:
        try:
            verdict = self.fn(episode)
        except WorldBug:
            raise
        except Exception as error:
            raise WorldBug(
                f"grader {self.name} raised {type(error).__name__}: {error}; a grader returns "
                "a verdict, it does not raise"
            ) from error
        if isinstance(verdict, Grade):
            return verdict
        if isinstance(verdict, Check):
            return Grade.of(verdict)
        if isinstance(verdict, bool):
            why = f"{self.name} returned {verdict}"
            return Grade.of(Check(self.name, verdict, why))
        if isinstance(verdict, int | float) and math.isfinite(verdict) and 0 <= verdict <= 1:
            score = float(verdict)
            return Grade.of(Check(self.name, score >= 1.0, f"{self.name} scored {score:g}", score))
        raise WorldBug(
            f"grader {self.name} returned {verdict!r}; return a Grade, a Check, a bool, or a "
            "score from 0 to 1"
        )


def as_grader(value: Any, what: str = "grader") -> Grader:
    """A grader object as it is, or a plain callable as a ``PythonGrader``.

    A grader's data form (a mapping, a list, a kind's name) is read by
    ``seahaven.grading.spec.as_grader``, which accepts all three.
    """
    if isinstance(value, Grader):
        return value
    if callable(value):
        return PythonGrader(value)
    raise WorldBug(
        f"{what}: {value!r} is not a grader; give a grader, or a function of the episode"
    )
