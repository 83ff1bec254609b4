"""A world's schema: reading the ``*.sql`` files, building it, hashing it, describing its tables.

The schema is built once in memory when a ``World`` is constructed. SQLite
itself answers what each table is (strict, keyed, virtual, a shadow of FTS5),
so nothing here parses ``CREATE TABLE`` text.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal, cast

import apsw

from seahaven.errors import WorldBug
from seahaven.stores.clock import Clock, ms_to_datetime

__all__ = [
    "SchemaInfo",
    "TableInfo",
    "blank_image",
    "build_schema",
    "normalise_sql",
    "sql_files",
]

TableKind = Literal["table", "view", "virtual", "shadow"]


@dataclass(frozen=True, slots=True)
class TableInfo:
    """One table as SQLite reports it."""

    name: str
    kind: TableKind
    columns: tuple[str, ...]
    # Indexes into ``columns``, in primary-key order; empty without an explicit key.
    primary_key: tuple[int, ...]
    strict: bool


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    """The built schema: its hash and every table in it."""

    hash: str
    tables: dict[str, TableInfo]

    def tracked(self, untracked: Iterable[str]) -> dict[str, TableInfo]:
        """The tables the change log records: ordinary tables not named in ``untracked``."""
        skip = set(untracked)
        return {
            name: table
            for name, table in self.tables.items()
            if table.kind == "table" and name not in skip
        }


def sql_files(package: str | None, directory: str) -> str:
    """Every ``*.sql`` file in a package directory, in filename order, joined with newlines.

    Call it as ``seahaven.sql_files(__package__, "schema")``. The files are read
    through ``importlib.resources``, so a world reads its schema the same way from
    a checkout, a wheel or a zip.
    """
    from importlib import resources

    if not isinstance(package, str) or not package:
        raise WorldBug(
            "sql_files needs the package the schema lives in; pass __package__ from a module "
            "inside that package"
        )
    try:
        module = importlib.import_module(package)
    except ImportError as error:
        raise WorldBug(f"sql_files cannot import package {package!r}: {error}") from error
    if not hasattr(module, "__path__"):
        raise WorldBug(
            f"{package!r} is a module, not a package; pass __package__ rather than __name__"
        )
    relative = PurePosixPath(directory.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts or directory.strip() in ("", "."):
        raise WorldBug(
            f"sql_files directory {directory!r} must name a directory inside {package!r}, "
            "such as 'schema'"
        )
    folder = resources.files(package).joinpath(*relative.parts)
    if not folder.is_dir():
        raise WorldBug(f"package {package!r} has no directory {directory!r}")
    files = sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".sql") and entry.is_file()),
        key=lambda entry: entry.name,
    )
    if not files:
        raise WorldBug(f"{package}/{directory} holds no *.sql files")
    return "\n".join(entry.read_text(encoding="utf-8") for entry in files)


_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|$))
    | (?P<quoted>'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\])
    | (?P<space>\s+)
    | (?P<word>[A-Za-z0-9_$\x80-\U0010ffff]+)
    | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def normalise_sql(sql: str) -> str:
    """SQL text with comments dropped and whitespace reduced to what separates two words.

    Whitespace beside punctuation carries no meaning (``t(a)`` is ``t ( a )``),
    so it is dropped; between two words or quoted names it becomes one space.
    Quoted text is kept exactly.
    """
    pieces: list[str] = []
    previous_kind: str | None = None
    pending_space = False
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup
        if kind in ("comment", "space"):
            pending_space = True
            continue
        if pending_space and previous_kind in ("word", "quoted") and kind in ("word", "quoted"):
            pieces.append(" ")
        pending_space = False
        pieces.append(match.group())
        previous_kind = kind
    return "".join(pieces)


def _schema_clock() -> Clock:
    # Building the schema to hash it needs some clock; the instant is irrelevant
    # because rows are not part of the hash.
    return Clock(ms_to_datetime(0), "fixed")


def build_schema(world_name: str, schema: str) -> SchemaInfo:
    """Apply ``schema`` to a blank in-memory database and describe the result."""
    from seahaven.stores.clock import StatementClock
    from seahaven.stores.db import run_script
    from seahaven.stores.ids import sql_random

    conn = apsw.Connection(":memory:")
    try:
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
        conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        conn.execute("PRAGMA foreign_keys=ON")
        StatementClock(_schema_clock()).install(conn)
        sql_random(conn, b"schema", "schema")
        try:
            run_script(conn, schema)
        except apsw.Error as error:
            raise WorldBug(
                f"the schema of world {world_name!r} does not execute: {error}"
            ) from error
        return describe(conn)
    finally:
        conn.close()


class _WatchedClock(Clock):
    """A clock that remembers being read: a schema that reads it writes rows of its instant."""

    __slots__ = ("read",)

    def __init__(self) -> None:
        super().__init__(ms_to_datetime(0), "fixed")
        self.read = False

    def reading_ms(self) -> int:
        self.read = True
        return super().reading_ms()


class _Image:
    """What building one schema text in memory gave: a file's bytes, or ``None``."""

    __slots__ = ("data",)

    def __init__(self, data: bytes | None) -> None:
        self.data = data


_images: dict[str, _Image] = {}
_KEEP_IMAGES = 256
_images_lock = threading.Lock()
# Bytes 18 and 19 of a database file: the write and read versions, 1 for a rollback journal.
_ROLLBACK_VERSIONS = b"\x01\x01"


def blank_image(world_name: str, schema: str) -> bytes | None:
    """The bytes of a database file holding ``schema`` and nothing an instance makes its own.

    Built once per process for each schema text, in memory, on a connection set
    up as an instance's is, and marked for a rollback journal, the mode a store
    starts in, so a blank instance writes these bytes into its file instead of
    running the schema's statements, and opens it without rewriting the header.
    ``None`` when the schema's statements read the clock or ``random()``: their rows then belong
    to each instance, and the schema runs on each instance's own connection. A
    schema that does not execute raises ``WorldBug``, and nothing is kept.
    """
    key = hashlib.sha256(schema.encode("utf-8")).hexdigest()
    image = _images.get(key)
    if image is None:
        with _images_lock:
            image = _images.get(key)
            if image is None:
                image = _Image(_build_image(world_name, schema))
                if len(_images) >= _KEEP_IMAGES:
                    # A process that makes worlds without end keeps the newest images only.
                    del _images[next(iter(_images))]
                _images[key] = image
    return image.data


def _build_image(world_name: str, schema: str) -> bytes | None:
    from seahaven.stores.clock import StatementClock
    from seahaven.stores.db import run_script

    clock = _WatchedClock()
    drew = False

    def watched_random() -> int:
        nonlocal drew
        drew = True
        return 0

    def watched_randomblob(size: object) -> bytes:
        nonlocal drew
        drew = True
        return b"\x00"

    conn = apsw.Connection(":memory:")
    try:
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
        conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        conn.execute("PRAGMA foreign_keys=ON")
        StatementClock(clock).install(conn)
        flags = apsw.SQLITE_INNOCUOUS
        conn.create_scalar_function("random", cast(Any, watched_random), 0, flags=flags)
        conn.create_scalar_function("randomblob", cast(Any, watched_randomblob), 1, flags=flags)
        try:
            run_script(conn, schema)
        except apsw.Error as error:
            if clock.read or drew:
                # What failed may be the stand-in values; each instance runs it for real.
                return None
            raise WorldBug(
                f"the schema of world {world_name!r} does not execute: {error}"
            ) from error
        if clock.read or drew:
            return None
        data = bytearray(conn.serialize("main"))
    finally:
        conn.close()
    data[18:20] = _ROLLBACK_VERSIONS
    return bytes(data)


def describe(conn: apsw.Connection, schema_name: str = "main") -> SchemaInfo:
    """Read the tables and the normalised schema of one database on ``conn``."""
    quoted = '"' + schema_name.replace('"', '""') + '"'
    objects = conn.execute(
        f"SELECT type, name, tbl_name, sql FROM {quoted}.sqlite_schema "
        "WHERE sql IS NOT NULL ORDER BY type, name"
    ).fetchall()
    tables: dict[str, TableInfo] = {}
    shadow_or_virtual: dict[str, str] = {}
    for row in conn.execute(f"PRAGMA {quoted}.table_list").fetchall():
        name, kind, strict = str(row[1]), str(row[2]), bool(row[5])
        if name.startswith("sqlite_"):
            continue
        columns: list[str] = []
        key: list[tuple[int, int]] = []
        pragma = f"PRAGMA {quoted}.table_info({_quote_identifier(name)})"
        for index, column_row in enumerate(conn.execute(pragma).fetchall()):
            columns.append(str(column_row[1]))
            position = column_row[5]
            if isinstance(position, int) and position:
                key.append((position, index))
        tables[name] = TableInfo(
            name=name,
            kind=cast(TableKind, kind),
            columns=tuple(columns),
            primary_key=tuple(index for _, index in sorted(key)),
            strict=strict,
        )
        if kind in ("shadow", "virtual"):
            shadow_or_virtual[name] = kind
    lines = [
        f"{kind}\t{name}\t{table}\t{normalise_sql(str(sql))}"
        for kind, name, table, sql in objects
        if shadow_or_virtual.get(str(name)) != "shadow"
    ]
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    return SchemaInfo(hash=digest, tables=dict(sorted(tables.items())))


def _quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
