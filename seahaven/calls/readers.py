"""Connections that see every store of an instance at once: readers, and ``setup_sql``'s.

``open_reader`` (``inst.inspect()`` and the control tool) and ``open_combined``
(``setup_sql``) open them, for stores on disk and in memory alike. On disk they
attach the stores' files; in memory, where no other connection can open a
store, they hold copies of the stores' images, which ``ReaderDb.sync`` renews
before each statement for every store that changed since the last, and which
``keep_combined_writes`` loads back into the stores once ``setup_sql``'s work
is committed. A store in memory running in an episode
(``seahaven.stores.transactions``) ends it, committed, before its image is
copied: the copy must hold what the calls committed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

import apsw

from seahaven.calls.runtime import NodeRuntime
from seahaven.errors import WorldBug
from seahaven.sandbox import Deadline, ReaderAuthorizer, limit_values
from seahaven.stores.clock import Clock
from seahaven.stores.db import Connections, Db, Exec, db_error, open_connection
from seahaven.stores.ids import node_seed
from seahaven.stores.transactions import transaction_open

__all__ = ["ReaderDb", "keep_combined_writes", "open_combined", "open_reader"]


def open_reader(
    runtimes: Sequence[NodeRuntime],
    clock: Clock,
    seed: bytes,
    connections: Connections,
    purpose: str,
    lock: threading.RLock,
) -> ReaderDb:
    """A read-only ``Db`` on the root store with every other store attached.

    On disk every store switches to the write-ahead log first, so the reader
    reads alongside each store's own connection. In memory the reader holds a
    copy of each store's image, renewed by ``ReaderDb.sync`` (under ``lock``,
    the instance's) for each store that changed. The reader joins
    ``connections``, so destroying the instance closes it; ``purpose``
    "control" holds it to the sandbox's value limit, since it runs the agent's
    SQL.
    """
    for runtime in runtimes:
        runtime.share()
    in_memory = runtimes[0].file is None
    conn = _open_all(runtimes, clock, seed, purpose, readonly=True)
    connections.add(conn)
    try:
        reader = ReaderDb(conn, runtimes if in_memory else (), lock)
        reader.sync()
        conn.execute("PRAGMA query_only=ON")
        conn.authorizer = ReaderAuthorizer()
        if purpose == "control":
            limit_values(conn)
        # No time limit, but a Ctrl-C stops a long read instead of waiting for it.
        Deadline(conn, None).install()
    except BaseException:
        connections.close(conn)
        raise
    return reader


def _open_all(
    runtimes: Sequence[NodeRuntime], clock: Clock, seed: bytes, purpose: str, *, readonly: bool
) -> apsw.Connection:
    """A connection on the root store with the others attached; in memory, empty ones to fill."""
    root = runtimes[0]
    if root.file is None:
        conn = open_connection(
            ":memory:", clock=clock, seed=node_seed(seed, "main"), purpose=purpose
        )
        try:
            for runtime in runtimes[1:]:
                conn.execute(f"ATTACH DATABASE ':memory:' AS \"{runtime.node.schema_name}\"")
        except BaseException:
            conn.close()
            raise
        return conn
    conn = open_connection(
        root.file, clock=clock, seed=node_seed(seed, "main"), purpose=purpose, readonly=readonly
    )
    try:
        for runtime in runtimes[1:]:
            file = runtime.file
            if file is None:
                raise WorldBug("an instance's stores are all on disk or all in memory")
            location = f"file:{quote(str(file.resolve()))}?mode=ro" if readonly else str(file)
            conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (location,))
    except BaseException:
        conn.close()
        raise
    return conn


def open_combined(
    runtimes: Sequence[NodeRuntime], clock: Clock, seed: bytes, purpose: str
) -> apsw.Connection:
    """A writable connection with every store on it, root as ``main``, for ``setup_sql``.

    On disk it opens the stores' files; in memory it holds copies of their
    images, which ``keep_combined_writes`` loads back into the stores once its
    work is committed.
    """
    for runtime in runtimes:
        if not runtime.settle():
            raise WorldBug("setup_sql runs between calls, with no transaction open")
    conn = _open_all(runtimes, clock, seed, purpose, readonly=False)
    if runtimes[0].file is None:
        try:
            for runtime in runtimes:
                conn.deserialize(runtime.node.schema_name, runtime.conn.serialize("main"))
        except BaseException:
            conn.close()
            raise
    return conn


def keep_combined_writes(conn: apsw.Connection, runtimes: Sequence[NodeRuntime]) -> None:
    """Make what ``conn`` (from ``open_combined``) committed the stores' own; a no-op on disk."""
    if runtimes[0].file is None:
        for runtime in runtimes:
            runtime.load_image(conn.serialize(runtime.node.schema_name))


class ReaderDb(Db):
    """The ``Db`` of a reader from ``open_reader``: one connection, shared by every thread.

    A connection runs one statement at a time, so each of ``one``, ``rows``,
    ``execute`` and ``executemany`` takes the reader's turn (a lock of its own)
    for its statement: threads sharing the reader each get their rows, one
    statement after another, in memory and on disk alike. On disk that is all;
    the statement reads alongside the calls. In memory each first copies in the
    image of every store that changed since the reader last looked (``sync``),
    under the instance's lock, so never half way through a call, and the turn is
    taken before that lock is let go, so no other thread renews the copies under
    a running statement. Whoever uses ``conn`` directly calls ``sync`` first, and
    keeps that connection to one thread.
    """

    __slots__ = ("_lock", "_runtimes", "_seen", "_turn")

    def __init__(
        self, conn: apsw.Connection, runtimes: Iterable[NodeRuntime], lock: threading.RLock
    ) -> None:
        super().__init__(conn)
        self._runtimes = tuple(runtimes)
        self._lock = lock
        self._seen: dict[int, tuple[int, int, int]] = {}
        # One statement at a time on the reader's connection. Always taken after the
        # instance's lock, never before it: a thread holding the turn never waits for the
        # instance, so a call that reads through the reader cannot wait on it in a circle.
        self._turn = threading.RLock()

    def sync(self) -> None:
        """Copy in each store changed since the last ``sync``: nothing to do on disk."""
        if not self._runtimes:
            return
        with self._lock, self._turn:
            self._copy_changed()

    def _take_turn(self) -> None:
        """Take the reader's turn for one statement; in memory, with the copies renewed first."""
        if not self._runtimes:
            self._turn.acquire()
            return
        with self._lock:
            self._turn.acquire()
            try:
                self._copy_changed()
            except BaseException:
                self._turn.release()
                raise

    def _copy_changed(self) -> None:
        """Copy in each store that changed; the caller holds the instance's lock and the turn."""
        conn = self.conn
        try:
            stale = [
                (runtime, version)
                for runtime in self._runtimes
                if self._seen.get(runtime.index) != (version := runtime.image_version())
            ]
        except apsw.Error as error:
            raise db_error(error, conn) from error
        if not stale:
            return
        try:
            authorizer = conn.authorizer
            conn.authorizer = None
        except apsw.Error as error:
            raise db_error(error, conn) from error
        try:
            for runtime, version in stale:
                conn.deserialize(runtime.node.schema_name, runtime.conn.serialize("main"))
                if transaction_open(runtime.conn):
                    # What is copied is the last commit; the open transaction's commit
                    # changes no count, so the store is copied again next time.
                    self._seen.pop(runtime.index, None)
                else:
                    self._seen[runtime.index] = version
        except apsw.Error as error:
            raise db_error(error, conn) from error
        finally:
            with contextlib.suppress(apsw.Error):
                conn.authorizer = authorizer

    def one(self, sql: str, *params: Any) -> dict[str, Any] | None:
        """The first row as a dict, or ``None``."""
        self._take_turn()
        try:
            return super().one(sql, *params)
        finally:
            self._turn.release()

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Every row, each a dict keyed by column name."""
        self._take_turn()
        try:
            return super().rows(sql, *params)
        finally:
            self._turn.release()

    def execute(self, sql: str, *params: Any) -> Exec:
        """Run a statement; a reader's refuses anything that writes."""
        self._take_turn()
        try:
            return super().execute(sql, *params)
        finally:
            self._turn.release()

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement per row of bindings; a reader's refuses anything that writes."""
        self._take_turn()
        try:
            return super().executemany(sql, rows)
        finally:
            self._turn.release()
