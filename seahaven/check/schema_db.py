"""The world's schema, built in a blank in-memory database for the schema rules to interrogate.

The schema comes from the imported world when there is one, else from the
package's ``schema/*.sql`` files in filename order. Line numbers come from the
``*.sql`` files on disk; a schema that is not on disk is reported at the
package directory with no line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

import seahaven.check.sqltext as sqltext
from seahaven.stores.clock import Clock, StatementClock, ms_to_datetime
from seahaven.stores.db import run_script
from seahaven.stores.ids import sql_random
from seahaven.stores.schema import TableInfo, describe

if TYPE_CHECKING:
    from seahaven.check.package import WorldPackage

__all__ = ["SchemaDatabase", "SchemaFailure", "SchemaObject"]

SCHEMA_DIRECTORY = "schema"


@dataclass(frozen=True, slots=True)
class SchemaObject:
    """One row of ``sqlite_master`` that has SQL: a table, index, view or trigger."""

    kind: str
    name: str
    table: str
    sql: str


@dataclass(frozen=True, slots=True)
class SchemaFailure:
    """The schema did not execute: SQLite's message, and the statement's file and line if found."""

    message: str
    path: Path
    line: int | None


@dataclass(eq=False)
class SchemaDatabase:
    """What SQLite says about the schema, and where on disk each object is declared."""

    tables: dict[str, TableInfo] = field(default_factory=dict)
    objects: list[SchemaObject] = field(default_factory=list)
    failure: SchemaFailure | None = None
    # Every *.sql file of the package, the schema directory's first, searched for lines.
    sql_files: list[Path] = field(default_factory=list)
    fallback: Path = Path()

    def locate(self, kind: str, name: str) -> tuple[Path, int | None]:
        """Where the ``CREATE`` of an object is, or the package directory with no line."""
        found = sqltext.find_create(self.sql_files, kind, name)
        if found is None:
            return self.fallback, None
        return found

    @classmethod
    def build(
        cls, package: WorldPackage | None, world_schema: str | None, schema_failure: str | None
    ) -> SchemaDatabase | None:
        """Build the schema a world declares; ``None`` when there is none to build.

        ``world_schema`` is the imported world's schema, when it imported;
        ``schema_failure`` is SQLite's message when importing failed because the
        schema does not execute.
        """
        if package is None:
            return None
        fallback = package.location
        directory = package.directory
        ordered = _schema_files(directory)
        everything = _all_sql_files(directory, ordered)
        if schema_failure is not None:
            # The world did not import because its schema does not execute: say where,
            # from the files when they are the culprit, else at the package.
            failure = _pinpoint(ordered) or SchemaFailure(schema_failure, fallback, None)
            return cls(failure=failure, sql_files=everything, fallback=fallback)
        if world_schema is not None:
            text = world_schema
        elif ordered:
            text = "\n".join(path.read_text(encoding="utf-8") for path in ordered)
        else:
            return None
        conn = _blank_connection()
        try:
            try:
                run_script(conn, text)
            except apsw.Error as error:
                failure = _pinpoint(ordered) or SchemaFailure(str(error), fallback, None)
                return cls(failure=failure, sql_files=everything, fallback=fallback)
            info = describe(conn)
            objects = [
                SchemaObject(str(kind), str(name), str(table), str(sql))
                for kind, name, table, sql in conn.execute(
                    "SELECT type, name, tbl_name, sql FROM sqlite_schema "
                    "WHERE sql IS NOT NULL ORDER BY rowid"
                )
            ]
        finally:
            conn.close()
        return cls(
            tables=info.tables,
            objects=objects,
            sql_files=everything,
            fallback=fallback,
        )


def _schema_files(directory: Path | None) -> list[Path]:
    """The ``schema/*.sql`` files, in the filename order they are applied in."""
    if directory is None:
        return []
    folder = directory / SCHEMA_DIRECTORY
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.suffix == ".sql" and p.is_file()), key=_name)


def _name(path: Path) -> str:
    return path.name


def _all_sql_files(directory: Path | None, first: list[Path]) -> list[Path]:
    if directory is None:
        return list(first)
    rest = sorted(
        path
        for path in directory.rglob("*.sql")
        if path not in first and "__pycache__" not in path.parts
    )
    return [*first, *rest]


def _blank_connection() -> apsw.Connection:
    """A connection configured as the one a ``World`` builds its schema on."""
    conn = apsw.Connection(":memory:")
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
    conn.execute("PRAGMA foreign_keys=ON")
    # Building a schema reads no rows, so the instant is irrelevant.
    StatementClock(Clock(ms_to_datetime(0), "fixed")).install(conn)
    sql_random(conn, b"schema", "schema")
    return conn


def _pinpoint(files: list[Path]) -> SchemaFailure | None:
    """Run the files statement by statement to find the one SQLite refuses, and its line."""
    if not files:
        return None
    conn = _blank_connection()
    try:
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            for first_line, statement in _statements(text):
                try:
                    conn.execute(statement)
                except apsw.Error as error:
                    return SchemaFailure(
                        str(error), path, _error_line(statement, first_line, error)
                    )
    finally:
        conn.close()
    return None


def _statements(text: str) -> Iterator[tuple[int, str]]:
    """Each statement of a file with the line its code starts on, split where SQLite would."""
    statement = ""
    first_line = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if not _has_code(statement):
            # Leading blank and comment lines are not part of the statement.
            statement, first_line = "", number
        statement += line
        if apsw.complete(statement):
            yield first_line, statement
            statement = ""
    if _has_code(statement):
        # A last statement without its semicolon still runs.
        yield first_line, statement


def _has_code(sql: str) -> bool:
    return any(token.kind not in ("comment", "space") for token in sqltext.tokens(sql))


def _error_line(statement: str, first_line: int, error: apsw.Error) -> int:
    """The line SQLite's error offset points at, else the statement's first line of code."""
    offset = getattr(error, "error_offset", -1)
    if isinstance(offset, int) and 0 <= offset <= len(statement.encode("utf-8")):
        prefix = statement.encode("utf-8")[:offset].decode("utf-8", "ignore")
        return first_line + prefix.count("\n")
    return first_line
