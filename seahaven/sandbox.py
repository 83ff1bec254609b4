"""Containment for SQL the framework did not write, and the limits that SQL is held to.

Three doors run such SQL: ``setup_sql`` (the author's), ``inst.inspect()`` (the
eval's read-only reader) and the deprecated control tool (the agent's, read-only).
What each is held to lives here, so that every door shares one mechanism:

* ``ALLOWED_FUNCTIONS``, the functions ``setup_sql`` may call: SQLite's core
  scalar, aggregate, window, date and JSON functions, including ``random()`` and
  ``randomblob()`` (which draw from the instance's seeded stream). ``match`` and
  ``load_extension`` are not on it.
* ``MAX_VALUE_BYTES``, the largest string or blob one value may grow to on the
  ``setup_sql`` connection and the control tool's reader (``limit_values``). Without
  it, one ``randomblob()`` or ``zeroblob()`` could ask for gigabytes.
* ``SETUP_SQL_SECONDS``, how long ``setup_sql`` may run before it is stopped
  (``Deadline``). A recursive query that never ends would otherwise hold instance
  creation for ever, past Ctrl-C.
* ``reader_refusal``, what a read-only connection refuses even though SQLite's
  read-only mode would let it through: schema changes, ATTACH, pragmas that set
  something, and transaction control, which would pin the reader to one snapshot.
* ``fts5_tables``, which FTS5 tables and shadow tables a statement may not write.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from types import TracebackType

import apsw

__all__ = [
    "ALLOWED_FUNCTIONS",
    "MAX_VALUE_BYTES",
    "SETUP_SQL_SECONDS",
    "Deadline",
    "Fts5Tables",
    "ReaderAuthorizer",
    "fts5_tables",
    "limit_values",
    "reader_refusal",
]

# The largest single value agent-written SQL may materialise.
MAX_VALUE_BYTES = 1_000_000

# How long one instance's setup_sql may run, all its statements together.
SETUP_SQL_SECONDS = 30.0

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


_CONTROLS_TRANSACTION = (
    "it controls the transaction, which would hold this reader to one snapshot; a reader "
    "sees each commit as it happens, so run the statement without it"
)
# Row writes are refused by the connection itself (read-only, query_only), so they
# are not denied here: virtual tables such as R*Tree prepare writes to their own
# shadow tables just to be read, and denying those would make them unreadable.
_CHANGES_ON_READERS = frozenset(
    getattr(apsw, name)
    for name in dir(apsw)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_")) and isinstance(getattr(apsw, name), int)
) | {apsw.SQLITE_ALTER_TABLE, apsw.SQLITE_REINDEX, apsw.SQLITE_ANALYZE}


def reader_refusal(action: int, first: str | None, second: str | None) -> str | None:
    """Why a read-only connection refuses ``action``, or ``None`` when it may run."""
    if action in _CHANGES_ON_READERS:
        return "it changes the schema, and this connection only reads"
    if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
        return "it attaches or detaches a database, and this connection's databases are fixed"
    if action == apsw.SQLITE_PRAGMA and second is not None:
        return f"PRAGMA {first} sets a value, and this connection only reads"
    if action in (apsw.SQLITE_TRANSACTION, apsw.SQLITE_SAVEPOINT):
        return _CONTROLS_TRANSACTION
    return None


class ReaderAuthorizer:
    """The authorizer of a read-only connection; ``refusal`` says why it last refused."""

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


def fts5_tables(conn: apsw.Connection, schema_names: list[str]) -> Fts5Tables:
    """The FTS5 tables in each named schema of ``conn``.

    Other virtual tables' shadows are left to SQLite's defensive mode: an R*Tree
    prepares writes to its own shadow tables while a statement that merely reads
    it is compiled, and an authorizer cannot tell those from the statement's.
    """
    shadows: set[str] = set()
    index_only: dict[str, str] = {}
    for schema_name in schema_names:
        quoted = '"' + schema_name.replace('"', '""') + '"'
        virtual = conn.execute(
            f"SELECT name, sql FROM {quoted}.sqlite_schema "
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
