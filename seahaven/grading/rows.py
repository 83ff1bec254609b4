"""The checks on one table's rows: at the end (``exists``, ``absent``, ``count``) and
by their net change (``changed``, ``deleted``, ``unchanged``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.actors import actor_filter
from seahaven.grading.base import Grader, Reference
from seahaven.grading.episode import Episode
from seahaven.grading.fold import NetChange
from seahaven.grading.grade import Check, Grade
from seahaven.grading.matching import (
    PAST,
    Where,
    changes_matching,
    describe_change,
    describe_test,
    describe_value,
    describe_where,
    end_row,
    identifier,
    listing,
    matches,
    parse_where,
    quote_column,
    read_rows,
    rows_word,
    split_where,
    table_name,
    value_matches,
    where_sql,
)
from seahaven.grading.values import show

# --- the end state ----------------------------------------------------------------------------


class _TableCheck(Grader):
    """A check about the rows of one table that match ``where``."""

    def __init__(self, table: str, where: Where | None = None, *, store: str = "main") -> None:
        self.table = identifier(table, f"{self.kind}: table")
        self.store = identifier(store, f"{self.kind}: store")
        self.where = parse_where(where, f"{self.kind}: where")

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
        plain, tested = split_where(self.where)
        clause, params = where_sql(plain)
        if not tested:
            rows = read_rows(
                episode,
                self.store,
                self.table,
                lambda name: f"SELECT count(*) AS n FROM {name}{clause}",
                params,
            )
            return int(rows[0]["n"]) if rows else 0
        # Operators are tested in Python, on the rows the plain values leave.
        columns = ", ".join(quote_column(column) for column in tested)
        rows = read_rows(
            episode,
            self.store,
            self.table,
            lambda name: f"SELECT {columns} FROM {name}{clause}",
            params,
        )
        return sum(1 for row in rows if matches(row, tested))

    def _title(self, verb: str) -> str:
        return f"{verb} {table_name(self.store, self.table)}{describe_where(self.where)}"


class Exists(_TableCheck):
    """At the end, at least one row of ``table`` matches ``where``."""

    kind = "exists"

    def spec(self) -> Any:
        return {self.kind: self._base_spec()}

    def grade(self, episode: Episode) -> Grade:
        found = self._count(episode)
        where = describe_where(self.where) or " at all"
        why = (
            f"{rows_word(found)} of {table_name(self.store, self.table)} match"
            f"{'es' if found == 1 else ''}{where}"
            if found
            else f"no row of {table_name(self.store, self.table)} matches{where}"
        )
        return Grade.of(Check(self._title("a row of"), found > 0, why))


class Absent(_TableCheck):
    """At the end, no row of ``table`` matches ``where``."""

    kind = "absent"

    def spec(self) -> Any:
        return {self.kind: self._base_spec()}

    def grade(self, episode: Episode) -> Grade:
        found = self._count(episode)
        where = describe_where(self.where)
        why = (
            f"no row of {table_name(self.store, self.table)} matches{where}"
            if not found
            else f"{rows_word(found)} of {table_name(self.store, self.table)} still "
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
        title = f"count of {table_name(self.store, self.table)}"
        title += describe_where(self.where)
        why = f"{rows_word(found)} match, and {self._wanted()} {'were' if held else 'are'} wanted"
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
        self.to = parse_where(to, "changed: to")
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
        title = f"{what} {table_name(self.store, self.table)}{describe_where(self.where)}"
        if self.to:
            title += " to " + ", ".join(describe_value(k, v) for k, v in self.to.items())
        if self.actors is not None:
            title += self.actors.describe()
        candidates = [
            change
            for change in changes_matching(episode, self.store, self.table, self.where)
            if change.op != "delete"
        ]
        if not candidates:
            rows = self._count(episode)
            why = (
                f"no row of {table_name(self.store, self.table)}{describe_where(self.where)} "
                "is left in the store"
                if rows == 0
                else f"{rows_word(rows)} match{'es' if rows == 1 else ''}, but the episode "
                "did not change any of them"
            )
            return Grade.of(Check(title, False, why))
        misses: list[str] = []
        for change in candidates:
            if self.actors is not None and not self.actors.change(change):
                misses.append(self.actors.why_not(change))
                continue
            if self.op is not None and change.op != self.op:
                misses.append(f"{change.where} was {PAST[change.op]}, not {PAST[self.op]}")
                continue
            problem = self._short_of(change)
            if problem is None:
                who = f" by {' and '.join(change.actors)}" if self.actors is not None else ""
                return Grade.of(
                    Check(title, True, f"{change.where} was {PAST[change.op]}{who} as asked")
                )
            misses.append(problem)
        return Grade.of(Check(title, False, listing(misses)))

    def _short_of(self, change: NetChange) -> str | None:
        after = change.after or {}
        for column, expected in (self.to or {}).items():
            if column not in after:
                return f"{change.where}: the episode did not set {column}"
            value = after[column]
            if not value_matches(value, expected):
                wanted = (
                    f"one that {describe_test(expected)}"
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
        title = f"deleted a row of {table_name(self.store, self.table)}{describe_where(self.where)}"
        title += self._by()
        matching = [
            change
            for change in episode.changes.in_table(self.table, self.store)
            if change.op == "delete" and matches(change.values(), self.where)
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
        title = f"left {table_name(self.store, self.table)}{describe_where(self.where)} as it was"
        if self.actors is not None:
            title += f" (counting changes{self._by()})"
        touched = changes_matching(episode, self.store, self.table, self.where)
        seen = {change.row for change in touched}
        for change in episode.changes.in_table(self.table, self.store):
            if change.op == "update" and change.row not in seen:
                started = {**end_row(episode, change), **(change.before or {})}
                if matches(started, self.where):
                    touched.append(change)
        touched = [change for change in touched if self._counted(change)]
        if not touched:
            return Grade.of(Check(title, True, "the episode changed none of those rows"))
        described = [describe_change(change) for change in touched]
        return Grade.of(Check(title, False, "the episode changed " + listing(described)))
