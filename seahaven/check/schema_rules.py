"""SH101 to SH104: the schema rules, asked of a real database rather than read from the text."""

from __future__ import annotations

from collections.abc import Iterator

from seahaven.check.model import CheckContext, Finding, Rule
from seahaven.check.sqltext import wall_clock_expressions

__all__ = ["RULES"]


def _not_strict(ctx: CheckContext) -> Iterator[Finding]:
    schema = ctx.schema
    if schema is None:
        return
    for table in schema.tables.values():
        # A virtual table cannot be STRICT, and FTS5's shadow tables are its own business.
        if table.kind == "table" and not table.strict:
            path, line = schema.locate("table", table.name)
            yield NOT_STRICT.finding(
                path,
                line,
                f"table {table.name!r} is not STRICT",
                fix=f"append STRICT to the CREATE TABLE {table.name}",
            )


def _no_primary_key(ctx: CheckContext) -> Iterator[Finding]:
    schema = ctx.schema
    if schema is None:
        return
    for table in schema.tables.values():
        if table.kind == "table" and not table.primary_key:
            path, line = schema.locate("table", table.name)
            yield NO_PRIMARY_KEY.finding(
                path,
                line,
                f"table {table.name!r} declares no PRIMARY KEY, so the change log cannot "
                "identify its rows",
                fix=f"give {table.name} a PRIMARY KEY; SQLite's implicit rowid is not one",
            )


def _wall_clock(ctx: CheckContext) -> Iterator[Finding]:
    schema = ctx.schema
    if schema is None:
        return
    shadows = {name for name, table in schema.tables.items() if table.kind == "shadow"}
    for item in schema.objects:
        if item.name in shadows:
            continue
        found = wall_clock_expressions(item.sql)
        if not found:
            continue
        path, line = schema.locate(item.kind, item.name)
        yield WALL_CLOCK.finding(
            path,
            line,
            f"{item.kind} {item.name!r} reads the wall clock ({', '.join(dict.fromkeys(found))})",
        )


def _does_not_execute(ctx: CheckContext) -> Iterator[Finding]:
    schema = ctx.schema
    if schema is None or schema.failure is None:
        return
    failure = schema.failure
    yield DOES_NOT_EXECUTE.finding(
        failure.path, failure.line, f"the schema does not execute: {failure.message}"
    )


NOT_STRICT = Rule(
    code="SH101",
    severity="error",
    title="a table that is not STRICT",
    fix="append STRICT to the CREATE TABLE",
    check=_not_strict,
)
NO_PRIMARY_KEY = Rule(
    code="SH102",
    severity="error",
    title="a table with no explicit primary key",
    fix="give the table a PRIMARY KEY; SQLite's implicit rowid is not one",
    check=_no_primary_key,
)
WALL_CLOCK = Rule(
    code="SH103",
    severity="error",
    title="a wall-clock expression anywhere in the schema",
    fix=(
        "write the timestamp from world code with ctx.clock.iso(), so every door of the world "
        "uses one format"
    ),
    check=_wall_clock,
)
DOES_NOT_EXECUTE = Rule(
    code="SH104",
    severity="error",
    title="a schema that does not execute",
    fix=(
        "fix the statement SQLite names; every *.sql file under schema/ is run in filename "
        "order, against a blank database"
    ),
    check=_does_not_execute,
)

RULES: tuple[Rule, ...] = (NOT_STRICT, NO_PRIMARY_KEY, WALL_CLOCK, DOES_NOT_EXECUTE)
