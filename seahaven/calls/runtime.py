"""``NodeRuntime``: one store of one instance, its file, connection, id stream and state.

A runtime is what dispatch, the context and the state document hold for a
store. It is handed everything it needs when the instance is made (the clock,
the instance's info, the connections registry that closes it).

A store lives in a file of the instance's directory (storage "disk") or in
its connection's memory (storage "memory"). A store in memory loaded from an
image the process loads again and again runs in an episode, on a connection
the pool keeps between stores (``seahaven.stores.pool``). The connections that
see every store at once are ``seahaven.calls.readers``'.

``open_store`` opens one store (a copy of a fixture file, or an image loaded in
memory) and ``link_children`` gives each store its added stores, for whatever
assembles an instance: ``seahaven.creation`` making one, ``seahaven.snapshots``
restoring one. ``InstanceParts`` is what an ``Instance`` is made of. All three
sit here, beneath the instance, so that both assemble instances without
importing each other.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from seahaven.declaration.composition import Node, NodeReport
from seahaven.declaration.context import InstanceInfo, Worlds, worlds_class
from seahaven.errors import WorldBug
from seahaven.fixtures.preparation import copy_state_file
from seahaven.sandbox import Deadline, ReaderAuthorizer, read_plainly
from seahaven.stores import pool
from seahaven.stores.capture import Capture
from seahaven.stores.changelog import Shape
from seahaven.stores.clock import Clock
from seahaven.stores.db import (
    Connections,
    Db,
    open_connection,
    run_script,
    use_memory_journal,
    use_memory_store_journal,
    use_private_journal,
    use_shared_journal,
)
from seahaven.stores.ids import Ids, node_seed
from seahaven.stores.images import with_room
from seahaven.stores.schema import TableInfo, describe
from seahaven.stores.storage import Storage
from seahaven.stores.transactions import rest, settle, transaction_open
from seahaven.stores.workdir import write_new_file

if TYPE_CHECKING:
    from seahaven.declaration.composition import DeclaredWorld

__all__ = [
    "InstanceParts",
    "NodeRuntime",
    "link_children",
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
        "worlds_type",
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
        capture: Capture | None = None,
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
        # The class of ``ctx.worlds`` here, naming the children (``link_children`` sets it).
        self.worlds_type: type[Worlds] = Worlds
        world = node.world
        self.tables = world.schema_info.tables
        self.table_filter: Callable[[str], bool] | None = _table_filter(world)
        self._extra_tables: dict[str, TableInfo] = {}
        # What a recording activation changed on this store (its preupdate hook, once used).
        self.capture = capture or Capture(conn, self.table_filter, world.schema_info.hash)
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
                use_memory_store_journal(self._conn)
            else:
                use_private_journal(self._conn)
            self._journal = "private"

    def journal_set_up(self) -> None:
        """Note that the connection's journal is set up already (a kept connection's, say)."""
        self._journal = "private"

    def share(self) -> None:
        """Let another connection read this store alongside its own: the write-ahead log.

        A store keeps its file to its own connection until a reader needs it;
        from then on it stays in WAL mode. Refused inside a transaction.
        """
        if self._journal == "shared":
            return
        if self.file is None:
            # Readers of a store in memory read copies of its image, which must hold
            # everything committed: the episode ends here, committed.
            self.ensure_journal()
            if not self.settle():
                raise WorldBug(
                    f"the store at {self.path!r} cannot be opened to a reader while a transaction "
                    "is open on it; open inst.inspect() between calls"
                )
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

        Nothing is opened: the statement runs where the calls run, so a grader reads
        the end state at the cost of the query alone. A plain read (``read_plainly``)
        runs as it is; anything else runs under the reader's authorizer and
        ``query_only``, taken off after it, which cost the connection its prepared
        statements.
        """
        conn = self.conn
        if transaction_open(conn):
            raise WorldBug(
                f"the store at {self.path!r} cannot be read while a transaction is open on it; "
                "read it between calls"
            )
        # No time limit, but a Ctrl-C stops a long read instead of waiting for it.
        with Deadline(conn, None):
            rows = read_plainly(self._db, sql, params)
            if rows is not None:
                return rows
            previous = conn.authorizer
            conn.execute("PRAGMA query_only=ON")
            conn.authorizer = ReaderAuthorizer()
            try:
                return self._db.rows(sql, *params)
            finally:
                conn.authorizer = previous
                conn.execute("PRAGMA query_only=OFF")

    def load_image(self, image: bytes) -> None:
        """Replace a store in memory with ``image`` whole (``setup_sql``'s result, say)."""
        if self.file is not None:
            raise WorldBug(f"the store at {self.path!r} is a file; only a store in memory loads")
        if not self.settle():
            raise WorldBug(f"the store at {self.path!r} loads an image only between calls")
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
        """Close the connection, or, its episode intact, hand it to the pool for the next store."""
        if pool.hand_back(self._conn, self.capture):
            self._connections.discard(self._conn)
            # Handles on this store kept past its end must not reach the next one.
            self._db.detach()
            self._conn = self._db.conn
            return
        self._connections.close(self._conn)

    def settle(self) -> bool:
        """End the store's episode, committed, if it runs in one (``transactions.settle``)."""
        return settle(self._conn)

    def rest(self) -> None:
        """Let the store's episode, if it has kept nothing, hold no page (``transactions.rest``)."""
        rest(self._conn)

    def describe_table(self, name: str) -> TableInfo:
        """Columns and key of ``name``, from the world's schema or, failing that, SQLite."""
        table = self.tables.get(name) or self._extra_tables.get(name)
        if table is None:
            table = describe(self.conn).tables[name]
            self._extra_tables[name] = table
        return table

    def __repr__(self) -> str:
        return f"NodeRuntime({self.path!r})"


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
    if directory is None and image and room and not run_schema and copy_from is None:
        return _open_kept(node, image, seed, clock=clock, info=info, connections=connections)
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


def _open_kept(
    node: Node,
    image: bytes,
    seed: bytes,
    *,
    clock: Clock,
    info: InstanceInfo,
    connections: Connections,
) -> NodeRuntime:
    """A store in memory holding ``image``, in an episode, on a kept connection when one waits."""
    conn, capture = pool.open_kept(image, node.world, clock=clock, seed=seed)
    connections.add(conn)
    try:
        runtime = NodeRuntime(
            node, None, conn, seed, clock=clock, info=info, connections=connections, capture=capture
        )
        runtime.journal_set_up()
        pool.begin_kept(conn, image, node.world, runtime.capture)
    except BaseException:
        connections.close(conn)
        raise
    return runtime


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
            runtime.worlds_type = worlds_class(runtime.children)
