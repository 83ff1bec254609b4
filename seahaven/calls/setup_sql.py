"""``setup_sql``: per-episode row changes, run before the startup hooks and held to rows only.

The statements run in order, in one transaction, on a connection with the root's
tables unqualified and every added node attached under its schema name. Each runs
through ``seahaven.sandbox``'s containment, the one every SQL door shares, with an
``Authorizer`` that lists every table of every store, allows writes, and allows
the pragmas that only report: schema changes, transaction control, ATTACH and
DETACH, other pragmas, functions off the allowlist, table-valued functions,
writes to FTS5 shadow tables or SQLite's own tables, and direct writes to an FTS5
table that only indexes rows kept elsewhere are refused. The connection holds
every value to ``seahaven.sandbox.MAX_VALUE_BYTES`` and the whole run to
``seahaven.sandbox.SETUP_SQL_SECONDS``; another thread may stop it sooner through
the instance's ``interrupt()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

import seahaven.sandbox as sandbox
from seahaven.calls.readers import keep_combined_writes, open_combined
from seahaven.errors import WorldBug
from seahaven.sandbox import (
    ALLOWED_FUNCTIONS,
    REPORTING_PRAGMAS,
    Authorizer,
    Deadline,
    StatementFailed,
    split_statements,
)
from seahaven.stores.db import Connections, is_interrupt, run_cleanup, use_memory_journal

if TYPE_CHECKING:
    from seahaven.calls.runtime import NodeRuntime
    from seahaven.stores.clock import Clock

__all__ = ["run_setup_sql", "split_statements"]

_CHANGES_SCHEMA = "it changes the schema; change the world and bump its version instead"


def _explained(failed: StatementFailed, seconds: float) -> str:
    """What a failed statement did wrong, in the author's terms: ``was refused: ...``."""
    if failed.kind == "refused":
        first = failed.refused[0]
        reason = {
            "schema": _CHANGES_SCHEMA,
            "transaction": "it controls the transaction; setup_sql already runs in one",
            "attach": "it attaches or detaches a database",
            "pragma": f"PRAGMA {first.subject} does more than report",
            "function": f"it calls {first.subject}(), which is not in "
            "seahaven.sandbox.ALLOWED_FUNCTIONS",
            # Every table of every store is listed, so what is left is a function.
            "read": f"it reads the table-valued function {first.subject}",
        }.get(first.kind, f"it asks for a {first.text}")
        return f"was refused: {reason}"
    if failed.kind == "expired":
        return (
            f"was stopped: setup_sql ran past its limit of {seconds:g} seconds "
            "(seahaven.sandbox.SETUP_SQL_SECONDS); setup_sql is for small per-episode changes, "
            "so end the query that runs away, or freeze the bulk of the rows as a fixture"
        )
    if failed.kind == "interrupted":
        return _INTERRUPTED
    if failed.kind == "too_big":
        return (
            f"failed: a value grew past seahaven.sandbox.MAX_VALUE_BYTES "
            f"({sandbox.MAX_VALUE_BYTES} bytes); build large values in a fixture instead"
        )
    return f"failed: {failed.message}"


_INTERRUPTED = (
    "was interrupted from another thread (the instance's interrupt(), or "
    "seahaven.concurrency.interrupt_all() as a server stops), so no instance was made"
)


def _where(position: int, statements: list[str]) -> str:
    """How a message names one statement: its number and its first 80 characters."""
    preview = " ".join(statements[position - 1].split())
    if len(preview) > 80:
        preview = preview[:77] + "..."
    return f"setup_sql statement {position} of {len(statements)} ({preview})"


def run_setup_sql(
    sql: str,
    runtimes: Sequence[NodeRuntime],
    *,
    clock: Clock,
    seed: bytes,
    connections: Connections | None = None,
) -> None:
    """Run ``sql`` on a new instance's stores, or raise ``WorldBug`` naming the statement at fault.

    ``runtimes`` are the instance's stores, root first; ``clock`` and ``seed`` are
    the instance's, so the statements read its time and draw from its stream. The
    connection it runs on is held in ``connections`` while it is open, so that the
    instance's ``interrupt()`` (and ``seahaven.concurrency.interrupt_all()``) stop it.
    """
    if "\x00" in sql:
        raise WorldBug(
            f"setup_sql has a NUL character at offset {sql.index(chr(0))}, which SQL text cannot "
            "hold; write the byte as a blob literal such as X'00', or remove it"
        )
    statements = split_statements(sql)
    if not statements:
        return
    conn = open_combined(runtimes, clock, seed, "setup")
    held = connections if connections is not None else Connections()
    held.add(conn)
    try:
        try:
            if len(runtimes) > 1:
                # The attached stores too: nothing synced, and no lock left for their own
                # connections.
                use_memory_journal(conn)
            tables: list[str] = []
            for runtime in runtimes:
                schema = runtime.node.schema_name
                quoted = '"' + schema.replace('"', '""') + '"'
                tables.extend(
                    f"{schema}.{name}"
                    for (name,) in conn.execute(
                        f"SELECT name FROM {quoted}.sqlite_schema WHERE type IN ('table', 'view')"
                    )
                )
            known = sandbox.catalog(conn)
            conn.execute("BEGIN")
        except apsw.Error as error:
            # An interrupt meant for the statements can land while these are being prepared.
            if not is_interrupt(error):
                raise
            if conn.in_transaction:
                run_cleanup(conn, "ROLLBACK")
            raise WorldBug(f"{_where(1, statements)} {_INTERRUPTED}") from None
        authorizer = Authorizer(
            tables,
            read_only=False,
            functions=ALLOWED_FUNCTIONS,
            pragmas=REPORTING_PRAGMAS,
            table_functions=(),
        )
        seconds = sandbox.SETUP_SQL_SECONDS
        deadline = Deadline(conn, seconds)
        deadline.install()
        for position, statement in enumerate(statements, start=1):
            where = _where(position, statements)
            try:
                sandbox.execute(
                    conn,
                    statement,
                    authorizer=authorizer,
                    known=known,
                    deadline=deadline,
                    keep_rows=False,
                    max_sql_bytes=None,
                )
            except StatementFailed as failed:
                if conn.in_transaction:
                    run_cleanup(conn, "ROLLBACK")
                raise WorldBug(f"{where} {_explained(failed, seconds)}") from None
        try:
            conn.execute("COMMIT")
        except apsw.Error as error:
            # A deferred constraint is checked here, after every statement ran.
            if conn.in_transaction:
                run_cleanup(conn, "ROLLBACK")
            raise WorldBug(
                f"setup_sql could not commit: {error}; the rows it wrote break a deferred "
                "constraint, so write the rows they depend on too"
            ) from None
        keep_combined_writes(conn, runtimes)
    finally:
        held.close(conn)
