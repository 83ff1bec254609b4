"""The checks on the whole net change of an episode: ``nothing_else_changed`` (with the
``Allowance`` each allowed change is) and ``matches_solution``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.actors import actor_filter
from seahaven.grading.base import Grader, Reference
from seahaven.grading.episode import Episode
from seahaven.grading.fold import NetChange
from seahaven.grading.grade import Check, Grade
from seahaven.grading.matching import (
    describe_change,
    end_row,
    identifier,
    listing,
    matches,
    parse_where,
    rows_word,
)
from seahaven.grading.values import canonical, same, show


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
            return cls(table=identifier(table, what), store=store or "main")
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
            table=identifier(value.get("table"), f"{what}.table"),
            store=identifier(value.get("store", "main"), f"{what}.store"),
            where=parse_where(value.get("where"), f"{what}.where"),
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
        return matches(values, self.where)


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
                cache[change.row] = end_row(episode, change)
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
                f"all {rows_word(total)} the episode changed are allowed"
                if total
                else ("the episode changed nothing")
            )
            return Grade.of(Check(title, True, why))
        described = [describe_change(change) for change in stray]
        why = f"{rows_word(len(stray))} changed beyond what is allowed: {listing(described)}"
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
            why = f"both changed the same {rows_word(len(solution))}"
            return Grade.of(Check(title, True, why))
        wanted = Counter(self._form(change) for change in solution)
        got = Counter(self._form(change) for change in changes)
        if wanted == got:
            why = f"both changed the same {rows_word(sum(wanted.values()))}"
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
            parts.append(listing(changed))
        if not_done:
            parts.append(f"the solution's {listing(not_done)} did not happen")
        if not_made:
            parts.append(f"the solution did not make {listing(not_made)}")
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
