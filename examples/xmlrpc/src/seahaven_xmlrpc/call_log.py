"""The optional call log: one row per XML-RPC call, and who made it.

Keeping it costs a table. ``CALL_LOG_DDL`` (or ``call_log_ddl(table)`` for another name) is
``CREATE TABLE`` text the world adds to its schema. That changes the world's schema hash, so
every fixture of the world has to be regenerated.

``remember_client`` is a startup hook the world registers: the ``xmlrpc_client`` startup
keyword names the client (a user agent, a tenant, an eval's harness), and every logged call
records it.
"""

from __future__ import annotations

import re

import seahaven
from seahaven_xmlrpc.faults import CallLogEntry

__all__ = [
    "CALL_LOG_DDL",
    "CALL_LOG_TABLE",
    "CLIENT_KEY",
    "call_log_ddl",
    "remember_client",
    "write_entry",
]

CALL_LOG_TABLE = "xmlrpc_calls"
"""The call log's table unless the world names another."""

CLIENT_KEY = "seahaven_xmlrpc.client"
"""Where ``remember_client`` keeps the client's name in ``ctx.state``."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def call_log_ddl(table: str = CALL_LOG_TABLE) -> str:
    """``CREATE TABLE`` text for a call log named ``table``; it changes the schema hash."""
    if not _NAME.match(table):
        raise seahaven.WorldBug(
            f"call log table {table!r} must be lower-case letters, digits and _, "
            "starting with a letter"
        )
    return f"""
CREATE TABLE {table} (
    id TEXT PRIMARY KEY,
    -- NULL when the document named no method.
    method TEXT,
    client TEXT,
    -- NULL for a call that returned; the fault's code and string for one that did not.
    fault_code INTEGER,
    fault_string TEXT,
    called_at TEXT NOT NULL
) STRICT;
"""


CALL_LOG_DDL = call_log_ddl()
"""The call log's ``CREATE TABLE``: add it to ``World(schema=...)``. It changes the world's
schema hash; regenerate the fixtures."""


def remember_client(ctx: seahaven.Ctx, *, xmlrpc_client: str | None = None) -> None:
    """Keep the ``xmlrpc_client`` startup keyword for the call log."""
    if xmlrpc_client is not None and not isinstance(xmlrpc_client, str):
        raise seahaven.WorldBug(
            f"startup xmlrpc_client must be a client name, not {type(xmlrpc_client).__name__}"
        )
    ctx.state[CLIENT_KEY] = xmlrpc_client


def write_entry(
    ctx: seahaven.Ctx,
    entry: CallLogEntry,
    *,
    fault_code: int | None = None,
    fault_string: str | None = None,
) -> None:
    """Write one call-log row, refusing plainly when the world forgot the table."""
    if (
        ctx.db.one("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", entry.table)
        is None
    ):
        raise seahaven.WorldBug(
            f"xmlrpc_call(log_calls=True) writes to a table {entry.table!r} this world does not "
            "have; add seahaven_xmlrpc.call_log_ddl() (or CALL_LOG_DDL) to World(schema=...) and "
            "regenerate the fixtures, or pass log_calls=False"
        )
    ctx.db.execute(
        f"INSERT INTO {entry.table} (id, method, client, fault_code, fault_string, called_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        ctx.ids.uuid(),
        entry.method,
        entry.client,
        fault_code,
        fault_string,
        ctx.clock.iso(),
    )
