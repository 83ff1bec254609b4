"""Containment for SQL the framework did not write, and the limits that SQL is held to.

Four doors run such SQL: a world's SQL tools (``seahaven.sql_tools.run_sql``, and any
extension's door built on ``run_statement``), ``setup_sql`` (the author's), the
deprecated control tool (the agent's, read-only) and ``inst.inspect()`` (the eval's
reader). The first three run each statement through the one mechanism here:

* ``Authorizer``, the policy (``seahaven.sandbox.policy``): which tables a statement
  may read and write, which functions it may call, and that it may not change the
  schema, attach a database, run a pragma, control the transaction or write SQLite's
  own tables or an FTS5 index directly. Anything not allowed is denied, never ignored,
  and the refusal is recorded (``REFUSALS`` names its kinds, ``refusal_kind``
  classifies one). ``WRITE_ACTIONS`` are the actions that change a database.
* ``run_statement``, one statement under that policy (``seahaven.sandbox.statement``):
  compiled once with the world's triggers off and every action held to the policy,
  then run with only what SQLite does on its behalf let through.
* ``ALLOWED_FUNCTIONS``, the SQLite functions such SQL may call by default: the core
  scalar, aggregate, window, date and JSON functions, including ``random()`` and
  ``randomblob()`` (which draw from the instance's seeded stream). ``match`` and
  ``load_extension`` are not on it.
* ``MAX_VALUE_BYTES``, ``MAX_SQL_BYTES``, ``MAX_RESULT_BYTES``, ``STATEMENT_SECONDS``
  and ``SETUP_SQL_SECONDS``, the limits (``seahaven.sandbox.limits``), enforced by
  ``limit_values`` and ``Deadline``. Setting one on this module sets it where the
  sandbox reads it.
* ``ReaderAuthorizer``, the eval's reader: any table and function, but no schema
  change, ATTACH, pragma that sets something, or transaction control.
* ``fts5_tables`` and ``catalog`` (``seahaven.sandbox.connection_catalog``), what a connection
  holds; ``StatementFailed`` (``seahaven.sandbox.wording``), why a statement failed.
"""

from __future__ import annotations

import sys
from types import ModuleType

from seahaven.sandbox import connection_catalog, limits, policy, statement, wording
from seahaven.sandbox.connection_catalog import Catalog, Fts5Tables, catalog, fts5_tables
from seahaven.sandbox.limits import (
    MAX_RESULT_BYTES,
    MAX_SQL_BYTES,
    MAX_VALUE_BYTES,
    SETUP_SQL_SECONDS,
    STATEMENT_SECONDS,
    Deadline,
    check_limits,
    interrupt_thread,
    interruptible,
    limit_values,
)
from seahaven.sandbox.policy import (
    ALLOWED_FUNCTIONS,
    REFUSALS,
    REPORTING_PRAGMAS,
    WRITE_ACTIONS,
    Authorizer,
    ReaderAuthorizer,
    Refusal,
    Refused,
    reader_refusal,
    refusal_kind,
)
from seahaven.sandbox.statement import (
    PLAIN_READS,
    SqlResult,
    execute,
    first_keyword,
    read_plainly,
    run_statement,
    split_statements,
)
from seahaven.sandbox.wording import StatementFailed

__all__ = [
    "ALLOWED_FUNCTIONS",
    "MAX_RESULT_BYTES",
    "MAX_SQL_BYTES",
    "MAX_VALUE_BYTES",
    "PLAIN_READS",
    "REFUSALS",
    "REPORTING_PRAGMAS",
    "SETUP_SQL_SECONDS",
    "STATEMENT_SECONDS",
    "WRITE_ACTIONS",
    "Authorizer",
    "Catalog",
    "Deadline",
    "Fts5Tables",
    "ReaderAuthorizer",
    "Refusal",
    "Refused",
    "SqlResult",
    "StatementFailed",
    "catalog",
    "check_limits",
    "execute",
    "first_keyword",
    "fts5_tables",
    "interrupt_thread",
    "interruptible",
    "limit_values",
    "read_plainly",
    "reader_refusal",
    "refusal_kind",
    "run_statement",
    "split_statements",
]

# Where each public name is defined: setting one on this package sets it there too, so a
# limit (or a function a test replaces) reaches the code that reads it.
_HOMES: dict[str, ModuleType] = {
    name: module
    for module in (connection_catalog, limits, policy, statement, wording)
    for name in module.__all__
    if name in __all__
}

# The limits are read from ``seahaven.sandbox.limits`` whenever they are read here.
_LIMITS = frozenset(limits.__all__) & {name for name in __all__ if name.isupper()}


class _Package(ModuleType):
    """``seahaven.sandbox`` itself: its limits read through, its names set through."""

    def __getattribute__(self, name: str) -> object:
        if name in _LIMITS:
            return getattr(limits, name)
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value: object) -> None:
        home = _HOMES.get(name)
        if home is not None:
            setattr(home, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
