"""``setup_sql``: per-episode row changes, run before the startup hooks and held to rows only.

The statements run in order, in one transaction, on a connection with the root's
tables unqualified and every added node attached under its schema name. An
authorizer refuses schema changes, transaction control, ATTACH and DETACH,
pragmas that do more than report, functions off the allowlist, table-valued
functions, writes to FTS5 shadow tables or SQLite's own tables, and direct
writes to an FTS5 table that only indexes rows kept elsewhere. The connection
holds every value to ``seahaven.sandbox.MAX_VALUE_BYTES`` and the whole run to
``seahaven.sandbox.SETUP_SQL_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

from seahaven import sandbox
from seahaven.db import open_connection
from seahaven.errors import WorldBug
from seahaven.ids import node_seed
from seahaven.sandbox import ALLOWED_FUNCTIONS, Deadline, Fts5Tables, fts5_tables, limit_values
from seahaven.schema import normalise_sql

if TYPE_CHECKING:
    from seahaven.clock import Clock
    from seahaven.instance import NodeRuntime

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
    return normalise_sql(statement).strip(" ;") != ""


class _SetupAuthorizer:
    """Rows only, for the statements setup_sql itself is made of.

    Each statement is compiled once under this authorizer, as EXPLAIN QUERY PLAN
    so that nothing runs, and then executed with no authorizer at all. That keeps
    the statements SQLite prepares for itself while ours runs (FTS5's writes to
    its shadow tables, say) out of the check, however they are traced. Actions
    inside a world's own trigger bodies are the world's code and pass too.
    """

    def __init__(self, tables: set[str], fts5: Fts5Tables, world_code: set[str]) -> None:
        self.tables = tables
        self.fts5 = fts5
        # The world's triggers and views. SQLite names the innermost trigger, view or
        # common table expression an action comes from, so a CTE's own actions are
        # checked like the statement's, and only the world's code is let through.
        self.world_code = world_code
        self.refusal: str | None = None

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        if trigger is not None and trigger.lower() in self.world_code:
            return apsw.SQLITE_OK
        reason = self._reason(action, first, second, schema)
        if reason is None:
            return apsw.SQLITE_OK
        if self.refusal is None:
            self.refusal = reason
        return apsw.SQLITE_DENY

    def _reason(
        self, action: int, first: str | None, second: str | None, schema: str | None
    ) -> str | None:
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
            # A common table expression or a subquery is read with no schema: it is
            # the statement's own, not a function.
            if schema is not None and first is not None and first.lower() not in self.tables:
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
            if name in self.fts5.shadows:
                return f"it writes {first}, an FTS5 shadow table"
            if name in self.fts5.index_only:
                content = self.fts5.index_only[name]
                if content:
                    return (
                        f"it writes {first}, an FTS5 table that indexes the rows of {content}, "
                        f"so the index would no longer match them (an FTS5 command such as "
                        f"'delete-all' included); write {content}, and let the world's triggers "
                        "keep the index"
                    )
                return (
                    f"it writes {first}, a contentless FTS5 index, which only the world's own "
                    "code keeps in step with the rows it indexes"
                )
        return None


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


def run_setup_sql(sql: str, runtimes: Sequence[NodeRuntime], *, clock: Clock, seed: bytes) -> None:
    """Run ``sql`` on a new instance's stores, or raise ``WorldBug`` naming the statement at fault.

    ``runtimes`` are the instance's stores, root first; ``clock`` and ``seed`` are
    the instance's, so the statements read its time and draw from its stream.
    """
    if "\x00" in sql:
        raise WorldBug(
            f"setup_sql has a NUL character at offset {sql.index(chr(0))}, which SQL text cannot "
            "hold; write the byte as a blob literal such as X'00', or remove it"
        )
    statements = split_statements(sql)
    if not statements:
        return
    conn = open_connection(
        runtimes[0].file, clock=clock, seed=node_seed(seed, "main"), purpose="setup"
    )
    try:
        tables = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
        for runtime in runtimes[1:]:
            conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (str(runtime.file),))
        for runtime in runtimes:
            tables.update(name.lower() for name in runtime.node.world.schema_info.tables)
        fts5 = fts5_tables(conn, [runtime.node.schema_name for runtime in runtimes])
        world_code: set[str] = set()
        for runtime in runtimes:
            quoted = '"' + runtime.node.schema_name.replace('"', '""') + '"'
            for name, kind in conn.execute(
                f"SELECT name, type FROM {quoted}.sqlite_schema "
                "WHERE type IN ('table', 'view', 'trigger')"
            ).fetchall():
                if kind != "trigger":
                    tables.add(str(name).lower())
                if kind != "table":
                    world_code.add(str(name).lower())
        authorizer = _SetupAuthorizer(tables, fts5, world_code)
        limit_values(conn)
        seconds = sandbox.SETUP_SQL_SECONDS
        deadline = Deadline(conn, seconds)
        deadline.install()
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
                if deadline.expired:
                    raise WorldBug(
                        f"{where} was stopped: setup_sql ran past its limit of {seconds:g} "
                        "seconds (seahaven.sandbox.SETUP_SQL_SECONDS); setup_sql is for small "
                        "per-episode changes, so end the query that runs away, or freeze the "
                        "bulk of the rows as a fixture"
                    ) from None
                if isinstance(error, apsw.TooBigError):
                    raise WorldBug(
                        f"{where} failed: a value grew past seahaven.sandbox.MAX_VALUE_BYTES "
                        f"({sandbox.MAX_VALUE_BYTES} bytes); build large values in a fixture "
                        "instead"
                    ) from None
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
