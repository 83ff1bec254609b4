"""What the built-in checks share: a ``where`` checked, matched against a row, put in
SQL and in words; the end state's rows read; a failing check's reasons listed.

A ``where`` maps columns to a value, a list of values (any of them) or a mapping of
``OPERATORS``; plain values are compared by SQL, operators tested in Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from seahaven.errors import DbError, WorldBug
from seahaven.grading.episode import Episode
from seahaven.grading.fold import NetChange
from seahaven.grading.values import same, show

Where = Mapping[str, Any]

# A change's kind as a reason says it was done.
PAST = {"insert": "inserted", "update": "updated", "delete": "deleted"}
# How many offending rows a failing check names before it says "and N more".
_NAMED = 5


def identifier(value: Any, what: str) -> str:
    """The name ``value`` is, checked: a non-empty string, or a ``WorldBug`` naming ``what``."""
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


def parse_where(value: Any, what: str) -> dict[str, Any] | None:
    """A ``where`` checked: column names to values, lists of values or operator mappings."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise WorldBug(f"{what} must map column names to values, as {{status: paid}}")
    checked: dict[str, Any] = {}
    for column, expected in value.items():
        identifier(column, f"{what}: a column")
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


def value_matches(actual: Any, expected: Any) -> bool:
    """Whether a column's value is what ``where`` (or ``to``) asks of it."""
    if isinstance(expected, Mapping):
        return all(_passes(actual, name, argument) for name, argument in expected.items())
    if isinstance(expected, list):
        return any(same(actual, item) for item in expected)
    return same(actual, expected)


def split_where(where: Where | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``where`` as the part SQL compares (plain values) and the part Python tests (operators)."""
    plain: dict[str, Any] = {}
    tested: dict[str, Any] = {}
    for column, expected in (where or {}).items():
        (tested if isinstance(expected, Mapping) else plain)[column] = expected
    return plain, tested


def quote_column(column: str) -> str:
    """A column name quoted for SQL."""
    return '"' + column.replace('"', '""') + '"'


def where_sql(where: Where | None) -> tuple[str, list[Any]]:
    """A ``WHERE`` clause for the plain values of ``where``; operators are tested in Python."""
    if not where:
        return "", []
    clauses: list[str] = []
    params: list[Any] = []
    for column, expected in where.items():
        if isinstance(expected, Mapping):
            continue
        if expected is None:
            clauses.append(f"{quote_column(column)} IS NULL")
        elif isinstance(expected, list):
            if not expected:
                clauses.append("0")
                continue
            clauses.append(f"{quote_column(column)} IN ({', '.join('?' for _ in expected)})")
            params.extend(_sql_value(item) for item in expected)
        else:
            clauses.append(f"{quote_column(column)} = ?")
            params.append(_sql_value(expected))
    if not clauses:
        return "", []
    return " WHERE " + " AND ".join(clauses), params


def _sql_value(value: Any) -> Any:
    # SQLite holds no booleans: a YAML ``true`` means the integer 1 a store keeps.
    return int(value) if isinstance(value, bool) else value


def matches(values: Mapping[str, Any], where: Where | None) -> bool:
    """Whether a row's ``values`` match every column ``where`` names."""
    if not where:
        return True
    for column, expected in where.items():
        if column not in values:
            return False
        if not value_matches(values[column], expected):
            return False
    return True


def describe_test(expected: Mapping[str, Any]) -> str:
    """An operator mapping as words: ``contains "INV-0011" and >= 5``."""
    words = {"not": "is not", "at_least": ">=", "at_most": "<="}
    return " and ".join(
        f"{words.get(name, name)} {show(argument)}" for name, argument in expected.items()
    )


def describe_value(column: str, expected: Any) -> str:
    """One column of a ``where`` as words: ``status=paid``, ``amount >= 5``."""
    if isinstance(expected, Mapping):
        return f"{column} {describe_test(expected)}"
    if isinstance(expected, list):
        return f"{column} in {show(expected)}"
    return f"{column}={show(expected)}"


def describe_where(where: Where | None) -> str:
    """A ``where`` as words, `` where ...``; nothing for no ``where``."""
    if not where:
        return ""
    return " where " + ", ".join(
        describe_value(column, expected) for column, expected in where.items()
    )


def table_name(store: str, table: str) -> str:
    """A table as a reason names it: bare in the main store, else ``store.table``."""
    return table if store == "main" else f"{store}.{table}"


def rows_word(count: int) -> str:
    """A count of rows as words: ``1 row``, ``3 rows``."""
    return "1 row" if count == 1 else f"{count} rows"


def listing(items: Sequence[str]) -> str:
    """Items joined for a reason, the first few named and the rest counted."""
    named = "; ".join(items[:_NAMED])
    if len(items) > _NAMED:
        named += f"; and {len(items) - _NAMED} more"
    return named


def read_rows(
    episode: Episode, store: str, table: str, sql: Callable[[str], str], params: Sequence[Any]
) -> list[dict[str, Any]]:
    """Rows of the end state; SQLite's refusal (a table that is not there) is the grader's bug."""
    try:
        return episode.read(table, sql, params, store=store)
    except DbError as error:
        raise WorldBug(f"the check's query failed: {error.sqlite_message}") from None


def end_row(episode: Episode, change: NetChange) -> Mapping[str, Any]:
    """The row a change left, as the end state holds it (the change's own values if gone)."""
    clause, params = where_sql(dict(change.key))
    rows = read_rows(
        episode, change.world, change.table, lambda name: f"SELECT * FROM {name}{clause}", params
    )
    return rows[0] if rows else change.values()


def changes_matching(
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
            values = end_row(episode, change)
        if matches(values, where):
            found.append(change)
    return found


def one_of(args: Mapping[str, Any], names: Sequence[str], what: str) -> str:
    """The one of ``names`` that ``args`` gives; a ``WorldBug`` if none or several."""
    given = [name for name in names if args.get(name) is not None]
    if len(given) != 1:
        raise WorldBug(f"{what} takes exactly one of {', '.join(names)}; it was given {given}")
    return given[0]


def describe_change(change: NetChange) -> str:
    """A net change as a reason names it: the row, the kind of change, and who made it."""
    # Who made it, once someone other than the agent has acted in the episode.
    who = "" if change.actors in ((), ("agent",)) else f" by {' and '.join(change.actors)}"
    if change.op == "update":
        columns = ", ".join(change.after or {})
        return f"{change.where} update of {columns}{who}"
    return f"{change.where} {change.op}{who}"
