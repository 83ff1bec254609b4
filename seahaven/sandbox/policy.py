"""The policy contained SQL runs under: what a statement may read, write and call, and refusals.

``Authorizer`` is the policy of a SQL door: which tables a statement may read and
write, which functions it may call, and that it may not change the schema,
attach a database, run a pragma, control the transaction or write SQLite's own
tables or an FTS5 index directly. Anything not allowed is denied, never ignored,
and the refusal is recorded as a ``Refused`` (``REFUSALS`` names its kinds,
``refusal_kind`` classifies one). ``ReaderAuthorizer`` is the eval's reader: any
table and function, but no schema change, ATTACH, pragma that sets something, or
transaction control. ``WRITE_ACTIONS`` are the authorizer actions that change a
database, its rows or its schema, for any fence that must let nothing write.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

import apsw

from seahaven.errors import WorldBug
from seahaven.sandbox.connection_catalog import NO_FTS5, TABLE_FUNCTIONS, Fts5Tables

__all__ = [
    "ALLOWED_FUNCTIONS",
    "REFUSALS",
    "REPORTING_PRAGMAS",
    "ROW_WRITES",
    "SCHEMA_ACTIONS",
    "WRITE_ACTIONS",
    "Authorizer",
    "ReaderAuthorizer",
    "Refusal",
    "Refused",
    "reader_refusal",
    "refusal_kind",
]

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


# --- the actions, by what they do ---------------------------------------------------------------

SCHEMA_ACTIONS = frozenset(
    getattr(apsw, name)
    for name in dir(apsw)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_")) and isinstance(getattr(apsw, name), int)
) | {apsw.SQLITE_ALTER_TABLE, apsw.SQLITE_REINDEX, apsw.SQLITE_ANALYZE}
ROW_WRITES = frozenset({apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE})
"""The authorizer actions that write rows."""
WRITE_ACTIONS = ROW_WRITES | SCHEMA_ACTIONS | {apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH}
"""Every authorizer action that changes a database: a row write, a schema change, ATTACH, DETACH."""
_SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
)
_READABLE_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})


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
    if action in SCHEMA_ACTIONS:
        return "it changes the schema, and this connection only reads"
    if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
        return "it attaches or detaches a database, and this connection's databases are fixed"
    if (
        action == apsw.SQLITE_PRAGMA
        and second is not None
        and (first or "").lower() not in REPORTING_PRAGMAS
    ):
        # A reporting pragma's argument names what to report on (PRAGMA table_info(charges));
        # any other pragma given an argument sets something.
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
        table_functions: Iterable[str] = TABLE_FUNCTIONS,
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
        fts5: Fts5Tables = NO_FTS5,
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
        if action in ROW_WRITES:
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
        if action in SCHEMA_ACTIONS:
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
        if action in ROW_WRITES:
            name = (first or "").lower()
            if name in _SCHEMA_TABLES or self.read_only or name.startswith("sqlite_"):
                return self._write_refusal(first or "", schema, NO_FTS5)
            return None
        return self.refusal(action, first, second, schema) or Refused(
            "action", _action_name(action), f"action {_action_name(action)}"
        )
