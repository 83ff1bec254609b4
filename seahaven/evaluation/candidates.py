"""Other valid values for a call's arguments, drawn from the start's rows and the tools' schemas.

A mutant that changes one argument of a write must change it to something the
world would take, or the world refuses the call and the mutant says nothing
about the grader. The values come from where valid values are:

- the **start's rows**: an argument whose value is found in a column at the
  start (``inv_e98032c6c31340fe`` in ``invoices.id``) may take another value of
  that column (another invoice's id);
- the tool's **JSON schema**: another member of an ``enum`` (also inside
  ``anyOf``), the other boolean;
- for a number, **another amount** (one more, and twice as much).

The same index builds whole calls for tools a solution never makes (collateral
and destructive extras): an ``..._id`` parameter takes an id of the table its
name points at, an enum its first member, text a filler. Which of those calls
write is never guessed: the panel makes them and reads the change log.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from seahaven.grading.episode import quote_name
from seahaven.instance.instance import Instance

__all__ = [
    "DESTRUCTIVE_VERBS",
    "FILLER_TEXT",
    "StartRows",
    "ToolShape",
    "alternatives",
    "arguments_for",
    "string_values",
    "tool_shapes",
]

# How long a text value may be and still be indexed as something an argument names (an id,
# an email, a name, a code); longer text (a message, a description) is prose.
_INDEXED_TEXT = 80
# Text given to a required parameter no row and no enum supplies.
FILLER_TEXT = "panel check"
# Words a tool's name starts with, or holds, when calling it deletes or cancels something.
# Only which tools are tried first as destructive extras is read from names; whether a call
# changed anything, and what, is read from the change log.
DESTRUCTIVE_VERBS = (
    "delete",
    "remove",
    "cancel",
    "detach",
    "deactivate",
    "archive",
    "revoke",
    "void",
    "offboard",
    "refund",
    "close",
    "reject",
)


@dataclass(frozen=True)
class Column:
    """A column of a table of a store, as the start holds it."""

    store: str
    table: str
    column: str

    def describe(self) -> str:
        """``store.table.column``, the store left out for the root's."""
        prefix = "" if self.store == "main" else f"{self.store}."
        return f"{prefix}{self.table}.{self.column}"


@dataclass
class StartRows:
    """Every row of every store at the start, indexed by the short text values they hold."""

    #: Each column's distinct values, in the order the rows gave them.
    values: dict[Column, list[Any]] = field(default_factory=dict)
    #: Where each short text value is found (case folded), primary-key columns first.
    where: dict[str, list[Column]] = field(default_factory=dict)
    #: The columns of each store's tables, by store and table.
    tables: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: The primary-key columns of each table.
    keys: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: What ``named``, ``matching`` and ``ids_of`` found, by their arguments: a pack asks the
    #: same of one start for every tool of every scenario.
    _found: dict[tuple[Any, ...], list[Any]] = field(default_factory=dict)

    @classmethod
    def read(cls, instance: Instance) -> StartRows:
        """Read every ordinary table of every store of an instance, as it stands."""
        rows = cls()
        for node in instance.world.composition().nodes:
            for table, info in sorted(node.world.schema_info.tables.items()):
                if info.kind != "table":
                    continue  # a view or a full-text index holds no rows of its own
                rows.tables[(node.path, table)] = list(info.columns)
                rows.keys[(node.path, table)] = [
                    info.columns[index] for index in info.primary_key
                ] or ["rowid"]
                for row in instance.query(f"SELECT * FROM {quote_name(table)}", store=node.path):
                    for column, value in row.items():
                        rows._add(Column(node.path, table, column), value)
        for found in rows.where.values():
            found.sort(
                key=lambda column: column.column not in rows.keys[column.store, column.table]
            )
        return rows

    def _add(self, column: Column, value: Any) -> None:
        if value is None or isinstance(value, bytes):
            return
        seen = self.values.setdefault(column, [])
        if value not in seen:
            seen.append(value)
            if isinstance(value, str) and 0 < len(value) <= _INDEXED_TEXT:
                found = self.where.setdefault(value.casefold(), [])
                if column not in found:
                    found.append(column)

    def columns_of(self, value: Any) -> list[Column]:
        """The columns holding ``value`` (text, compared ignoring case), keys first."""
        if not isinstance(value, str):
            return []
        return list(self.where.get(value.casefold(), ()))

    def others(self, column: Column, value: Any) -> list[Any]:
        """The column's other values, in the order the start holds them."""
        folded = value.casefold() if isinstance(value, str) else value
        return [
            other
            for other in self.values.get(column, ())
            if (other.casefold() if isinstance(other, str) else other) != folded
        ]

    def _remembered(self, key: tuple[Any, ...], work: Any) -> list[Any]:
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = work()
        return list(found)

    def named(self, name: str, store: str) -> list[Any]:
        """The values of the columns called ``name``, the tool's own store first."""
        return self._remembered(("named", name, store), lambda: self._named(name, store))

    def _named(self, name: str, store: str) -> list[Any]:
        columns = [column for column in self.values if column.column == name]
        columns.sort(key=lambda column: (column.store != store, column.store, column.table))
        found: list[Any] = []
        for column in columns:
            found.extend(value for value in self.values[column] if value not in found)
        return found

    def matching(self, pattern: re.Pattern[str]) -> list[Any]:
        """The values of the columns whose first values all match ``pattern``, keys first."""
        return self._remembered(("matching", pattern.pattern), lambda: self._matching(pattern))

    def _matching(self, pattern: re.Pattern[str]) -> list[Any]:
        found: list[Any] = []
        for _column, values in self.values.items():
            sample = values[:5]
            if sample and all(isinstance(v, str) and pattern.search(v) for v in sample):
                found.extend(value for value in values if value not in found)
        return found

    def ids_of(self, stem: str, store: str) -> list[Any]:
        """The key values of the table a parameter named ``<stem>_id`` points at.

        ``invoice`` finds ``invoices.id``, ``staff`` finds ``staff.id``; the
        tool's own store is searched first, then every other.
        """
        return self._remembered(("ids", stem, store), lambda: self._ids_of(stem, store))

    def _ids_of(self, stem: str, store: str) -> list[Any]:
        names = (stem + "s", stem, stem + "es", stem.removesuffix("y") + "ies")
        stores = [store, *sorted({path for path, _ in self.tables} - {store})]
        for path in stores:
            for name in names:
                if (path, name) in self.tables:
                    key = self.keys[(path, name)]
                    column = Column(
                        path, name, "id" if "id" in self.tables[(path, name)] else key[0]
                    )
                    values = self.values.get(column)
                    if values:
                        return list(values)
        return []


@dataclass(frozen=True)
class ToolShape:
    """A tool as the panel needs it: its name, its store, and its parameters' schemas."""

    name: str
    store: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...]

    @property
    def destructive(self) -> bool:
        """Whether the tool's name says it deletes or cancels (a hint for choosing extras)."""
        return any(verb in self.name for verb in DESTRUCTIVE_VERBS)


def tool_shapes(instance: Instance) -> dict[str, ToolShape]:
    """The instance's tools by name, each with the path of the store that owns it."""
    owners = {entry.name: entry.owner.path for entry in instance.world.composition().surface}
    shapes: dict[str, ToolShape] = {}
    for listing in instance.tools():
        schema = listing.get("input_schema") or {}
        shapes[listing["name"]] = ToolShape(
            name=listing["name"],
            store=owners.get(listing["name"], "main"),
            properties=dict(schema.get("properties") or {}),
            required=tuple(schema.get("required") or ()),
        )
    return shapes


def _enum(schema: Mapping[str, Any]) -> list[Any]:
    """The members a parameter's schema allows, inside ``anyOf`` too; ``null`` left out."""
    members: list[Any] = list(schema.get("enum") or ())
    for option in schema.get("anyOf") or ():
        if isinstance(option, Mapping):
            members.extend(option.get("enum") or ())
    return [member for member in members if member is not None]


def _types(schema: Mapping[str, Any]) -> set[str]:
    kinds: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(item) for item in declared)
    for option in schema.get("anyOf") or ():
        if isinstance(option, Mapping):
            kinds |= _types(option)
    return kinds


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def alternatives(
    value: Any,
    schema: Mapping[str, Any],
    rows: StartRows,
    rng: random.Random,
    *,
    limit: int,
) -> Iterator[tuple[Any, str]]:
    """Other valid values for an argument given ``value``, each with where it came from."""
    given: list[tuple[Any, str]] = []
    members = _enum(schema)
    if isinstance(value, bool):
        given.append((not value, "the other boolean"))
    elif members:
        others = [member for member in members if member != value]
        rng.shuffle(others)
        given.extend((member, "another member of its enum") for member in others)
    elif isinstance(value, int | float):
        bigger = value + 1
        given.append((bigger, "another amount"))
        given.append((value * 2 if value else 2, "another amount"))
    elif isinstance(value, str):
        for column in rows.columns_of(value):
            others = rows.others(column, value)
            rng.shuffle(others)
            given.extend(
                (other, f"another value of {column.describe()}") for other in others[:limit]
            )
            break  # the argument's kind is the first column it is found in (a key first)
    yield from given[:limit]


def _pattern(schema: Mapping[str, Any]) -> re.Pattern[str] | None:
    """The regular expression a string parameter's schema asks for, inside ``anyOf`` too."""
    found = schema.get("pattern")
    for option in schema.get("anyOf") or ():
        if found is None and isinstance(option, Mapping):
            found = option.get("pattern")
    if not isinstance(found, str):
        return None
    try:
        return re.compile(found)
    except re.error:
        return None


def _is_date(schema: Mapping[str, Any]) -> bool:
    if schema.get("format") == "date":
        return True
    return any(
        isinstance(option, Mapping) and option.get("format") == "date"
        for option in schema.get("anyOf") or ()
    )


def _fits(value: str, schema: Mapping[str, Any], pattern: re.Pattern[str] | None) -> bool:
    if pattern is not None and pattern.search(value) is None:
        return False
    if _is_date(schema) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is None:
        return False
    limit = schema.get("maxLength")
    return not (isinstance(limit, int) and len(value) > limit)


# Text tried, in order, for a required string no row supplies: the first the schema accepts.
_FILLERS = (FILLER_TEXT, "panel-check@example.test", "PANEL0001", "panel-check")


def string_values(
    name: str,
    schema: Mapping[str, Any],
    store: str,
    rows: StartRows,
    rng: random.Random,
    *,
    today: str,
) -> list[str]:
    """Values a required string parameter may take, the start's rows first, each one it accepts.

    An ``..._id`` parameter takes the ids of the table its name points at; any
    other takes the values of a column of its own name; failing those, the
    values of a column every one of whose first values the schema's pattern
    accepts (``tok_...`` tokens, ``emp_...`` ids); then a date, then filler text.
    """
    pattern = _pattern(schema)
    found: list[Any] = []
    if name == "id" or name.endswith("_id"):
        found = rows.ids_of(name.removesuffix("_id") or "id", store)
    if not found:
        found = rows.named(name, store)
    if not found and pattern is not None:
        found = rows.matching(pattern)
    values = [value for value in found if isinstance(value, str)]
    rng.shuffle(values)
    if _is_date(schema):
        values.append(today)
    values.extend(_FILLERS)
    return [value for value in values if _fits(value, schema, pattern)]


def arguments_for(
    shape: ToolShape,
    rows: StartRows,
    rng: random.Random,
    *,
    avoid: set[str],
    today: str,
    count: int = 2,
) -> list[dict[str, Any]]:
    """Up to ``count`` sets of a tool's required arguments, each from other rows if it can.

    ``avoid`` holds text (what the task names) no argument may take. A tool
    with a required parameter nothing can fill (an object, a list) gets none.
    """
    choices: list[list[Any]] = []
    for parameter in shape.required:
        schema = shape.properties.get(parameter, {})
        members = _enum(schema)
        kinds = _types(schema)
        if members:
            options: list[Any] = list(members)
            rng.shuffle(options)
        elif "boolean" in kinds:
            options = [False]
        elif "integer" in kinds:
            options = [1000]
        elif "number" in kinds:
            options = [10.0]
        elif "string" in kinds:
            options = [
                value
                for value in string_values(parameter, schema, shape.store, rows, rng, today=today)
                if value.casefold() not in avoid
            ]
        else:
            options = []
        if not options:
            return []
        choices.append(options)
    made: list[dict[str, Any]] = []
    for pick in range(count):
        arguments = {
            parameter: options[pick % len(options)]
            for parameter, options in zip(shape.required, choices, strict=True)
        }
        if arguments not in made:
            made.append(arguments)
    return made
