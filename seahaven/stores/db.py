"""``Db``, the connection wrapper world code uses, and how the framework opens connections.

Every connection an instance opens goes through ``open_connection``: the journal,
foreign keys, defensive mode, and the clock and random overrides. World code
never sets a pragma. Every SQLite failure arrives as ``DbError``.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import apsw

from seahaven.errors import DbError, WorldBug
from seahaven.stores.clock import Clock, StatementClock
from seahaven.stores.ids import sql_random
from seahaven.stores.transactions import (
    StoreConnection,
    begin_unless_open,
    commit,
    roll_back,
    run_cleanup,
    run_script,
    transaction_open,
)

__all__ = [
    "Connections",
    "Db",
    "Exec",
    "is_closing",
    "is_interrupt",
    "open_connection",
    "roll_back_quietly",
    "run_cleanup",
    "run_script",
    "use_memory_journal",
    "use_memory_store_journal",
    "use_private_journal",
    "use_shared_journal",
]

# SQLite gives each connection a lookaside buffer for its small allocations, by default 1,200
# bytes x 40 slots (47 KiB); an idle instance holds one per store. 20 slots is what a call's
# statements use with few misses (a one-row write: 4 allocations a call missing it, against
# none), so every connection the process opens afterwards gets that: half the buffer.
LOOKASIDE_SLOT_BYTES = 1200
LOOKASIDE_SLOTS = 20


def _use_smaller_lookaside() -> bool:
    """Set the lookaside size for the process's connections, if none is open yet.

    SQLite takes the setting only while it is shut down, and shutting it down
    with a connection open is not allowed, so a process that opened one before
    importing seahaven keeps SQLite's default. Answers whether it was set.
    """
    if apsw.connections():
        return False
    apsw.shutdown()
    try:
        apsw.config(apsw.SQLITE_CONFIG_LOOKASIDE, LOOKASIDE_SLOT_BYTES, LOOKASIDE_SLOTS)
    finally:
        apsw.initialize()
    return True


SMALLER_LOOKASIDE = _use_smaller_lookaside()


class Exec(NamedTuple):
    """What ``Db.execute`` reports: rows changed by the statement, and the last inserted rowid."""

    rowcount: int
    last_rowid: int


# Exec(...) without the Python frame a NamedTuple's __new__ adds.
_new_exec = tuple.__new__

# Each APSW exception class, by the primary result code it stands for.
_CODES: dict[type[Exception], int] = {}
for _code in range(1, 100):
    try:
        _CODES.setdefault(type(apsw.exception_for(_code)), _code)
    except ValueError:
        continue


def db_error(error: apsw.Error, conn: apsw.Connection | None = None) -> DbError | WorldBug:
    """Translate an APSW exception into the framework's own.

    With ``conn``, a refusal its authorizer recorded (a ``refusal`` attribute, as
    ``seahaven.sandbox.ReaderAuthorizer`` keeps) becomes the reason the error gives.
    """
    if isinstance(error, apsw.ConnectionClosedError | apsw.CursorClosedError):
        return WorldBug("the instance behind this database was destroyed")
    message = error.args[0] if error.args else type(error).__name__
    if is_interrupt(error):
        if conn is not None and is_closing(conn):
            return WorldBug(DESTROYED_WHILE_RUNNING)
        # Another thread interrupted it (Instance.interrupt(), a server stopping):
        # the statement did not finish, and the connection is as usable as before.
        return DbError(str(message), apsw.SQLITE_INTERRUPT, message=INTERRUPTED)

    code = getattr(error, "extendedresult", None) or getattr(error, "result", None)
    # An error raised by Python code SQLite called (randomblob(), say) carries no
    # code of its own; its class says which it is.
    code = code if isinstance(code, int) else _CODES.get(type(error))
    refusal = None
    if conn is not None and isinstance(error, apsw.AuthError):
        authorizer = getattr(conn, "authorizer", None)
        refusal = getattr(authorizer, "refusal", None)
        if isinstance(refusal, str):
            authorizer.refusal = None  # type: ignore[union-attr]
            return DbError(
                str(message),
                code,
                refusals=(refusal,),
                message=f"the database refused the statement: {refusal}",
            )
    return DbError(str(message), code)


def value_error(error: OverflowError | ValueError, sql: str) -> DbError | None:
    """The framework's error for what APSW raises before SQLite sees a statement.

    An integer past SQLite's 64 bits and a NUL inside the statement's text are
    refused by APSW with Python's own exceptions. For anything else the answer is
    ``None``: it came from elsewhere (a world's own SQL function, say), and the
    caller re-raises it as it was.
    """
    if isinstance(error, OverflowError):
        return DbError(
            str(error),
            apsw.SQLITE_RANGE,
            message="the database refused the operation: an integer does not fit in 64 bits",
        )
    if "\x00" in sql:
        return DbError(
            str(error),
            apsw.SQLITE_MISUSE,
            message=f"the statement has a NUL character at offset {sql.index(chr(0))}, which "
            "SQL text cannot hold",
        )
    return None


# What a statement interrupted from another thread fails with, and one stopped by destroy().
INTERRUPTED = "the statement was interrupted before it finished"
DESTROYED_WHILE_RUNNING = (
    "the statement was interrupted: the instance behind this database was destroyed"
)

# The connections whose owner is closing them: an interrupt on one now means destroy().
_closing: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def is_interrupt(error: BaseException) -> bool:
    """Whether ``error`` is SQLite stopping a statement on an interrupt.

    A statement running when the interrupt lands fails with ``InterruptError``; one
    being prepared when it lands fails with an ``SQLError`` saying "interrupted".
    """
    if isinstance(error, apsw.InterruptError):
        return True
    return isinstance(error, apsw.SQLError) and error.args[:1] == ("interrupted",)


def is_closing(conn: apsw.Connection) -> bool:
    """Whether ``conn``'s instance is being destroyed (``Connections.stop`` marked it)."""
    return conn in _closing


class Connections:
    """Every connection one instance holds, closed and interrupted under one lock.

    ``interrupt()`` may be called from any thread while another runs a statement:
    SQLite's interrupt is made for that, but not for a connection closing at the same
    moment, so ``close`` and ``interrupt`` never overlap. ``stop()`` is the interrupt
    destroy() sends: the statements it stops fail as a destroyed instance's would.
    """

    __slots__ = ("_conns", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conns: list[apsw.Connection] = []

    def add(self, conn: apsw.Connection) -> None:
        """Hold ``conn`` until ``close(conn)``."""
        with self._lock:
            self._conns.append(conn)

    def interrupt(self) -> None:
        """Stop the statement each connection runs now, if any; idle ones are untouched."""
        with self._lock:
            for conn in self._conns:
                # A connection closed behind our back has nothing to stop.
                with contextlib.suppress(apsw.Error):
                    conn.interrupt()

    def stop(self) -> None:
        """``interrupt()`` for destroy(): what it stops reports the instance destroyed."""
        with self._lock:
            _closing.update(self._conns)
        self.interrupt()

    def discard(self, conn: apsw.Connection) -> None:
        """Stop holding ``conn`` without closing it (the pool keeps it for another store)."""
        with self._lock, contextlib.suppress(ValueError):
            self._conns.remove(conn)

    def close(self, conn: apsw.Connection) -> None:
        """Close ``conn``, interrupting the statement another thread runs on it until it can.

        APSW refuses to close a connection busy in another thread; interrupting makes
        that thread's statement end, and the close is tried again until it succeeds.
        """
        with self._lock:
            with contextlib.suppress(ValueError):
                self._conns.remove(conn)
            while True:
                try:
                    conn.close()
                    return
                except apsw.ThreadingViolationError:
                    _closing.add(conn)
                    conn.interrupt()
                    time.sleep(0.001)


_savepoints = itertools.count()


class _Transaction:
    """``BEGIN`` at the top level (``transactions.begin``), ``SAVEPOINT`` when one is open."""

    __slots__ = ("_conn", "_savepoint")

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._savepoint: str | None = None

    def __enter__(self) -> None:
        try:
            if not begin_unless_open(self._conn):
                self._savepoint = f"seahaven_{next(_savepoints)}"
                self._conn.execute(f"SAVEPOINT {self._savepoint}")
        except apsw.Error as error:
            raise db_error(error, self._conn) from error

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                if self._savepoint:
                    self._conn.execute(f"RELEASE {self._savepoint}")
                else:
                    commit(self._conn)
                return
            except apsw.Error as error:
                # A commit that fails (a deferred foreign key, say) must not leave the
                # transaction open behind the caller's back.
                self._roll_back()
                raise db_error(error, self._conn) from error
        self._roll_back()

    def _roll_back(self) -> None:
        conn, savepoint = self._conn, self._savepoint
        try:
            if savepoint:
                run_cleanup(conn, f"ROLLBACK TO {savepoint}; RELEASE {savepoint}")
            else:
                roll_back(conn)
        except apsw.Error:
            # SQLite may already have rolled back (an I/O error, a full disk); the
            # failure that brought us here is the one worth raising.
            pass


@functools.cache
def _closed_connection() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.close()
    return conn


class Db:
    """One node's database connection, as world code sees it.

    Parameters are positional ``?`` bindings. Rows come back as dicts keyed by
    column name.
    """

    __slots__ = ("_conn", "_idle")

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        # Cursors that ran a statement to its end, for the next ``execute`` or ``rows``:
        # ``Connection.execute`` makes a cursor per statement, which costs about as much as
        # a short statement. One is taken while its statement runs (popped, as one step), so
        # a statement run from inside another, or from another thread, gets one of its own.
        self._idle: list[apsw.Cursor] = []

    @property
    def conn(self) -> apsw.Connection:
        """The raw APSW connection. Do not close it or change its pragmas or authorizer."""
        return self._conn

    def detach(self) -> None:
        """Point this ``Db`` at a closed connection: its store's connection serves another now.

        A handle kept past its instance's end then fails as one on a closed connection
        does (the instance was destroyed), never reaching the next instance's store.
        """
        self._conn = _closed_connection()
        self._idle.clear()

    def _cursor(self) -> apsw.Cursor:
        try:
            return self._idle.pop()
        except IndexError:
            return self._conn.cursor()

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection (a store's episode not counted)."""
        return transaction_open(self._conn)

    def one(self, sql: str, *params: Any) -> dict[str, Any] | None:
        """The first row as a dict, or ``None``."""
        try:
            cursor = self._conn.execute(sql, params)
            for row in cursor:
                names = [column[0] for column in cursor.get_description()]
                cursor.close()
                return dict(zip(names, row, strict=True))
            return None
        except apsw.Error as error:
            raise db_error(error, self._conn) from error
        except (OverflowError, ValueError) as error:
            translated = value_error(error, sql)
            if translated is None:
                raise
            raise translated from error

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Every row, each a dict keyed by column name."""
        try:
            cursor = self._cursor()
            first = next(cursor.execute(sql, params), None)
            if first is None:
                self._idle.append(cursor)
                return []
            names = [column[0] for column in cursor.get_description()]
            result = [dict(zip(names, first, strict=True))]
            # A plain loop: most queries return a row or two, where a generator's frame costs
            # more than the appends.
            for row in cursor:
                result.append(dict(zip(names, row, strict=True)))
            # Kept only once read to its end: a cursor left part way holds its statement open.
            self._idle.append(cursor)
            return result
        except apsw.Error as error:
            raise db_error(error, self._conn) from error
        except (OverflowError, ValueError) as error:
            translated = value_error(error, sql)
            if translated is None:
                raise
            raise translated from error

    def execute(self, sql: str, *params: Any) -> Exec:
        """Run a statement for effect; returns ``Exec(rowcount, last_rowid)``."""
        conn = self._conn
        try:
            before = conn.total_changes()
            cursor = self._cursor()
            for _ in cursor.execute(sql, params):
                pass
            self._idle.append(cursor)
            changed = conn.changes() if conn.total_changes() != before else 0
            return _new_exec(Exec, (changed, conn.last_insert_rowid()))
        except apsw.Error as error:
            raise db_error(error, conn) from error
        except (OverflowError, ValueError) as error:
            translated = value_error(error, sql)
            if translated is None:
                raise
            raise translated from error

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement per row of bindings; returns how many rows changed."""
        conn = self._conn
        try:
            before = conn.total_changes()
            for _ in conn.executemany(sql, rows):
                pass
            return int(conn.total_changes() - before)
        except apsw.Error as error:
            raise db_error(error, conn) from error
        except (OverflowError, ValueError) as error:
            translated = value_error(error, sql)
            if translated is None:
                raise
            raise translated from error

    def transaction(self) -> _Transaction:
        """A transaction as a context manager: ``BEGIN`` at the top level, a savepoint nested."""
        return _Transaction(self._conn)

    def __repr__(self) -> str:
        return f"Db({self._conn.filename or ':memory:'})"


def use_private_journal(conn: apsw.Connection) -> None:
    """A store's own connection while nothing else reads its file: one descriptor, no syncing.

    The rollback journal is kept in memory and the file locked for this
    connection alone, so SQLite opens no ``-wal``, ``-shm`` or ``-journal`` file
    (one descriptor per store instead of three) and takes no lock per
    transaction. An instance is thrown away at the end of its run, so surviving
    a crash buys nothing; ``synchronous=OFF`` comes first so that leaving a
    frozen file's write-ahead mode does not wait for the disk. A store switches
    to ``use_shared_journal`` the first time a reader needs it.
    """
    run_script(
        conn, "PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=MEMORY"
    )


def use_memory_store_journal(conn: apsw.Connection) -> None:
    """A store in memory's own connection: ``use_private_journal`` less what it has already.

    Its rollback journal is in memory already (SQLite's own mode for an in-memory
    or deserialized database). A page written before the commit would be seen by a
    reader's copy of the image, so a transaction's pages stay in the cache until
    it ends.
    """
    run_script(
        conn, "PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_spill=OFF"
    )


def use_shared_journal(conn: apsw.Connection) -> None:
    """Switch a store's connection to the write-ahead log, so readers read alongside it.

    What ``inst.inspect()`` and the control tool need: the lock is given up and
    the file marked for WAL, which adds its ``-wal`` and ``-shm`` files. It cannot
    happen inside a transaction.
    """
    run_script(conn, "PRAGMA synchronous=OFF; PRAGMA locking_mode=NORMAL")
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchall()
    if mode != [("wal",)]:
        raise WorldBug(f"the store could not switch to its write-ahead log (it answered {mode})")


def use_memory_journal(conn: apsw.Connection) -> None:
    """The journal in memory on every database ``conn`` has attached, unsynced, locks as usual.

    For a connection that writes a store briefly before its own connection uses it
    (``setup_sql``'s, a schema run per instance): it leaves no lock behind.
    """
    schemas = [str(row[1]) for row in conn.execute("PRAGMA database_list") if row[1] != "temp"]
    run_script(
        conn,
        "".join(
            f'PRAGMA "{name}".synchronous=OFF; PRAGMA "{name}".journal_mode=MEMORY;'
            for name in (schema.replace('"', '""') for schema in schemas)
        ),
    )


def roll_back_quietly(conn: apsw.Connection) -> None:
    """Roll back ``conn``'s transaction, if it has one, ignoring what SQLite says."""
    with contextlib.suppress(apsw.Error):
        roll_back(conn)


def open_connection(
    path: Path | str,
    *,
    clock: Clock,
    seed: bytes,
    purpose: str,
    readonly: bool = False,
    defer_journal: bool = False,
) -> apsw.Connection:
    """Open a connection to an instance file with the framework's setup applied.

    With ``defer_journal`` the journal is not set up yet: nothing here reads the
    file, so the caller runs ``use_private_journal`` before its first use.
    Otherwise a writable connection gets ``use_memory_journal``.
    """
    flags = apsw.SQLITE_OPEN_URI | (
        apsw.SQLITE_OPEN_READONLY
        if readonly
        else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    conn = StoreConnection(str(path), flags=flags)
    try:
        conn.set_busy_timeout(10_000)
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
        conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        if not readonly and not defer_journal:
            use_memory_journal(conn)
        run_script(conn, "PRAGMA foreign_keys=ON")
        StatementClock(clock).install(conn)
        sql_random(conn, seed, purpose)
    except BaseException:
        conn.close()
        raise
    return conn
