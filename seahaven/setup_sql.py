"""``setup_sql``: per-episode row changes, run before the startup hooks and held to rows only.

The statements run in order, in one transaction, on a connection with the root's
tables unqualified and every added node attached under its schema name. An
authorizer refuses schema changes, transaction control, ATTACH and DETACH,
pragmas that do more than report, functions off the allowlist, table-valued
functions, and writes to FTS5 shadow tables or SQLite's own tables.
"""

from __future__ import annotations

import re
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
_SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
)
_FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")
_CHANGES_SCHEMA = "it changes the schema; change the world and bump its version instead"


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
    """Rows only, for the statements setup_sql itself is made of.

    Each statement is compiled once under this authorizer, as EXPLAIN QUERY PLAN
    so that nothing runs, and then executed with no authorizer at all. That keeps
    the statements SQLite prepares for itself while ours runs (FTS5's writes to
    its shadow tables, say) out of the check, however they are traced. Actions
    inside a world's own trigger bodies are the world's code and pass too.
    """

    def __init__(self, tables: set[str], shadows: set[str]) -> None:
        self.tables = tables
        self.shadows = shadows
        self.refusal: str | None = None

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        if trigger is not None:
            return apsw.SQLITE_OK
        reason = self._reason(action, first, second)
        if reason is None:
            return apsw.SQLITE_OK
        if self.refusal is None:
            self.refusal = reason
        return apsw.SQLITE_DENY

    def _reason(self, action: int, first: str | None, second: str | None) -> str | None:
        if action in _SCHEMA_ACTIONS:
            return _CHANGES_SCHEMA
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
            if name in _SCHEMA_TABLES:
                # CREATE, DROP and ANALYZE ask to write the schema table before
                # naming themselves, so this is where a schema change is caught.
                return _CHANGES_SCHEMA
            if name.startswith("sqlite_"):
                return f"it writes {first}, one of SQLite's own tables"
            if name in self.shadows:
                return f"it writes {first}, an FTS5 shadow table"
        return None


_FTS5 = re.compile(r"\bUSING\s+fts5\b", re.IGNORECASE)


def _fts5_shadow_tables(conn: apsw.Connection, schema_names: list[str]) -> set[str]:
    """The shadow tables of every FTS5 table, lower-cased.

    Other virtual tables' shadows are left to SQLite's defensive mode: an R*Tree
    prepares writes to its own shadow tables while a statement that merely reads
    it is compiled, and the authorizer cannot tell those from the statement's.
    """
    shadows: set[str] = set()
    for schema_name in schema_names:
        quoted = '"' + schema_name.replace('"', '""') + '"'
        virtual = conn.execute(
            f"SELECT name, sql FROM {quoted}.sqlite_schema "
            "WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
        for name, sql in virtual:
            if _FTS5.search(str(sql)):
                stem = str(name).lower()
                shadows.update(f"{stem}_{suffix}" for suffix in _FTS5_SHADOWS)
    return shadows


def _check(conn: apsw.Connection, authorizer: _SetupAuthorizer, statement: str) -> None:
    """Compile ``statement`` under the authorizer without running it; raise if refused."""
    # Defensive mode would refuse a write to a shadow table or to the schema
    # table before the authorizer is asked, in words that name no fix. Nothing
    # runs under EXPLAIN QUERY PLAN (whose rows, unlike EXPLAIN's, are always
    # text), so the check goes without it; execution does not.
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)
    conn.authorizer = authorizer
    try:
        conn.execute(statement, explain=2, can_cache=False).fetchall()
    finally:
        conn.authorizer = None
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)


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
        for runtime in runtimes[1:]:
            conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (str(runtime.file),))
        for runtime in runtimes:
            tables.update(name.lower() for name in runtime.node.world.schema_info.tables)
        shadows = _fts5_shadow_tables(conn, [runtime.node.schema_name for runtime in runtimes])
        for (found,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')"
        ).fetchall():
            tables.add(str(found).lower())
        authorizer = _SetupAuthorizer(tables, shadows)
        conn.execute("BEGIN")
        for position, statement in enumerate(statements, start=1):
            preview = " ".join(statement.split())
            if len(preview) > 80:
                preview = preview[:77] + "..."
            where = f"setup_sql statement {position} of {len(statements)} ({preview})"
            authorizer.refusal = None
            try:
                _check(conn, authorizer, statement)
                for _ in conn.execute(statement):
                    pass
            except apsw.Error as error:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if authorizer.refusal is not None:
                    raise WorldBug(f"{where} was refused: {authorizer.refusal}") from None
                raise WorldBug(f"{where} failed: {error}") from None
        try:
            conn.execute("COMMIT")
        except apsw.Error as error:
            # A deferred constraint is checked here, after every statement ran.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise WorldBug(
                f"setup_sql could not commit: {error}; the rows it wrote break a deferred "
                "constraint, so write the rows they depend on too"
            ) from None
    finally:
        conn.close()
