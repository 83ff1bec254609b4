"""``setup_sql``: per-episode row changes, run before the startup hooks and held to rows only.

The statements run in order, in one transaction, on a connection with the root's
tables unqualified and every added node attached under its schema name. An
authorizer refuses schema changes, transaction control, ATTACH and DETACH,
pragmas that do more than report, functions off the allowlist, table-valued
functions, and writes to FTS5 shadow tables or SQLite's own tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import apsw

from seahaven.db import open_connection
from seahaven.errors import WorldBug
from seahaven.ids import node_seed
from seahaven.sandbox import ALLOWED_FUNCTIONS

if TYPE_CHECKING:
    from seahaven.instance import Instance

__all__ = ["run_setup_sql", "split_statements"]

_REPORTING_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
    }
)

_SCHEMA_ACTIONS = {
    getattr(apsw, name)
    for name in dir(apsw)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_")) and isinstance(getattr(apsw, name), int)
} | {apsw.SQLITE_ALTER_TABLE, apsw.SQLITE_REINDEX, apsw.SQLITE_ANALYZE}
_WRITES = {apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE}


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` in order, each complete, blank ones dropped."""
    statements: list[str] = []
    pending = ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if apsw.complete(pending):
            if _has_content(pending):
                statements.append(pending.strip())
            pending = ""
    if _has_content(pending.rstrip(";")):
        statements.append(pending.rstrip(";").strip())
    return statements


def _has_content(statement: str) -> bool:
    from seahaven.schema import normalise_sql

    return normalise_sql(statement).strip(" ;") != ""


class _SetupAuthorizer:
    """Rows only. Statements SQLite prepares while executing one of ours (FTS5's) pass."""

    def __init__(self, tables: set[str], shadows: set[str]) -> None:
        self.tables = tables
        self.shadows = shadows
        self.executing = False
        self.refusal: str | None = None

    def on_statement(self, event: dict[str, object]) -> None:
        if not event.get("trigger"):
            self.executing = True

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        if self.executing:
            return apsw.SQLITE_OK
        reason = self._reason(action, first, second)
        if reason is None:
            return apsw.SQLITE_OK
        if self.refusal is None:
            self.refusal = reason
        return apsw.SQLITE_DENY

    def _reason(self, action: int, first: str | None, second: str | None) -> str | None:
        if action in _SCHEMA_ACTIONS:
            return "it changes the schema; change the world and bump its version instead"
        if action in (apsw.SQLITE_TRANSACTION, apsw.SQLITE_SAVEPOINT):
            return "it controls the transaction; setup_sql already runs in one"
        if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
            return "it attaches or detaches a database"
        if action == apsw.SQLITE_PRAGMA:
            if (first or "").lower() in _REPORTING_PRAGMAS:
                return None
            return f"PRAGMA {first} does more than report"
        if action == apsw.SQLITE_FUNCTION:
            if (second or "").lower() in ALLOWED_FUNCTIONS:
                return None
            return f"it calls {second}(), which is not in seahaven.sandbox.ALLOWED_FUNCTIONS"
        if action == apsw.SQLITE_READ:
            if first is not None and first.lower() not in self.tables:
                return f"it reads the table-valued function {first}"
            return None
        if action in _WRITES:
            name = (first or "").lower()
            if name.startswith("sqlite_"):
                return f"it writes {first}, one of SQLite's own tables"
            if name in self.shadows:
                return f"it writes {first}, an FTS5 shadow table"
        return None


def run_setup_sql(instance: Instance, sql: str) -> None:
    """Run ``sql`` on a new instance, or raise ``WorldBug`` naming the statement at fault."""
    statements = split_statements(sql)
    if not statements:
        return
    runtimes = instance._nodes
    conn = open_connection(
        runtimes[0].file,
        clock=instance.clock,
        seed=node_seed(instance.seed, "main"),
        purpose="setup",
    )
    try:
        tables = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
        shadows: set[str] = set()
        for runtime in runtimes[1:]:
            conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (str(runtime.file),))
        for runtime in runtimes:
            for name, table in runtime.node.world.schema_info.tables.items():
                tables.add(name.lower())
                if table.kind == "shadow":
                    shadows.add(name.lower())
        for (found,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')"
        ).fetchall():
            tables.add(str(found).lower())
        authorizer = _SetupAuthorizer(tables, shadows)
        conn.execute("BEGIN")
        conn.trace_v2(apsw.SQLITE_TRACE_STMT, authorizer.on_statement, id="seahaven.setup_sql")
        conn.authorizer = authorizer
        for position, statement in enumerate(statements, start=1):
            authorizer.executing = False
            authorizer.refusal = None
            try:
                for _ in conn.execute(statement):
                    pass
            except apsw.Error as error:
                conn.authorizer = None
                conn.execute("ROLLBACK")
                preview = " ".join(statement.split())
                if len(preview) > 80:
                    preview = preview[:77] + "..."
                where = f"setup_sql statement {position} of {len(statements)} ({preview})"
                if authorizer.refusal is not None:
                    raise WorldBug(f"{where} was refused: {authorizer.refusal}") from None
                raise WorldBug(f"{where} failed: {error}") from None
        conn.authorizer = None
        conn.trace_v2(0, None, id="seahaven.setup_sql")
        conn.execute("COMMIT")
    finally:
        conn.close()
