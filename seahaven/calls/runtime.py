"""``NodeRuntime``: one store of one instance, its file, connection, id stream and state.

A runtime is what dispatch, the context and the state document hold for a
store. It is handed everything it needs when the instance is made (the clock,
the instance's info, the connections registry that closes it).

A store lives in a file of the instance's directory (storage "disk") or in
its connection's memory (storage "memory"). The connections that see every
store at once are opened here, for both: ``open_reader`` (``inst.inspect()``
and the control tool) and ``open_combined`` (``setup_sql``). On disk they
attach the stores' files; in memory, where no other connection can open a
store, they hold copies of the stores' images, which ``ReaderDb.sync`` renews
before each statement for every store that changed since the last.

``open_store`` opens one store (a copy of a fixture file, or an image loaded in
memory) and ``link_children`` gives each store its added stores, for whatever
assembles an instance: ``seahaven.creation`` making one, ``seahaven.snapshots``
restoring one. ``InstanceParts`` is what an ``Instance`` is made of. All three
sit here, beneath the instance, so that both assemble instances without
importing each other.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import apsw

from seahaven.declaration.composition import Node, NodeReport
from seahaven.declaration.context import InstanceInfo
from seahaven.errors import WorldBug
from seahaven.fixtures.preparation import copy_state_file
from seahaven.sandbox import Deadline, ReaderAuthorizer, limit_values
from seahaven.stores.capture import Capture
from seahaven.stores.changelog import Shape
from seahaven.stores.clock import Clock
from seahaven.stores.db import (
    Connections,
    Db,
    Exec,
    db_error,
    open_connection,
    run_script,
    use_memory_journal,
    use_private_journal,
    use_shared_journal,
)
from seahaven.stores.ids import Ids, node_seed
from seahaven.stores.images import with_room
from seahaven.stores.schema import TableInfo, describe
from seahaven.stores.storage import Storage
from seahaven.stores.workdir import write_new_file

if TYPE_CHECKING:
    from seahaven.declaration.composition import DeclaredWorld

__all__ = [
    "InstanceParts",
    "NodeRuntime",
    "ReaderDb",
    "keep_combined_writes",
    "link_children",
    "open_combined",
    "open_reader",
    "open_store",
]


@dataclass(frozen=True, slots=True)
class InstanceParts:
    """Everything an ``Instance`` is made of, checked and assembled by whoever makes it.

    ``seahaven.creation`` assembles one for a new instance, ``seahaven.snapshots``
    for a restored one; ``Instance`` takes it whole. ``directory`` is ``None``
    for an instance in memory.
    """

    info: InstanceInfo
    world: DeclaredWorld
    clock: Clock
    state_format: str
    setup_sql: str | None
    control_tools: bool
    caller_seed: int | None
    startup: Any
    fixture_files: dict[str, str] | None
    reports: tuple[NodeReport, ...]
    directory: Path | None
    storage: Storage = "disk"


class NodeRuntime:
    """One node of one instance: its file (``None`` in memory), connection, id stream and state."""

    __slots__ = (
        "_conn",
        "_connections",
        "_db",
        "_extra_tables",
        "_journal",
        "_loads",
        "capture",
        "children",
        "clock",
        "file",
        "ids",
        "index",
        "info",
        "node",
        "path",
        "shapes",
        "state",
        "storage",
        "table_filter",
        "tables",
    )

    def __init__(
        self,
        node: Node,
        file: Path | None,
        conn: apsw.Connection,
        seed: bytes,
        *,
        clock: Clock,
        info: InstanceInfo,
        connections: Connections,
    ) -> None:
        self.node = node
        self.index = node.index
        self.path = node.path
        self.file = file
        self.storage: Storage = "disk" if file is not None else "memory"
        # How many times the store's image was replaced whole (load_image), for readers.
        self._loads = 0
        self._conn = conn
        self._connections = connections
        self._db = Db(conn)
        # None until first used, then "private" (this connection alone), or "shared".
        self._journal: str | None = None
        self.clock = clock
        self.ids = Ids(seed)
        self.state: dict[str, Any] = {}
        self.info = info
        self.children: dict[str, NodeRuntime] = {}
        world = node.world
        self.tables = world.schema_info.tables
        self.table_filter: Callable[[str], bool] | None = _table_filter(world)
        self._extra_tables: dict[str, TableInfo] = {}
        # What a recording activation changed on this store (its preupdate hook, once used).
        self.capture = Capture(conn, self.table_filter, world.schema_info.hash)
        # How the change log renders each table this store's calls change, by table name.
        self.shapes: dict[str, Shape] = {}

    @property
    def conn(self) -> apsw.Connection:
        """The node's connection, its journal set up on first use."""
        if self._journal is None:
            self.ensure_journal()
        return self._conn

    @property
    def db(self) -> Db:
        """The node's ``Db``, its journal set up on first use."""
        if self._journal is None:
            self.ensure_journal()
        return self._db

    def ensure_journal(self) -> None:
        """Set up the journal now, if the node has not been used yet."""
        if self._journal is None:
            if self.file is None:
                # A store in memory keeps its rollback journal in memory already (SQLite's
                # own mode for an in-memory or deserialized database), so one script sets
                # the rest. A page written before the commit would be seen by a reader's
                # copy of the image, so a transaction's pages stay in the cache until it ends.
                run_script(self._conn, _MEMORY_STORE_PRAGMAS)
            else:
                use_private_journal(self._conn)
            self._journal = "private"

    def share(self) -> None:
        """Let another connection read this store alongside its own: the write-ahead log.

        A store keeps its file to its own connection until a reader needs it;
        from then on it stays in WAL mode. Refused inside a transaction.
        """
        if self._journal == "shared":
            return
        if self.file is None:
            # Readers of a store in memory read copies of its image: nothing to switch.
            self.ensure_journal()
            self._journal = "shared"
            return
        if self._conn.in_transaction:
            raise WorldBug(
                f"the store at {self.path!r} cannot be opened to a reader while a transaction "
                "is open on it; open inst.inspect() between calls"
            )
        use_shared_journal(self._conn)
        self._journal = "shared"

    def read(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        """Rows of a read-only query, run on the store's own connection between calls.

        Nothing is opened: the statement runs where the calls run, under the
        reader's authorizer and ``query_only``, and both are taken off after it,
        so a grader reads the end state at the cost of the query alone.
        """
        conn = self.conn
        if conn.in_transaction:
            raise WorldBug(
                f"the store at {self.path!r} cannot be read while a transaction is open on it; "
                "read it between calls"
            )
        previous = conn.authorizer
        conn.execute("PRAGMA query_only=ON")
        conn.authorizer = ReaderAuthorizer()
        try:
            # No time limit, but a Ctrl-C stops a long read instead of waiting for it.
            with Deadline(conn, None):
                return self._db.rows(sql, *params)
        finally:
            conn.authorizer = previous
            conn.execute("PRAGMA query_only=OFF")

    def load_image(self, image: bytes) -> None:
        """Replace a store in memory with ``image`` whole (``setup_sql``'s result, say)."""
        if self.file is not None:
            raise WorldBug(f"the store at {self.path!r} is a file; only a store in memory loads")
        self._conn.deserialize("main", image)
        self._loads += 1
        # The image may hold tables of another shape than the one the capture knew.
        self.capture.forget_layouts()

    def image_version(self) -> tuple[int, int, int]:
        """What changes whenever the store's content may have: a reader's copy is renewed then."""
        (schema_version,) = self._conn.execute("PRAGMA schema_version").fetchone() or (0,)
        return (self._loads, int(self._conn.total_changes()), int(schema_version))

    def total_changes(self) -> int:
        """Rows changed on this connection since it opened; reads nothing from the file."""
        return int(self._conn.total_changes())

    def close(self) -> None:
        """Close the connection, without setting up anything first."""
        self._connections.close(self._conn)

    def describe_table(self, name: str) -> TableInfo:
        """Columns and key of ``name``, from the world's schema or, failing that, SQLite."""
        table = self.tables.get(name) or self._extra_tables.get(name)
        if table is None:
            table = describe(self.conn).tables[name]
            self._extra_tables[name] = table
        return table

    def __repr__(self) -> str:
        return f"NodeRuntime({self.path!r})"


# What use_private_journal sets on a file, less the journal mode an in-memory database
# already has, and no spilling of a transaction's pages into the image.
_MEMORY_STORE_PRAGMAS = (
    "PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_spill=OFF"
)


def _has_shadows(tables: Mapping[str, TableInfo]) -> bool:
    return any(table.kind in ("shadow", "virtual") for table in tables.values())


# Each world's table filter, worked out from its schema and untracked tables (both fixed when
# the world is made) by the first store of it, and shared by every store after: a tuple, so
# that a world whose every table is tracked (no filter) is told from one not seen yet.
_table_filters: weakref.WeakKeyDictionary[DeclaredWorld, tuple[Callable[[str], bool] | None]] = (
    weakref.WeakKeyDictionary()
)


def _table_filter(world: DeclaredWorld) -> Callable[[str], bool] | None:
    """The tables a store of ``world`` records changes of, or ``None`` for every table it has."""
    known = _table_filters.get(world)
    if known is not None:
        return known[0]
    tables = world.schema_info.tables
    tracked = world.schema_info.tracked(world.untracked_tables)
    every_table = {name for name, table in tables.items() if table.kind == "table"}
    table_filter = (
        None
        if set(tracked) == every_table and not _has_shadows(tables)
        else frozenset(tracked).__contains__
    )
    _table_filters[world] = (table_filter,)
    return table_filter


def open_store(
    node: Node,
    *,
    directory: Path | None,
    instance_seed: bytes,
    clock: Clock,
    info: InstanceInfo,
    connections: Connections,
    image: bytes | None = None,
    copy_from: Path | None = None,
    run_schema: bool = False,
    room: bool = False,
) -> NodeRuntime:
    """Open one store of an instance: a private file in ``directory``, or (``None``) in memory.

    The store holds ``image`` (a database image), or a copy of the file
    ``copy_from`` (on disk only), or nothing yet. On disk the file is new and
    private (0600), so its companion files get the same mode; in memory the
    image is loaded in one step. The connection joins ``connections`` and is set
    up as every store's is, its journal on first use. ``run_schema`` runs the
    world's schema on the store's own connection first, so rows it makes read
    the instance's clock and random stream. ``room`` loads a store in memory with
    room to grow into (``seahaven.stores.images``), for an image this process loads again and again
    (a fixture's, a blank schema's). The caller adds the runtime to its instance.
    """
    seed = node_seed(instance_seed, node.path)
    target: Path | None = None
    if directory is not None:
        target = directory / node.file_name
        if copy_from is not None:
            copy_state_file(copy_from, target)
        else:
            write_new_file(target, image or b"")
    elif copy_from is not None:
        raise WorldBug("a store in memory is loaded from an image, not copied from a file")
    conn = open_connection(
        target if target is not None else ":memory:",
        clock=clock,
        seed=seed,
        purpose="main",
        defer_journal=True,
    )
    connections.add(conn)
    try:
        if target is None:
            if image:
                conn.deserialize("main", with_room(image) if room else image)
        else:
            # Closing must not copy the write-ahead log back into a file that is deleted next.
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        if run_schema:
            # A journal that waits on no disk and keeps no lock after the script.
            use_memory_journal(conn)
            _run_schema(conn, node)
        return NodeRuntime(
            node, target, conn, seed, clock=clock, info=info, connections=connections
        )
    except BaseException:
        connections.close(conn)
        raise


def _run_schema(conn: apsw.Connection, node: Node) -> None:
    try:
        run_script(conn, node.world.schema)
    except apsw.Error as error:
        raise WorldBug(
            f"the schema of world {node.world.name!r} does not execute: {error}"
        ) from error


def link_children(runtimes: Sequence[NodeRuntime]) -> None:
    """Give each store its added stores by name, once every store of the instance is open."""
    for runtime in runtimes:
        # A store that adds no world keeps the empty dict it was made with.
        if runtime.node.edges:
            runtime.children = {
                name: runtimes[child.index] for name, child in runtime.node.children.items()
            }


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
                if runtime.conn.in_transaction:
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
