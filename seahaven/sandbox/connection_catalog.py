"""What a connection holds, read before a statement is let near it: its FTS5 tables and catalog.

``fts5_tables`` names the FTS5 tables and shadow tables a statement may not
write; ``catalog`` reads a connection's tables and views, its table-valued
functions and its schemas, as the statement gate needs them, after connecting
its virtual tables so that what they prepare is not mistaken for the statement's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import apsw

__all__ = ["NO_FTS5", "TABLE_FUNCTIONS", "Catalog", "Fts5Tables", "catalog", "fts5_tables"]

TABLE_FUNCTIONS = ("json_each", "json_tree")
"""The table-valued functions a statement may always read."""

# --- FTS5 ----------------------------------------------------------------------------------------

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


NO_FTS5 = Fts5Tables(frozenset(), {})
"""No FTS5 tables: what a policy assumes when it is told of none."""


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
    return frozenset(names | set(TABLE_FUNCTIONS))


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
