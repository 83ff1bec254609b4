"""``NodeRuntime``: one store of one instance, its file, connection, id stream and state.

A runtime is what dispatch, the context and the state document hold for a
store. It is handed everything it needs when the instance is made (the clock,
the instance's info, the connections registry that closes it), so no layer
below the instance names the instance to use one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw

from seahaven.changelog import Shape
from seahaven.clock import Clock
from seahaven.composition import Node
from seahaven.context import InstanceInfo
from seahaven.db import (
    Connections,
    Db,
    open_connection,
    use_private_journal,
    use_shared_journal,
)
from seahaven.errors import WorldBug
from seahaven.ids import Ids, node_seed
from seahaven.sandbox import Deadline, ReaderAuthorizer, limit_values
from seahaven.schema import TableInfo, describe

__all__ = ["NodeRuntime", "open_reader"]


class NodeRuntime:
    """One node of one instance: its file, connection, id stream and state."""

    __slots__ = (
        "_conn",
        "_connections",
        "_db",
        "_extra_tables",
        "_journal",
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
        "table_filter",
        "tables",
    )

    def __init__(
        self,
        node: Node,
        file: Path,
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
        tracked = world.schema_info.tracked(world.untracked_tables)
        every_table = {name for name, table in self.tables.items() if table.kind == "table"}
        self.table_filter: Callable[[str], bool] | None = (
            None
            if set(tracked) == every_table and not _has_shadows(self.tables)
            else frozenset(tracked).__contains__
        )
        self._extra_tables: dict[str, TableInfo] = {}
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
            use_private_journal(self._conn)
            self._journal = "private"

    def share(self) -> None:
        """Let another connection read this store alongside its own: the write-ahead log.

        A store keeps its file to its own connection until a reader needs it;
        from then on it stays in WAL mode. Refused inside a transaction.
        """
        if self._journal == "shared":
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


def _has_shadows(tables: Mapping[str, TableInfo]) -> bool:
    return any(table.kind in ("shadow", "virtual") for table in tables.values())


def open_reader(
    runtimes: Sequence[NodeRuntime],
    clock: Clock,
    seed: bytes,
    connections: Connections,
    purpose: str,
) -> apsw.Connection:
    """A read-only connection on the root store with every other store attached.

    Every store switches to the write-ahead log first, so the reader reads
    alongside each store's own connection. The reader joins ``connections``, so
    destroying the instance closes it; ``purpose`` "control" holds it to the
    sandbox's value limit, since it runs the agent's SQL.
    """
    for runtime in runtimes:
        runtime.share()
    root = runtimes[0]
    conn = open_connection(
        root.file, clock=clock, seed=node_seed(seed, "main"), purpose=purpose, readonly=True
    )
    connections.add(conn)
    try:
        for runtime in runtimes[1:]:
            uri = f"file:{quote(str(runtime.file.resolve()))}?mode=ro"
            conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (uri,))
        conn.execute("PRAGMA query_only=ON")
        conn.authorizer = ReaderAuthorizer()
        if purpose == "control":
            limit_values(conn)
        # No time limit, but a Ctrl-C stops a long read instead of waiting for it.
        Deadline(conn, None).install()
    except BaseException:
        connections.close(conn)
        raise
    return conn
