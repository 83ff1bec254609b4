"""Containment for SQL the framework did not write, and the limits that SQL is held to.

Four doors run such SQL: a world's SQL tools (``seahaven.sql_tools.run_sql``, and any
extension's door built on ``run_statement``), ``setup_sql`` (the author's), the
deprecated control tool (the agent's, read-only) and ``inst.inspect()`` (the eval's
reader). The first three run each statement through the one mechanism here:

* ``Authorizer``, the policy: which tables a statement may read and write, which
  functions it may call, and that it may not change the schema, attach a database,
  run a pragma, control the transaction or write SQLite's own tables or an FTS5
  index directly. Anything not allowed is denied, never ignored, and the refusal is
  recorded (``REFUSALS`` names its kinds, ``refusal_kind`` classifies one).
* ``run_statement``, one statement under that policy: it is compiled once with the
  world's triggers switched off, so that what the statement itself does (its common
  table expressions and the views it reads included) is checked without any
  exemption, then run with the authorizer still installed. While it runs, only what
  SQLite does on its behalf is let through (an FTS5 or R*Tree table reading its own
  shadow tables, a world trigger's body); attaching, schema changes, transaction
  control and writes on a read-only door stay refused there too, which is what stops
  ``VACUUM INTO``, whose only check happens at run time.
* ``ALLOWED_FUNCTIONS``, the SQLite functions such SQL may call by default: the core
  scalar, aggregate, window, date and JSON functions, including ``random()`` and
  ``randomblob()`` (which draw from the instance's seeded stream). ``match`` and
  ``load_extension`` are not on it.
* ``MAX_VALUE_BYTES``, the largest string or blob one value (and one row) may grow
  to (``limit_values``). Without it, one ``randomblob()`` or ``zeroblob()`` could ask
  for gigabytes. ``MAX_RESULT_BYTES`` bounds a whole result the same way.
* ``STATEMENT_SECONDS`` and ``SETUP_SQL_SECONDS``, how long one statement of a SQL
  door, and one instance's whole ``setup_sql``, may run before ``Deadline`` stops it.
  A recursive query that never ends would otherwise hold the instance for ever.
* ``ReaderAuthorizer``, the eval's reader: any table and function, but no schema
  change, ATTACH, pragma that sets something, or transaction control.
* ``fts5_tables``, which FTS5 tables and shadow tables a statement may not write.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, get_args

import apsw

from seahaven.changelog import json_value
from seahaven.db import (
    DESTROYED_WHILE_RUNNING,
    INTERRUPTED,
    Db,
    db_error,
    is_closing,
    run_cleanup,
    value_error,
)
from seahaven.errors import DbError, WorldBug

__all__ = [
    "ALLOWED_FUNCTIONS",
    "MAX_RESULT_BYTES",
    "MAX_SQL_BYTES",
    "MAX_VALUE_BYTES",
    "REFUSALS",
    "REPORTING_PRAGMAS",
    "SETUP_SQL_SECONDS",
    "STATEMENT_SECONDS",
    "Authorizer",
    "Deadline",
    "Fts5Tables",
    "ReaderAuthorizer",
    "Refusal",
    "Refused",
    "SqlResult",
    "fts5_tables",
    "interrupt_thread",
    "interruptible",
    "limit_values",
    "reader_refusal",
    "refusal_kind",
    "run_statement",
    "split_statements",
]

# The largest single value (and row) agent-written SQL may materialise.
MAX_VALUE_BYTES = 1_000_000

# The longest SQL text one statement of a SQL door may be.
MAX_SQL_BYTES = 1_000_000

# The largest result a SQL door returns, as JSON text; past it the statement fails.
MAX_RESULT_BYTES = 10_000_000

# How long one statement of a SQL door may run, reading its rows included.
STATEMENT_SECONDS = 10.0

# How long one instance's setup_sql may run, all its statements together: as long as
# one statement of a SQL door, since setup_sql is for small per-episode changes.
SETUP_SQL_SECONDS = 10.0

# The pragmas that only report, which setup_sql and the control tool may run.
REPORTING_PRAGMAS = frozenset(
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

# How many SQLite virtual-machine steps pass between two looks at the clock.
_PROGRESS_STEPS = 10_000

ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    [
        "abs",
        "avg",
        "char",
        "coalesce",
        "concat",
        "concat_ws",
        "count",
        "format",
        "glob",
        "group_concat",
        "hex",
        "ifnull",
        "iif",
        "if",
        "instr",
        "length",
        "like",
        "likelihood",
        "likely",
        "lower",
        "ltrim",
        "max",
        "min",
        "nullif",
        "octet_length",
        "printf",
        "quote",
        "random",
        "randomblob",
        "replace",
        "round",
        "rtrim",
        "sign",
        "soundex",
        "sqlite_version",
        "string_agg",
        "substr",
        "substring",
        "sum",
        "total",
        "trim",
        "typeof",
        "unhex",
        "unicode",
        "unlikely",
        "upper",
        "zeroblob",
        "date",
        "time",
        "datetime",
        "julianday",
        "unixepoch",
        "strftime",
        "timediff",
        "current_date",
        "current_time",
        "current_timestamp",
        "json",
        "json_array",
        "json_array_length",
        "json_error_position",
        "json_extract",
        "json_group_array",
        "json_group_object",
        "json_insert",
        "json_object",
        "json_patch",
        "json_pretty",
        "json_quote",
        "json_remove",
        "json_replace",
        "json_set",
        "json_type",
        "json_valid",
        "->",
        "->>",
        "jsonb",
        "jsonb_array",
        "jsonb_extract",
        "jsonb_group_array",
        "jsonb_group_object",
        "jsonb_insert",
        "jsonb_object",
        "jsonb_patch",
        "jsonb_remove",
        "jsonb_replace",
        "jsonb_set",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "ceil",
        "ceiling",
        "cos",
        "cosh",
        "degrees",
        "exp",
        "floor",
        "ln",
        "log",
        "log10",
        "log2",
        "mod",
        "pi",
        "pow",
        "power",
        "radians",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "trunc",
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
    ]
)


Refusal = Literal[
    "read", "write", "function", "schema", "pragma", "attach", "transaction", "action"
]
"""What a refused action was: the kind a refusal's text begins with."""

REFUSALS: frozenset[str] = frozenset(get_args(Refusal))

# The first word of a refusal's text, for each kind (DETACH reads "detach of ...").
_KIND_WORDS: dict[str, Refusal] = {kind: kind for kind in get_args(Refusal)} | {"detach": "attach"}


@dataclass(frozen=True, slots=True)
class Refused:
    """One action an ``Authorizer`` denied: its kind, what it named, and the refusal's text.

    ``text`` begins with the kind (``read of table 'notes_fts_idx'``,
    ``function load_extension()``); it is what ``DbError.refusals`` carries.
    """

    kind: Refusal
    subject: str
    text: str


def refusal_kind(refusal: str | Refused) -> Refusal:
    """The kind of a refusal an ``Authorizer`` recorded: ``"read"``, ``"write"``, ...

    ``refusal`` is a ``Refused`` or its text, as ``DbError.refusals`` carries it.
    The kind is what the authorizer recorded, never read off SQLite's message,
    which names a denied read and a denied function in unrelated words.
    """
    if isinstance(refusal, Refused):
        return refusal.kind
    if isinstance(refusal, str):
        word = refusal.split(" ", 1)[0].lower()
        if word in _KIND_WORDS:
            return _KIND_WORDS[word]
    raise ValueError(f"{refusal!r} is not a refusal an Authorizer recorded")


def limit_values(conn: apsw.Connection) -> None:
    """Hold every string and blob on ``conn`` to ``MAX_VALUE_BYTES``; past it is SQLITE_TOOBIG.

    SQLite applies the same limit to a whole row, so a row wider than this cannot be
    read or written on ``conn`` either.
    """
    conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)


class Deadline:
    """A progress handler on one connection for the length of a ``with`` block.

    SQLite calls it every few thousand steps of a running statement. Past
    ``seconds`` (``None``: never) it stops the statement, which then fails with
    ``apsw.InterruptError`` and ``expired`` is true. Because the handler is
    Python, a Ctrl-C arriving meanwhile is raised from it as ``KeyboardInterrupt``
    instead of waiting for the statement to end.
    """

    __slots__ = ("_conn", "_ends", "expired", "seconds")

    def __init__(self, conn: apsw.Connection, seconds: float | None) -> None:
        self._conn = conn
        self.seconds = seconds
        self._ends = 0.0
        self.expired = False

    def _check(self) -> bool:
        if self.seconds is not None and time.monotonic() >= self._ends:
            self.expired = True
            return True
        if _interrupted and threading.get_ident() in _interrupted:
            self.expired = True
            return True
        return False

    def install(self) -> None:
        """Start the clock and install the handler, outside a ``with`` block."""
        self._ends = time.monotonic() + (self.seconds or 0.0)
        self.expired = False
        self._conn.set_progress_handler(self._check, _PROGRESS_STEPS)

    def __enter__(self) -> Deadline:
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._conn.set_progress_handler(None)


# The threads inside an ``interruptible()`` block, and those of them ``interrupt_thread`` stopped.
_interruptible: set[int] = set()
_interrupted: set[int] = set()
_interrupt_lock = threading.Lock()


@contextmanager
def interruptible() -> Iterator[int]:
    """A block whose statements another thread may stop with ``interrupt_thread(ident)``.

    Yields this thread's ident. A server runs each piece of a session's work in
    such a block, so that when the session's client goes or the server stops, a
    statement running under a ``Deadline`` (``setup_sql``, a SQL door, a reader)
    ends as if its time had run out, instead of holding the thread for its whole
    allowance. Leaving the block clears any interruption.
    """
    ident = threading.get_ident()
    with _interrupt_lock:
        _interruptible.add(ident)
    try:
        yield ident
    finally:
        with _interrupt_lock:
            _interruptible.discard(ident)
            _interrupted.discard(ident)


def interrupt_thread(ident: int) -> None:
    """Stop what runs under a ``Deadline`` on thread ``ident``, inside its ``interruptible()``.

    A thread outside such a block is left alone.
    """
    with _interrupt_lock:
        if ident in _interruptible:
            _interrupted.add(ident)


# --- the actions, by what they do ---------------------------------------------------------------

_SCHEMA_ACTIONS = frozenset(
    getattr(apsw, name)
    for name in dir(apsw)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_")) and isinstance(getattr(apsw, name), int)
) | {apsw.SQLITE_ALTER_TABLE, apsw.SQLITE_REINDEX, apsw.SQLITE_ANALYZE}
_WRITES = frozenset({apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE})
_SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
)
_READABLE_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})
_TABLE_FUNCTIONS = ("json_each", "json_tree")


def _action_name(action: int) -> str:
    """``CREATE INDEX`` for SQLITE_CREATE_INDEX: the action as the SQL that asks for it."""
    name = apsw.mapping_authorizer_function.get(action, str(action))
    return str(name).removeprefix("SQLITE_").replace("_", " ")


def _qualified(schema: str | None, name: str) -> str:
    return name if schema in (None, "main") else f"{schema}.{name}"


# --- the eval's reader --------------------------------------------------------------------------

_CONTROLS_TRANSACTION = (
    "it controls the transaction, which would hold this reader to one snapshot; a reader "
    "sees each commit as it happens, so run the statement without it"
)


def reader_refusal(action: int, first: str | None, second: str | None) -> str | None:
    """Why the eval's read-only connection refuses ``action``, or ``None`` when it may run.

    Row writes are refused by the connection itself (read-only, query_only), so
    they are not denied here: virtual tables such as R*Tree prepare writes to their
    own shadow tables just to be read, and denying those would make them unreadable.
    """
    if action in _SCHEMA_ACTIONS:
        return "it changes the schema, and this connection only reads"
    if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
        return "it attaches or detaches a database, and this connection's databases are fixed"
    if action == apsw.SQLITE_PRAGMA and second is not None:
        return f"PRAGMA {first} sets a value, and this connection only reads"
    if action in (apsw.SQLITE_TRANSACTION, apsw.SQLITE_SAVEPOINT):
        return _CONTROLS_TRANSACTION
    return None


class ReaderAuthorizer:
    """The authorizer of the eval's read-only connection; ``refusal`` says why it last refused."""

    __slots__ = ("refusal",)

    def __init__(self) -> None:
        self.refusal: str | None = None

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        reason = reader_refusal(action, first, second)
        if reason is None:
            return apsw.SQLITE_OK
        self.refusal = reason
        return apsw.SQLITE_DENY


# --- FTS5 ---------------------------------------------------------------------------------------

_FTS5 = re.compile(r"\bUSING\s+fts5\s*\((?P<arguments>.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_CONTENT_OPTION = re.compile(
    r"(?:^|,)\s*content\s*=\s*(?:'(?P<single>(?:[^']|'')*)'|\"(?P<double>(?:[^\"]|\"\")*)\"|"
    r"(?P<bare>[^\s,]*))",
    re.IGNORECASE,
)
_FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")


@dataclass(frozen=True, slots=True)
class Fts5Tables:
    """The FTS5 tables of a database, lower-cased, as a writer must treat them.

    ``shadows`` are every FTS5 table's own shadow tables. ``index_only`` maps an
    external-content FTS5 table to its content table, and a contentless one to
    ``""``: such a table holds no rows of its own, only an index of rows kept
    elsewhere, so writing it directly (a row or an FTS5 command such as
    ``'delete-all'``) puts the index out of step with its rows.
    """

    shadows: frozenset[str]
    index_only: dict[str, str]


_NO_FTS5 = Fts5Tables(frozenset(), {})


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def fts5_tables(conn: apsw.Connection, schema_names: list[str]) -> Fts5Tables:
    """The FTS5 tables in each named schema of ``conn``.

    Other virtual tables' shadows are left to SQLite's defensive mode: an R*Tree
    prepares writes to its own shadow tables while a statement that merely reads
    it is compiled, and an authorizer cannot tell those from the statement's.
    """
    shadows: set[str] = set()
    index_only: dict[str, str] = {}
    for schema_name in schema_names:
        virtual = conn.execute(
            f"SELECT name, sql FROM {_quote(schema_name)}.sqlite_schema "
            "WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
        for name, sql in virtual:
            found = _FTS5.search(str(sql))
            if found is None:
                continue
            stem = str(name).lower()
            shadows.update(f"{stem}_{suffix}" for suffix in _FTS5_SHADOWS)
            content = _CONTENT_OPTION.search(found.group("arguments"))
            if content is not None:
                single, double, bare = content.group("single", "double", "bare")
                if single is not None:
                    table = single.replace("''", "'")
                elif double is not None:
                    table = double.replace('""', '"')
                else:
                    table = bare or ""
                index_only[stem] = table.lower()
    return Fts5Tables(frozenset(shadows), index_only)


# --- the policy ---------------------------------------------------------------------------------


def _names(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise WorldBug(f"{what} must be a list of names, not {type(values).__name__}")
    names = tuple(values)
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise WorldBug(f"{what} must hold non-blank strings, not {name!r}")
    return names


class Authorizer:
    """Which tables and functions a statement may use, and whether it may write.

    ``tables`` are the tables (and views) a statement may read, named as SQLite
    does; ``schema.table`` names one in an attached database, a bare name one in
    ``main``. ``sqlite_master``, ``sqlite_schema``, ``json_each`` and ``json_tree``
    may always be read. ``read_only=False`` lets the statement write the listed
    tables, except SQLite's own, FTS5 shadow tables and FTS5 tables that only index
    rows kept elsewhere. ``functions`` are the SQLite functions it may call
    (``match`` is the MATCH operator). Whatever else the statement asks for is
    denied: a schema change, ATTACH or DETACH, a pragma, transaction control, any
    other table or function. Names are compared case-insensitively; nothing is
    inferred from a name, so a view is listed with the tables it reads and an FTS5
    table with the shadow tables a query reaches directly.

    ``pragmas`` and ``table_functions`` are for the framework's own doors:
    ``setup_sql`` may run the pragmas that only report, and reads no table-valued
    function. An ``Authorizer`` holds no state of a run, so one may serve many
    connections and threads at once.
    """

    __slots__ = (
        "_allowed",
        "_schemas",
        "functions",
        "pragmas",
        "read_only",
        "table_functions",
        "tables",
    )

    tables: tuple[str, ...]
    read_only: bool
    functions: frozenset[str]
    pragmas: frozenset[str]
    table_functions: frozenset[str]

    def __init__(
        self,
        tables: Iterable[str],
        *,
        read_only: bool = True,
        functions: Iterable[str] = ALLOWED_FUNCTIONS,
        pragmas: Iterable[str] = (),
        table_functions: Iterable[str] = _TABLE_FUNCTIONS,
    ) -> None:
        if not isinstance(read_only, bool):
            raise WorldBug("read_only must be True or False")
        self.tables = _names(tables, "tables")
        self.read_only = read_only
        self.functions = frozenset(name.lower() for name in _names(functions, "functions"))
        self.pragmas = frozenset(name.lower() for name in _names(pragmas, "pragmas"))
        self.table_functions = frozenset(
            name.lower() for name in _names(table_functions, "table_functions")
        )
        allowed: set[tuple[str, str]] = set()
        for name in self.tables:
            schema, dot, table = name.lower().partition(".")
            allowed.add((schema, table) if dot else ("main", schema))
        self._allowed = frozenset(allowed)
        self._schemas = frozenset({"main"} | {schema for schema, _ in allowed})

    def __repr__(self) -> str:
        return f"Authorizer({list(self.tables)!r}, read_only={self.read_only})"

    def may_read(
        self,
        schema: str | None,
        table: str,
        present: frozenset[tuple[str, str]] = frozenset(),
        eponymous: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether a statement may read ``table`` of ``schema``.

        SQLite names no schema for a common table expression, and none for a table
        or a table-valued function read only to count its rows. ``present`` (the
        connection's ``(schema, table)`` pairs) and ``eponymous`` (the names its
        table-valued functions answer to) tell them apart: a name that is neither
        is the statement's own.
        """
        name = table.lower()
        if schema is None:
            if name in _READABLE_SCHEMA_TABLES or name in self.table_functions:
                return True
            where_found = {where for where, present_name in present if present_name == name}
            if where_found:
                return all((where, name) in self._allowed for where in where_found)
            return name not in eponymous and name not in _SCHEMA_TABLES
        where = schema.lower()
        if (where, name) in self._allowed:
            return True
        if name in _READABLE_SCHEMA_TABLES and where in self._schemas:
            return True
        return name in self.table_functions and where == "main"

    def refusal(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        *,
        fts5: Fts5Tables = _NO_FTS5,
        present: frozenset[tuple[str, str]] = frozenset(),
        eponymous: frozenset[str] = frozenset(),
    ) -> Refused | None:
        """Why a statement's own ``action`` is refused, or ``None`` when it is allowed.

        The arguments are those SQLite gives an authorizer callback. ``fts5`` names
        the connection's FTS5 tables, which are never written directly; ``present``
        its tables and views, as ``(schema, name)`` lower-cased, and ``eponymous``
        the names of its table-valued functions (``may_read``).
        """
        if action in (apsw.SQLITE_SELECT, apsw.SQLITE_RECURSIVE):
            return None
        if action == apsw.SQLITE_READ:
            table = first or ""
            if self.may_read(schema, table, present, eponymous):
                return None
            return Refused("read", table, f"read of table '{_qualified(schema, table)}'")
        if action in _WRITES:
            return self._write_refusal(first or "", schema, fts5)
        if action == apsw.SQLITE_FUNCTION:
            name = (second or "").lower()
            if name in self.functions:
                return None
            return Refused("function", name, f"function {name}(), which is not allowed here")
        if action == apsw.SQLITE_PRAGMA:
            name = (first or "").lower()
            if name in self.pragmas:
                return None
            return Refused("pragma", name, f"pragma {name}")
        if action == apsw.SQLITE_ATTACH:
            return Refused("attach", first or "", f"attach of database {first!r}")
        if action == apsw.SQLITE_DETACH:
            return Refused("attach", first or "", f"detach of database {first!r}")
        if action in (apsw.SQLITE_TRANSACTION, apsw.SQLITE_SAVEPOINT):
            what = " ".join(part for part in (first, second) if part)
            return Refused("transaction", first or "", f"transaction control ({what})")
        if action in _SCHEMA_ACTIONS:
            target = first or ""
            return Refused("schema", target, f"schema change ({_action_name(action)} {target})")
        label = _action_name(action)
        return Refused("action", label, f"action {label}")

    def _write_refusal(self, table: str, schema: str | None, fts5: Fts5Tables) -> Refused | None:
        name = table.lower()
        shown = _qualified(schema, table)
        if name in _SCHEMA_TABLES:
            # CREATE, DROP and ANALYZE ask to write the schema table before naming
            # themselves, so this is where a schema change is usually caught.
            return Refused("schema", table, f"schema change (a write to {shown})")
        if self.read_only:
            return Refused("write", table, f"write of table '{shown}' (this door only reads)")
        if name.startswith("sqlite_"):
            return Refused("write", table, f"write of table '{shown}', one of SQLite's own tables")
        if name in fts5.shadows:
            return Refused("write", table, f"write of table '{shown}', an FTS5 shadow table")
        if name in fts5.index_only:
            content = fts5.index_only[name]
            if content:
                return Refused(
                    "write",
                    table,
                    f"write of table '{shown}', an FTS5 table that indexes the rows of "
                    f"{content}, so the index would no longer match them (an FTS5 command such "
                    f"as 'delete-all' included); write {content}, and let the world's triggers "
                    "keep the index",
                )
            return Refused(
                "write",
                table,
                f"write of table '{shown}', a contentless FTS5 index, which only the world's "
                "own code keeps in step with the rows it indexes",
            )
        if ((schema or "main").lower(), name) not in self._allowed:
            return Refused("write", table, f"write of table '{shown}', which is not listed")
        return None

    def internal_refusal(
        self, action: int, first: str | None, second: str | None, schema: str | None
    ) -> Refused | None:
        """Why an action SQLite takes while the statement runs is refused, or ``None``.

        These are the statements a virtual table prepares to answer the statement
        (FTS5 reading its index, say), so tables and functions are not held to the
        lists; nor is a pragma that only reports (the change log's session reads
        ``table_xinfo`` of a table the first time a call writes it). What no such
        statement needs stays refused: attaching (``VACUUM INTO`` asks for it only
        at run time), schema changes, transaction control, pragmas that set
        something, SQLite's own tables, and every write on a read-only door.
        """
        if action in (
            apsw.SQLITE_SELECT,
            apsw.SQLITE_RECURSIVE,
            apsw.SQLITE_READ,
            apsw.SQLITE_FUNCTION,
        ):
            return None
        if action == apsw.SQLITE_PRAGMA and (
            second is None or (first or "").lower() in REPORTING_PRAGMAS
        ):
            # FTS5 asks for data_version; the change log's session reads table_xinfo
            # of each table the statement writes, the first time it does.
            return None
        if action in _WRITES:
            name = (first or "").lower()
            if name in _SCHEMA_TABLES or self.read_only or name.startswith("sqlite_"):
                return self._write_refusal(first or "", schema, _NO_FTS5)
            return None
        return self.refusal(action, first, second, schema) or Refused(
            "action", _action_name(action), f"action {_action_name(action)}"
        )


class _Gate:
    """The callback one run installs: the policy, the connection's FTS5 tables, the stage.

    ``probe``: the statement compiled with triggers off, every action held to the
    policy. ``compile``: compiled again to run, with triggers on; an action inside
    a trigger body (or a CTE or view the probe already checked) is the world's.
    ``run``: what SQLite prepares on the statement's behalf while it runs.
    """

    __slots__ = ("known", "policy", "refused", "stage")

    def __init__(self, policy: Authorizer, known: Catalog) -> None:
        self.policy = policy
        self.known = known
        self.stage: Literal["probe", "compile", "run"] = "probe"
        self.refused: list[Refused] = []

    def __call__(
        self,
        action: int,
        first: str | None,
        second: str | None,
        schema: str | None,
        trigger: str | None,
    ) -> int:
        if self.stage == "run":
            refused = self.policy.internal_refusal(action, first, second, schema)
        elif self.stage == "compile" and trigger is not None:
            refused = None
        else:
            known = self.known
            refused = self.policy.refusal(
                action,
                first,
                second,
                schema,
                fts5=known.fts5,
                present=known.present,
                eponymous=known.eponymous,
            )
        if refused is None:
            return apsw.SQLITE_OK
        if refused not in self.refused:
            self.refused.append(refused)
        return apsw.SQLITE_DENY


# --- one statement ------------------------------------------------------------------------------


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` in order, each complete, blank ones dropped.

    SQLite's own tokenizer decides where one ends (``apsw.complete``), so a ``;``
    inside a string, a quoted name or a comment does not split a statement.
    """
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


_LEADING_NOISE = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))*", re.DOTALL)


def _first_keyword(statement: str) -> str:
    """The statement's first word, comments and white space skipped, upper-cased."""
    rest = statement[_LEADING_NOISE.match(statement).end() :]  # type: ignore[union-attr]
    word = re.match(r"[A-Za-z]+", rest)
    return word.group(0).upper() if word else ""


@dataclass(frozen=True, slots=True)
class SqlResult:
    """What one statement returned: column names, rows of SQLite values, and ``truncated``.

    ``truncated`` is true when a ``max_rows`` or ``max_bytes`` limit left rows
    out. A BLOB is ``bytes`` here; ``to_dict`` gives the JSON form a tool returns.
    """

    columns: list[str]
    rows: list[list[Any]] = field(repr=False)
    truncated: bool

    @property
    def row_count(self) -> int:
        """How many rows the result holds (after any truncation)."""
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        """``{"columns", "rows", "row_count", "truncated"}``, a BLOB as base64 text."""
        return {
            "columns": list(self.columns),
            "rows": [[json_value(value) for value in row] for row in self.rows],
            "row_count": len(self.rows),
            "truncated": self.truncated,
        }


FailureKind = Literal[
    "refused",
    "expired",
    "too_big",
    "too_long",
    "invalid_text",
    "result_too_big",
    "statements",
    "interrupted",
    "destroyed",
    "sqlite",
]


class StatementFailed(Exception):
    """Why a contained statement failed, for the door to word: the framework's, not public.

    ``kind`` is ``refused`` (``refused`` lists what), ``expired`` (the deadline),
    ``too_big`` (a value past ``MAX_VALUE_BYTES``), ``too_long`` (the text past
    ``MAX_SQL_BYTES``), ``invalid_text`` (text that is not UTF-8), ``result_too_big``,
    ``statements`` (not exactly one, or a write on a read-only door),
    ``interrupted`` (another thread interrupted it), ``destroyed`` (the instance is
    being destroyed) or ``sqlite`` (SQLite's
    own error, a syntax error say). ``error`` is APSW's exception, if any.
    """

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        refused: Sequence[Refused] = (),
        error: apsw.Error | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message
        self.refused = tuple(refused)
        self.error = error


@contextmanager
def _installed(conn: apsw.Connection, gate: _Gate, sql_bytes: int | None) -> Iterator[None]:
    """``gate`` as the connection's authorizer, and the sandbox's limits, for the block."""
    previous = conn.authorizer
    length = conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    sql_length = conn.limit(apsw.SQLITE_LIMIT_SQL_LENGTH, -1 if sql_bytes is None else sql_bytes)
    conn.authorizer = gate
    try:
        yield
    finally:
        conn.authorizer = previous
        conn.limit(apsw.SQLITE_LIMIT_LENGTH, length)
        conn.limit(apsw.SQLITE_LIMIT_SQL_LENGTH, sql_length)


def _schemas(conn: apsw.Connection) -> list[str]:
    return [str(row[1]) for row in conn.execute("PRAGMA database_list") if row[1] != "temp"]


def _present(conn: apsw.Connection, schemas: list[str]) -> frozenset[tuple[str, str]]:
    """Every table and view of each schema, as ``(schema, name)`` lower-cased."""
    found: set[tuple[str, str]] = set()
    for schema in schemas:
        for (name,) in conn.execute(
            f"SELECT name FROM {_quote(schema)}.sqlite_schema WHERE type IN ('table', 'view')"
        ):
            found.add((schema.lower(), str(name).lower()))
    return frozenset(found)


def _connect_virtual_tables(conn: apsw.Connection, schemas: list[str]) -> None:
    """Connect every virtual table before the authorizer is installed.

    A virtual table prepares statements of its own the first time a connection
    uses it (an R*Tree reads and writes its node tables, FTS5 reads its config),
    while the statement naming it is still being compiled. Done here first, those
    are SQLite's own and not mistaken for the statement's.
    """
    for schema in schemas:
        names = conn.execute(
            f"SELECT name FROM {_quote(schema)}.sqlite_schema "
            "WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
        for (name,) in names:
            try:
                conn.execute(
                    f"SELECT 1 FROM {_quote(schema)}.{_quote(str(name))} LIMIT 0",
                    explain=2,
                    can_cache=False,
                ).fetchall()
            except apsw.Error:
                continue  # a module this build lacks: the statement will say so itself


def _config(conn: apsw.Connection, op: int, value: int) -> int:
    previous = int(conn.config(op, -1))
    conn.config(op, value)
    return previous


def _probe(conn: apsw.Connection, gate: _Gate, sql: str, params: Any) -> None:
    """Compile ``sql`` with triggers off, under the plain policy, without running it.

    Defensive mode would refuse a write to a shadow table or to the schema table
    before the authorizer is asked, in words that name no rule; nothing runs under
    EXPLAIN QUERY PLAN, so the probe goes without it. The statement's own actions
    are held to the policy whatever SQLite names as their context: a CTE can be
    called anything, a trigger's name included.
    """
    gate.stage = "probe"
    seen: list[str] = []

    def one_only(cursor: apsw.Cursor, statement: str, bindings: Any) -> bool:
        # The text was split into one statement already; should SQLite see a second,
        # it never gets to run here, where defensive mode is off.
        seen.append(statement)
        return len(seen) == 1

    defensive = _config(conn, apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)
    triggers = _config(conn, apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    cursor = conn.cursor()
    cursor.exec_trace = one_only
    try:
        cursor.execute(sql, params, explain=2, can_cache=False).fetchall()
    except apsw.ExecTraceAbort:
        raise StatementFailed(
            "statements", "the query holds more than one statement; send one per call"
        ) from None
    finally:
        cursor.close(force=True)
        conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, triggers)
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, defensive)


class _Trace:
    """The cursor's execution tracer: one statement only, read-only when the door is."""

    __slots__ = ("columns", "gate", "problem", "read_only", "statements")

    def __init__(self, gate: _Gate, read_only: bool) -> None:
        self.gate = gate
        self.read_only = read_only
        self.statements = 0
        self.columns: list[str] = []
        self.problem: str | None = None

    def __call__(self, cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        self.statements += 1
        if self.statements > 1:
            self.problem = "the query holds more than one statement; send one per call"
            return False
        if self.read_only and not cursor.is_readonly:
            self.problem = "the statement would write, and this door only reads"
            return False
        self.columns = [str(column[0]) for column in cursor.get_description()]
        self.gate.stage = "run"
        return True


def _row_bytes(row: Sequence[Any]) -> int:
    rendered = [json_value(value) for value in row]
    return len(json.dumps(rendered, ensure_ascii=False, separators=(",", ":")).encode()) + 1


@dataclass(frozen=True, slots=True)
class Catalog:
    """What a connection holds, as the gate needs it.

    Its FTS5 tables, its tables and views as ``(schema, name)``, and the names its
    table-valued functions answer to (``dbstat``, ``pragma_table_info``, ...).
    """

    fts5: Fts5Tables
    present: frozenset[tuple[str, str]]
    eponymous: frozenset[str]
    schemas: tuple[str, ...] = ("main",)


def _eponymous(conn: apsw.Connection) -> frozenset[str]:
    names = {str(row[0]).lower() for row in conn.execute("SELECT name FROM pragma_module_list")}
    names.update(
        f"pragma_{str(row[0]).lower()}"
        for row in conn.execute("SELECT name FROM pragma_pragma_list")
    )
    return frozenset(names | set(_TABLE_FUNCTIONS))


def catalog(conn: apsw.Connection) -> Catalog:
    """Read ``conn``'s catalog, connecting its virtual tables first (no authorizer is asked)."""
    previous = conn.authorizer
    conn.authorizer = None
    try:
        schemas = _schemas(conn)
        _connect_virtual_tables(conn, schemas)
        return Catalog(
            fts5_tables(conn, schemas),
            _present(conn, schemas),
            _eponymous(conn),
            tuple(schemas),
        )
    finally:
        conn.authorizer = previous


def execute(
    conn: apsw.Connection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] = (),
    *,
    authorizer: Authorizer,
    known: Catalog,
    deadline: Deadline | None,
    max_rows: int | None = None,
    max_bytes: int | None = None,
    keep_rows: bool = True,
    max_sql_bytes: int | None = MAX_SQL_BYTES,
) -> SqlResult:
    """Run one statement on ``conn`` under ``authorizer``; raise ``StatementFailed``.

    The framework's core of ``run_statement`` and ``setup_sql``: the caller reads
    the ``catalog`` and installs ``deadline`` (or none), and words the failure for
    its own audience. ``max_sql_bytes`` bounds the statement's text (``None``:
    SQLite's own limit, for the author's ``setup_sql``).
    """
    if max_sql_bytes is not None and len(sql.encode("utf-8", "surrogatepass")) > max_sql_bytes:
        raise StatementFailed(
            "too_long",
            f"the query is longer than seahaven.sandbox.MAX_SQL_BYTES ({max_sql_bytes} bytes); "
            "send a shorter statement",
        )
    statements = split_statements(sql)
    if len(statements) != 1:
        found = "no statement" if not statements else f"{len(statements)} statements"
        raise StatementFailed(
            "statements", f"one SQL statement is run per call, and this query holds {found}"
        )
    if _first_keyword(statements[0]) == "VACUUM":
        refused = Refused("action", "VACUUM", "action VACUUM")
        raise StatementFailed("refused", "VACUUM is refused", refused=[refused])
    gate = _Gate(authorizer, known)
    trace = _Trace(gate, authorizer.read_only)
    rows: list[list[Any]] = []
    truncated = False
    # A door that writes runs its statement in a savepoint of its own, so that a
    # statement refused after it ran (it stored text that is not UTF-8) leaves nothing.
    writes = not authorizer.read_only
    sessions: list[apsw.Session] = []
    if writes:
        conn.execute(f"SAVEPOINT {_SAVEPOINT}")
    try:
        if writes:
            sessions = _watch_writes(conn, known.schemas)
        with _installed(conn, gate, max_sql_bytes):
            cursor = conn.cursor()
            try:
                _probe(conn, gate, sql, params)
                gate.stage = "compile"
                cursor.exec_trace = trace
                cursor.execute(sql, params, can_cache=False)
                size = 2
                for row in cursor:
                    if not keep_rows:
                        continue
                    if max_rows is not None and len(rows) >= max_rows:
                        truncated = True
                        break
                    width = _row_bytes(row)
                    if max_bytes is not None and size + width > max_bytes:
                        truncated = True
                        break
                    size += width
                    if size > MAX_RESULT_BYTES:
                        raise StatementFailed(
                            "result_too_big",
                            f"the result is larger than seahaven.sandbox.MAX_RESULT_BYTES "
                            f"({MAX_RESULT_BYTES} bytes); select fewer rows or columns",
                        )
                    rows.append(list(row))
            except apsw.Error as error:
                raise _failure(conn, error, gate, trace, deadline) from None
            except UnicodeDecodeError:
                raise StatementFailed(
                    "invalid_text",
                    "a value in the result is text that is not valid UTF-8; read it with hex(), "
                    "or CAST it AS BLOB",
                ) from None
            finally:
                cursor.close(force=True)
        _check_written_text(sessions)
    except BaseException:
        if writes:
            _close_sessions(sessions)
            if deadline is not None and deadline.expired:
                # Past its deadline the handler stops every statement, this one too.
                conn.set_progress_handler(None)
            if conn.in_transaction:
                run_cleanup(conn, f"ROLLBACK TO {_SAVEPOINT}; RELEASE {_SAVEPOINT}")
        raise
    if writes:
        _close_sessions(sessions)
        conn.execute(f"RELEASE {_SAVEPOINT}")
    return SqlResult(trace.columns, rows, truncated)


_SAVEPOINT = "seahaven_sandbox_statement"


def _watch_writes(conn: apsw.Connection, schemas: tuple[str, ...]) -> list[apsw.Session]:
    """A session on every schema, so what the statement wrote can be read back."""
    sessions: list[apsw.Session] = []
    try:
        for schema in schemas:
            session = apsw.Session(conn, schema)
            sessions.append(session)
            # Tables without a declared primary key are recorded by rowid.
            session.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
            session.attach()
    except BaseException:
        _close_sessions(sessions)
        raise
    return sessions


def _close_sessions(sessions: list[apsw.Session]) -> None:
    for session in sessions:
        session.close()
    sessions.clear()


def _check_written_text(sessions: list[apsw.Session]) -> None:
    """Refuse a statement that stored text which is not UTF-8 (``CAST(x'ff' AS TEXT)``).

    Such text cannot be read back, by the world's tools, the change log or the
    state document, so it would break the episode for everyone after the agent.
    """
    for session in sessions:
        changeset = session.changeset()
        if not changeset:
            continue
        for change in apsw.Changeset.iter(changeset):
            if change.op in ("INSERT", "UPDATE"):
                try:
                    change.new  # noqa: B018 (reading it is the check)
                except UnicodeDecodeError:
                    raise StatementFailed(
                        "invalid_text",
                        f"the statement would store text that is not valid UTF-8 in "
                        f"{change.name}; store bytes as a BLOB (X'...'), or text as text",
                    ) from None


def _failure(
    conn: apsw.Connection,
    error: apsw.Error,
    gate: _Gate,
    trace: _Trace,
    deadline: Deadline | None,
) -> StatementFailed:
    if gate.refused:
        first = gate.refused[0]
        return StatementFailed(
            "refused", f"not authorized: {first.text}", refused=gate.refused, error=error
        )
    if deadline is not None and deadline.expired:
        return StatementFailed("expired", "the statement ran past its time limit", error=error)
    if isinstance(error, apsw.ExecTraceAbort) and trace.problem is not None:
        return StatementFailed("statements", trace.problem, error=error)
    if isinstance(error, apsw.ConnectionClosedError | apsw.CursorClosedError) or (
        isinstance(error, apsw.InterruptError) and is_closing(conn)
    ):
        return StatementFailed(
            "destroyed", "the instance behind this database was destroyed", error=error
        )
    if isinstance(error, apsw.InterruptError):
        return StatementFailed("interrupted", INTERRUPTED, error=error)
    message = str(error.args[0]) if error.args else type(error).__name__
    if isinstance(error, apsw.TooBigError):
        return StatementFailed("too_big", message, error=error)
    return StatementFailed("sqlite", message, error=error)


def _check_limit(value: int | None, what: str, ceiling: int | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorldBug(f"{what} must be a positive integer or None, not {value!r}")
    if ceiling is not None and value > ceiling:
        raise WorldBug(
            f"{what} is {value}, past seahaven.sandbox.MAX_RESULT_BYTES ({ceiling}); a result "
            "is never larger, so give at most that"
        )


def check_limits(max_rows: int | None, max_bytes: int | None) -> None:
    """Refuse a truncation policy that is not positive integers (``WorldBug``)."""
    _check_limit(max_rows, "max_rows")
    _check_limit(max_bytes, "max_bytes", MAX_RESULT_BYTES)


def run_statement(
    db: Db | apsw.Connection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] = (),
    *,
    authorizer: Authorizer,
    max_rows: int | None = None,
    max_bytes: int | None = None,
) -> SqlResult:
    """Run exactly one statement on ``db`` under ``authorizer``, bounded in time and size.

    ``db`` is a ``Db`` (``ctx.db``) or an APSW connection. The statement runs in
    whatever transaction the connection has open, so in a tool it commits or rolls
    back with the call. ``max_rows`` and ``max_bytes`` (the rows' size as JSON
    text) truncate the result, and ``truncated`` says so. Every failure is a
    ``DbError`` whose message is for the agent: SQLite's own text, or what was
    refused (``refusals``), or which limit stopped the statement
    (``STATEMENT_SECONDS``, ``MAX_VALUE_BYTES``, ``MAX_RESULT_BYTES``).
    """
    conn = db.conn if isinstance(db, Db) else db
    if not isinstance(conn, apsw.Connection):
        raise WorldBug(f"run_statement needs a Db or an apsw.Connection, not {type(db).__name__}")
    if not isinstance(authorizer, Authorizer):
        raise WorldBug("run_statement needs authorizer=, a seahaven.sandbox.Authorizer")
    if not isinstance(sql, str):
        raise DbError(repr(sql), apsw.SQLITE_MISUSE, message="the query must be SQL text")
    check_limits(max_rows, max_bytes)
    if "\x00" in sql:
        refused = value_error(ValueError("null character in query"), sql)
        assert refused is not None
        raise refused
    seconds = STATEMENT_SECONDS
    try:
        known = catalog(conn)
    except apsw.Error as error:
        raise db_error(error) from None
    try:
        with Deadline(conn, seconds) as deadline:
            return execute(
                conn,
                sql,
                params,
                authorizer=authorizer,
                known=known,
                deadline=deadline,
                max_rows=max_rows,
                max_bytes=max_bytes,
            )
    except StatementFailed as failed:
        raise _db_error(failed, authorizer, seconds) from None
    except (OverflowError, ValueError) as error:
        translated = value_error(error, sql)
        if translated is None:
            raise
        raise translated from None


def _db_error(
    failed: StatementFailed, authorizer: Authorizer, seconds: float
) -> DbError | WorldBug:
    """The agent's error for a failed statement: SQLite's text, or what was refused or hit."""
    code: int | None = None
    sqlite_message = failed.message
    if failed.error is not None:
        base = db_error(failed.error)
        if isinstance(base, DbError):
            code, sqlite_message = base.sqlite_code, base.sqlite_message
    if failed.kind == "destroyed":
        return WorldBug(DESTROYED_WHILE_RUNNING)
    if failed.kind == "interrupted":
        return DbError(sqlite_message, apsw.SQLITE_INTERRUPT, message=INTERRUPTED)
    if failed.kind == "refused":
        first = failed.refused[0]
        message = f"not authorized: {first.text}"
        if first.kind == "read" or first.text.endswith("which is not listed"):
            listed = ", ".join(authorizer.tables) or "none"
            message += f"; the tables this door may use are: {listed}"
        return DbError(
            sqlite_message,
            code if code is not None else apsw.SQLITE_AUTH,
            refusals=[refused.text for refused in failed.refused],
            message=message,
        )
    if failed.kind == "expired":
        return DbError(
            sqlite_message,
            code,
            message=f"the statement ran past its time limit of {seconds:g} seconds "
            "(seahaven.sandbox.STATEMENT_SECONDS) and was stopped; narrow the query, or end a "
            "recursive one with a WHERE or LIMIT",
        )
    if failed.kind == "too_big":
        return DbError(
            sqlite_message,
            code,
            message=f"{sqlite_message}: a value or row grew past seahaven.sandbox.MAX_VALUE_BYTES "
            f"({MAX_VALUE_BYTES} bytes)",
        )
    if failed.kind in ("statements", "result_too_big", "too_long", "invalid_text"):
        return DbError(sqlite_message, code or apsw.SQLITE_MISUSE, message=failed.message)
    return DbError(sqlite_message, code, message=sqlite_message)
