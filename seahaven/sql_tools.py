"""``seahaven.sql_tools``: tools a world registers as its own, whose containment is the framework's.

``run_sql`` is a SQL door onto the world's own store: one statement per call, held
by ``seahaven.sandbox`` to the tables the world lists, read-only unless the world
says otherwise. ``describe_schema`` reads those tables' columns and foreign keys
from the live schema, so an agent can see what it may query. Both are built with
``Tool.from_function``, like any tool, and registered with ``world.tool(...)``::

    world.tool(seahaven.sql_tools.run_sql(tables=["notes"]))
    world.tool(seahaven.sql_tools.describe_schema(tables=["notes"]))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from pydantic import Field

import seahaven.sandbox as sandbox
from seahaven.declaration.context import Ctx
from seahaven.declaration.tool import Tool
from seahaven.errors import WorldBug

__all__ = ["describe_schema", "run_sql"]


def _tables(tables: Sequence[str], helper: str) -> tuple[str, ...]:
    if isinstance(tables, str) or not isinstance(tables, Iterable):
        raise WorldBug(f"{helper}(tables=...) takes a list of table names, not {tables!r}")
    names = tuple(tables)
    if not names:
        raise WorldBug(f"{helper}(tables=...) lists no table; name the tables the agent may use")
    for table in names:
        if not isinstance(table, str) or not table.strip():
            raise WorldBug(f"{helper}(tables=...) holds {table!r}; each entry is a table name")
        if "." in table:
            raise WorldBug(
                f"{helper}(tables=...) names {table!r}; a helper reads its own world's store, "
                "so name the table without a schema (an added world registers its own helper)"
            )
    lowered = [table.lower() for table in names]
    repeated = sorted({table for table in lowered if lowered.count(table) > 1})
    if repeated:
        raise WorldBug(f"{helper}(tables=...) names {', '.join(repeated)} more than once")
    return names


def _functions(functions: Sequence[str]) -> frozenset[str]:
    if isinstance(functions, str) or not isinstance(functions, Iterable):
        raise WorldBug(f"run_sql(functions=...) takes a list of function names, not {functions!r}")
    names = tuple(functions)
    for function in names:
        if not isinstance(function, str) or not function.strip():
            raise WorldBug(f"run_sql(functions=...) holds {function!r}; each is a function name")
    return frozenset(function.lower() for function in names)


def run_sql(
    *,
    name: str = "run_sql",
    tables: Sequence[str],
    read_only: bool = True,
    max_rows: int | None = None,
    max_bytes: int | None = None,
    functions: Sequence[str] = (),
    description: str | None = None,
) -> Tool:
    """A tool running one SQLite statement per call against ``tables`` of the world's store.

    It takes one argument, ``query``, and returns ``{"columns", "rows", "row_count",
    "truncated"}`` (a BLOB as base64 text). The statement may read ``tables``,
    ``sqlite_master``/``sqlite_schema`` and ``json_each``/``json_tree``, call the
    functions in ``seahaven.sandbox.ALLOWED_FUNCTIONS`` plus ``functions``, and,
    with ``read_only=False``, write ``tables`` (committing with the call). Nothing
    else: no ATTACH, pragma, schema change, transaction control or extension, no
    other table. ``max_rows`` and ``max_bytes`` (the rows as JSON text) truncate a
    result, for a product that does; unset, the whole result comes back, up to
    ``seahaven.sandbox.MAX_RESULT_BYTES``. A failure is a ``DbError`` whose message
    is SQLite's own (or what was refused, with ``refusals``), because a SQL door's
    errors are what an agent needs to fix its query.
    """
    listed = _tables(tables, "run_sql")
    if not isinstance(read_only, bool):
        raise WorldBug("run_sql(read_only=...) must be True or False")
    sandbox.check_limits(max_rows, max_bytes)
    extra = _functions(functions)
    authorizer = sandbox.Authorizer(
        listed, read_only=read_only, functions=sandbox.ALLOWED_FUNCTIONS | extra
    )
    if description is None:
        doing = "read" if read_only else "read or write"
        description = (
            f"Run one SQLite statement to {doing} the tables {', '.join(listed)}. Returns "
            "columns, rows, row_count and truncated; one statement per call."
        )
        if max_rows is not None or max_bytes is not None:
            limits = []
            if max_rows is not None:
                limits.append(f"{max_rows} rows")
            if max_bytes is not None:
                limits.append(f"{max_bytes} bytes")
            description += f" A result is cut at {' or '.join(limits)}, and truncated says so."

    def run_sql(
        ctx: Ctx,
        query: Annotated[str, Field(description="One SQLite statement.")],
    ) -> dict[str, Any]:
        result = sandbox.run_statement(
            ctx.db, query, authorizer=authorizer, max_rows=max_rows, max_bytes=max_bytes
        )
        return result.to_dict()

    return Tool.from_function(run_sql, name=name, description=description)


def describe_schema(
    *, name: str = "describe_schema", tables: Sequence[str], description: str | None = None
) -> Tool:
    """A tool with no arguments describing ``tables`` from the live schema; it writes nothing.

    It returns ``{"tables": [{"name", "columns": [{"name", "type", "nullable",
    "primary_key"}], "foreign_keys": [{"columns", "references_table",
    "references_columns"}]}]}``, in the order ``tables`` lists them. Register it
    beside a SQL door over the same tables.
    """
    listed = _tables(tables, "describe_schema")
    if description is None:
        description = (
            f"Describe the tables {', '.join(listed)}: their columns (name, type, nullable, "
            "primary_key) and foreign keys."
        )

    def describe_schema(ctx: Ctx) -> dict[str, Any]:
        return {"tables": [_describe(ctx, table) for table in listed]}

    return Tool.from_function(describe_schema, name=name, description=description)


def _describe(ctx: Ctx, table: str) -> dict[str, Any]:
    found = ctx.db.one(
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? "
        "COLLATE NOCASE",
        table,
    )
    if found is None:
        raise WorldBug(
            f"describe_schema lists table {table!r}, which this world's schema does not have; "
            "remove it from tables=, or add the table to the schema"
        )
    actual = str(found["name"])
    quoted = "'" + actual.replace("'", "''") + "'"
    columns = [
        {
            "name": row["name"],
            "type": row["type"],
            "nullable": not row["notnull"] and not row["pk"],
            "primary_key": bool(row["pk"]),
        }
        for row in ctx.db.rows(f"SELECT * FROM pragma_table_info({quoted}) ORDER BY cid")
    ]
    keys: dict[int, dict[str, Any]] = {}
    for row in ctx.db.rows(f"SELECT * FROM pragma_foreign_key_list({quoted}) ORDER BY id, seq"):
        key = keys.setdefault(
            int(row["id"]),
            {"columns": [], "references_table": row["table"], "references_columns": []},
        )
        key["columns"].append(row["from"])
        key["references_columns"].append(row["to"])
    for key in keys.values():
        if any(column is None for column in key["references_columns"]):
            # REFERENCES parent with no column list means the parent's primary key.
            parent = "'" + str(key["references_table"]).replace("'", "''") + "'"
            key["references_columns"] = [
                row["name"]
                for row in ctx.db.rows(
                    f"SELECT name FROM pragma_table_info({parent}) WHERE pk > 0 ORDER BY pk"
                )
            ]
    return {"name": actual, "columns": columns, "foreign_keys": list(keys.values())}
