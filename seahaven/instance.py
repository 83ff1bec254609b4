"""``Instance``: one run's private copy of a world, and how it is made and destroyed.

An instance holds one file and one connection per node of its composition,
one clock, one lock and the logs. It is made by ``world.instance(...)``:
the parameters are checked and the fixture verified before any file is
touched, then the files are copied or built, ``setup_sql`` runs, and the
startup hooks run with every node's transaction open. Anything that fails on
the way removes the directory again.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import secrets
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, overload

import apsw
from pydantic_core import to_jsonable_python

from seahaven import sandbox
from seahaven.changelog import CallRecord, LogRecord, Shape
from seahaven.clock import Clock, ClockMode, check_clock_mode, format_instant, parse_instant
from seahaven.composition import Composition, Node, NodeReport
from seahaven.context import Ctx, InstanceInfo
from seahaven.db import (
    Connections,
    Db,
    db_error,
    open_connection,
    run_cleanup,
    run_script,
    use_memory_journal,
    use_private_journal,
    use_shared_journal,
)
from seahaven.dispatch import Activation, Route, call_surface, entered, in_call, in_world_code
from seahaven.errors import ArgumentError, WorldBug
from seahaven.fixture_store import PreparedFixture, copy_state_file, prepare
from seahaven.ids import Ids, check_seed, derive_seed, node_seed
from seahaven.instances import watch
from seahaven.names import check_fixture_id
from seahaven.sandbox import Deadline, ReaderAuthorizer, limit_values
from seahaven.schema import TableInfo, blank_image, describe
from seahaven.setup_sql import run_setup_sql
from seahaven.workdir import instance_directory, remove_directory, write_new_file

if TYPE_CHECKING:
    from seahaven.fixture_store import Fixture
    from seahaven.world import World

__all__ = ["Instance", "NodeRuntime", "create_instance"]

P = ParamSpec("P")
R = TypeVar("R")

_live_instances: weakref.WeakSet[Instance] = weakref.WeakSet()

# How often destroy() stops the statements of a thread holding the instance, in seconds.
_STOP_EVERY = 0.05


class NodeRuntime:
    """One node of one instance: its file, connection, id stream and state."""

    __slots__ = (
        "_conn",
        "_db",
        "_extra_tables",
        "_instance",
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
        self, instance: Instance, node: Node, file: Path, conn: apsw.Connection, seed: bytes
    ) -> None:
        # Weakly: the instance holds its runtimes, and a runtime pointing back would make
        # every ended instance wait for the cycle collector to be freed.
        self._instance = weakref.ref(instance)
        self.node = node
        self.index = node.index
        self.path = node.path
        self.file = file
        self._conn = conn
        self._db = Db(conn)
        # None until first used, then "private" (this connection alone), or "shared".
        self._journal: str | None = None
        self.clock = instance.clock
        self.ids = Ids(seed)
        self.state: dict[str, Any] = {}
        self.info = instance._info
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
    def instance(self) -> Instance:
        """The instance this store belongs to."""
        instance = self._instance()
        if instance is None:
            raise WorldBug(f"the instance of store {self.path!r} is gone; make a new one")
        return instance

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

    def total_changes(self) -> int:
        """Rows changed on this connection since it opened; reads nothing from the file."""
        return int(self._conn.total_changes())

    def close(self) -> None:
        """Close the connection, without setting up anything first."""
        self.instance._connections.close(self._conn)

    def describe_table(self, name: str) -> TableInfo:
        """Columns and key of ``name``, from the world's schema or, failing that, SQLite."""
        table = self.tables.get(name) or self._extra_tables.get(name)
        if table is None:
            table = describe(self.conn).tables[name]
            self._extra_tables[name] = table
        return table

    def __repr__(self) -> str:
        return f"NodeRuntime({self.path!r})"


class _RouteCache:
    """The routes an instance resolved against one sealing of its world."""

    __slots__ = ("complete", "composition", "routes")

    def __init__(self, composition: Composition) -> None:
        self.composition = composition
        self.routes: dict[str, Route] = {}
        # Whether ``routes`` holds every surface entry, in surface order.
        self.complete = False


def _has_shadows(tables: Mapping[str, TableInfo]) -> bool:
    return any(table.kind in ("shadow", "virtual") for table in tables.values())


class Instance:
    """A private, isolated copy of a world for one run. Made by ``world.instance(...)``.

    The methods above the line marked "the framework's interface" are the public
    API. Below it is what the framework's other layers read from an instance:
    dispatch (``seahaven.dispatch``), the state document (``seahaven.state``) and
    freezing (``seahaven.freezing``). World code and evals never need it, and
    nothing outside this module reaches an instance's private attributes.
    """

    activation: Activation | None
    """The activation in progress (a call, a ``bulk()`` block or startup), or ``None``."""

    _info: InstanceInfo
    _world: World
    _clock: Clock
    _state_format: str
    _setup_sql: str | None
    _control_tools: bool
    _caller_seed: int | None
    _startup_rendered: Any
    _lock: threading.RLock
    _call_log: list[CallRecord]
    _change_log: list[LogRecord]
    _change_texts: list[str]
    _nodes: list[NodeRuntime]
    _route_cache: _RouteCache | None
    _inspect_db: Db | None
    _control_db: Db | None
    _connections: Connections
    _destroyed: bool
    _stopping: bool
    _diverged: str | None
    _formatting: bool
    _fixture_files: dict[str, str] | None
    _reports: tuple[NodeReport, ...]
    _directory: Path

    def __init__(self) -> None:
        raise TypeError("instances are made by world.instance(...)")

    # --- identity ------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The instance id, which is also the episode id in process."""
        return self._info.id

    @property
    def fixture(self) -> str | None:
        """The fixture id this instance was made from, or ``None``."""
        return self._info.fixture

    @property
    def seed(self) -> bytes:
        """The derived instance seed."""
        return self._info.seed

    @property
    def world(self) -> World:
        """The root world."""
        return self._world

    @property
    def clock(self) -> Clock:
        """The instance's one clock."""
        return self._clock

    @property
    def state_path(self) -> Path:
        """The root node's database file."""
        return self._nodes[0].file

    @property
    def directory(self) -> Path:
        """The instance's working directory."""
        return self._directory

    @property
    def db(self) -> Db:
        """The root node's ``Db``. Writes through it outside a call or ``bulk()`` are not logged."""
        return self._nodes[0].db

    @property
    def state_format(self) -> str:
        """The format ``state()`` answers in, fixed for the instance's life."""
        return self._state_format

    @property
    def setup_sql(self) -> str | None:
        """The ``setup_sql`` this instance was made with, as given."""
        return self._setup_sql

    @property
    def control_tools(self) -> bool:
        """Whether the framework's control tool is callable on this instance."""
        return self._control_tools

    @property
    def call_count(self) -> int:
        """How many calls have been dispatched."""
        return len(self._call_log)

    # --- calls -----------------------------------------------------------------------------------

    @overload
    def call(self, target: str, /, **arguments: Any) -> Any: ...
    @overload
    def call(
        self, target: Callable[Concatenate[Any, P], R], /, *args: P.args, **arguments: P.kwargs
    ) -> R: ...

    def call(self, target: Any, /, *args: Any, **arguments: Any) -> Any:
        """Run one tool: by its surface name, or by its function for a typed result."""
        return call_surface(self, target, args, arguments)

    def tools(self) -> list[dict[str, Any]]:
        """The flat tool list an agent sees, as ``{"name", "description", "input_schema"}``."""
        self.check_usable()
        return [route.entry.listing() for route in self.routes().values()]

    def composition(self) -> list[NodeReport]:
        """One report per store this instance holds, root first."""
        return list(self._reports)

    # --- reading ---------------------------------------------------------------------------------

    def inspect(self) -> Db:
        """A read-only ``Db`` on a second connection, with every added store attached."""
        self.check_usable()
        with self._lock:
            # Again under the lock: destroy() may have run while this thread waited for it.
            self.check_usable()
            if self._inspect_db is None:
                self._inspect_db = Db(self._open_reader("inspect"))
            return self._inspect_db

    def change_log(self) -> list[LogRecord]:
        """What the calls on this instance changed: a record per row per call, oldest first."""
        return list(self._change_log)

    def state_json(self, format: str | None = None) -> str:
        """The state document as compact JSON text, assembled from records encoded once.

        The text is what ``json.dumps(inst.state(format), separators=(",", ":"),
        ensure_ascii=False, allow_nan=False)`` writes, byte for byte, without
        building the document's dicts: each change-log record was encoded when
        its call ended. A format of the world's own is encoded when asked for.
        """
        from seahaven.state import document_json

        return document_json(self, format)

    def call_log(self) -> list[CallRecord]:
        """Every dispatched call, in dispatch order, so ``[i]`` is call ``i``."""
        return list(self._call_log)

    def state(self, format: str | None = None) -> dict[str, Any]:
        """The state document: the envelope, and ``state`` in this instance's format."""
        from seahaven.state import build_document

        return build_document(self, format)

    # --- writing outside calls --------------------------------------------------------------------

    @contextmanager
    def bulk(self) -> Iterator[Ctx[Any]]:
        """Load rows fast: the root's context, one transaction per node, committed together."""
        self.check_usable()
        self.refuse_inside("bulk() cannot run inside a call or another bulk() block")
        with self._lock:
            self.check_callable()
            # A reader may be asked for inside the block, and switching a store to the
            # journal a reader needs cannot happen once its transaction is open.
            for runtime in self._nodes:
                runtime.share()
            activation = self.activation = Activation(recording=True)
            begun: list[NodeRuntime] = []
            try:
                try:
                    for runtime in self._nodes:
                        runtime.conn.execute("BEGIN")
                        begun.append(runtime)
                        activation.touch(runtime)
                    with entered(bulk=True):
                        yield activation.ctx(self._nodes[0], None)
                except BaseException:
                    activation.discard()
                    for runtime in begun:
                        _roll_back_quietly(runtime.conn)
                    raise
                try:
                    activation.flush()
                    # A segment that could not be recorded, nor undone, is rolled back
                    # with the rest, and so is a block that stopped recording.
                    lost = activation.diverged or activation.unrecorded
                    if lost is not None:
                        raise WorldBug(
                            f"bulk() could not record everything the block wrote ({lost}), so "
                            "none of it was kept"
                        )
                except BaseException:
                    # What the block wrote cannot be logged: none of it is kept.
                    for runtime in begun:
                        _roll_back_quietly(runtime.conn)
                    raise
                self._commit_bulk(activation.records, activation.texts)
            finally:
                activation.end()
                self.activation = None

    def _commit_bulk(self, records: list[LogRecord], texts: list[str]) -> None:
        # One node at a time, the root last; a failed commit keeps what committed before it.
        ordered = [*self._nodes[1:], self._nodes[0]]
        committed: set[str] = set()
        for position, runtime in enumerate(ordered):
            try:
                runtime.conn.execute("COMMIT")
            except apsw.Error as error:
                for remaining in ordered[position:]:
                    _roll_back_quietly(remaining.conn)
                for record, text in zip(records, texts, strict=True):
                    if record.world in committed:
                        self._change_log.append(record)
                        self._change_texts.append(text)
                raise db_error(error) from error
            committed.add(runtime.path)
        self._change_log.extend(records)
        self._change_texts.extend(texts)

    def freeze(self, id: str, description: str) -> Fixture:
        """Mint a fixture from the current state, into the world's fixtures directory."""
        from seahaven.freezing import freeze_instance

        return freeze_instance(self, id, description)

    # --- life cycle ------------------------------------------------------------------------------

    def destroy(self) -> None:
        """Close everything and remove the directory. Idempotent.

        Work another thread is doing on the instance (a call, ``bulk()``) is not
        waited for: its statements are interrupted until it lets go, and it fails
        with a ``WorldBug`` saying the instance was destroyed.
        """
        activation = self.activation
        if activation is not None and activation.thread == threading.get_ident():
            if in_world_code():
                raise WorldBug("an instance cannot be destroyed from inside its own call or bulk()")
            # This thread left world code without ending its stretch of work: a Ctrl-C
            # landed while a call was finishing. Nothing runs in it, so it ends here.
            activation.end()
            self.activation = None
        if not self._lock.acquire(blocking=False):
            # Another thread holds the instance (a call, bulk(), a freeze). Nothing it
            # does will be kept, so its statements are stopped rather than waited for:
            # again and again, since a tool may start another after one fails.
            self._stopping = True
            self._connections.stop()
            while not self._lock.acquire(timeout=_STOP_EVERY):
                self._connections.stop()
        try:
            if self._destroyed:
                return
            self._destroyed = True
            try:
                self._close_connections()
            finally:
                # Whatever closing met, the directory goes: nothing else will remove it.
                remove_directory(self._directory, self._file_names())
                _live_instances.discard(self)
        finally:
            self._lock.release()

    def interrupt(self) -> None:
        """Stop whatever statement runs on this instance now, from any thread; nothing else.

        For a server stopping, or a harness giving up on a call: the statement (a
        tool's, ``setup_sql``'s, a reader's) fails with a ``DbError`` saying it was
        interrupted, and the call running it fails as that error makes it. A
        statement started afterwards runs as usual, and the instance stays usable.
        ``destroy()`` does this itself for whatever holds the instance.
        """
        self._connections.interrupt()

    def __enter__(self) -> Instance:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.destroy()

    def __repr__(self) -> str:
        state = "destroyed" if self._destroyed else f"{self.call_count} calls"
        return f"Instance({self._world.name!r}, id={self.id!r}, {state})"

    # --- the framework's interface -------------------------------------------------------------

    @property
    def runtimes(self) -> list[NodeRuntime]:
        """One runtime per store, root first, in the composition's node order."""
        return self._nodes

    @property
    def lock(self) -> threading.RLock:
        """The instance lock: a call, ``bulk()``, ``state()`` and a freeze each hold it."""
        return self._lock

    def change_log_texts(self) -> list[str]:
        """Each change-log record's JSON text, in step with ``change_log()`` (a copy)."""
        return list(self._change_texts)

    @property
    def caller_seed(self) -> int | None:
        """The ``seed=`` given to ``world.instance(...)``, as the state document records it."""
        return self._caller_seed

    @property
    def startup(self) -> Any:
        """The startup keywords given to ``world.instance(...)``, as JSON values (a copy)."""
        return copy.deepcopy(self._startup_rendered)

    @property
    def fixture_files(self) -> dict[str, str] | None:
        """Each store's fixture ``file_sha256`` by path, or ``None`` for a blank instance."""
        return self._fixture_files

    def check_usable(self) -> None:
        """Raise ``WorldBug`` once the instance is destroyed, or no longer matches its log."""
        if self._destroyed or self._stopping:
            raise WorldBug(f"instance {self.id} was destroyed; make a new one")
        if self._diverged is not None:
            raise WorldBug(
                f"instance {self.id} no longer matches its state document ({self._diverged}); "
                "destroy it and make a new one"
            )

    def check_callable(self) -> None:
        """``check_usable``, and refuse a call made while a state formatter runs."""
        self.check_usable()
        if self._formatting:
            raise WorldBug("a state formatter may not write: it called into the instance")

    def refuse_inside(self, message: str) -> None:
        """Raise ``WorldBug(message)`` from inside a call, a hook or this instance's ``bulk()``."""
        activation = self.activation
        if (activation is not None and activation.thread == threading.get_ident()) or in_call():
            raise WorldBug(message)

    @contextmanager
    def formatting(self) -> Iterator[None]:
        """Mark a state formatter running for the block: calls into the instance are refused."""
        previous = self._formatting
        self._formatting = True
        try:
            yield
        finally:
            self._formatting = previous

    def routes(self) -> dict[str, Route]:
        """Every surface name's route, resolved against this instance's stores, in surface order.

        Kept until the world seals again, and refused with a ``WorldBug`` when the
        world now resolves to other stores than the instance was made with.
        """
        cache = self._routes_of(self._world.composition())
        if not cache.complete:
            # route() may have resolved some already: keep them, in surface order.
            nodes, known = self._nodes, cache.routes
            cache.routes = {
                entry.name: known.get(entry.name) or Route(entry, nodes)
                for entry in cache.composition.surface
            }
            cache.complete = True
        return cache.routes

    def route(self, name: str) -> Route | None:
        """One surface name's route, resolved the first time it is called; ``None`` if unknown.

        What ``routes()`` holds, without resolving every other tool of the surface
        for an instance that calls only a few of them.
        """
        cache = self._routes_of(self._world.composition())
        route = cache.routes.get(name)
        if route is None and not cache.complete:
            entry = cache.composition.by_name.get(name)
            if entry is None:
                return None
            route = cache.routes[name] = Route(entry, self._nodes)
        return route

    def _routes_of(self, composition: Composition) -> _RouteCache:
        cache = self._route_cache
        if cache is not None and cache.composition is composition:
            return cache
        self._check_same_nodes(composition)
        cache = self._route_cache = _RouteCache(composition)
        return cache

    def record_call(self, name: str, arguments: dict[str, Any]) -> tuple[int, CallRecord]:
        """Log a call about to be dispatched; return its ordinal ``i`` and its record."""
        ordinal = len(self._call_log)
        record = CallRecord(name, arguments)
        self._call_log.append(record)
        self._clock.set_dispatched(ordinal + 1)
        return ordinal, record

    def _check_same_nodes(self, composition: Composition) -> None:
        mine = [
            (id(runtime.node.world), runtime.node.scope, runtime.path) for runtime in self._nodes
        ]
        now = [(id(node.world), node.scope, node.path) for node in composition.nodes]
        if mine != now:
            raise WorldBug(
                f"world {self._world.name!r} now resolves to other stores than instance "
                f"{self.id} was made with; make a new instance"
            )

    def finish_call(self, activation: Activation) -> WorldBug | None:
        """End an outer call: close what it left open, keep its records, stale its handles."""
        left_open = []
        unrecorded: WorldBug | None = None
        try:
            for runtime, _ in activation.sessions.values():
                if runtime.conn.in_transaction:
                    _roll_back_quietly(runtime.conn)
                    left_open.append(runtime.path)
            try:
                activation.flush()
            except WorldBug as error:
                unrecorded = error
            if activation.records:
                self._change_log.extend(activation.records)
                self._change_texts.extend(activation.texts)
        finally:
            self._diverged = self._diverged or activation.diverged
            activation.end()
            self.activation = None
        if unrecorded is not None:
            return unrecorded
        if left_open:
            return WorldBug(
                f"the call returned with a transaction still open on {', '.join(left_open)}; "
                "it was rolled back. Close every transaction a transaction=False tool opens"
            )
        return None

    def run_control_tool(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run the deprecated control tool's query on a read-only reader of every store."""
        warnings.warn(
            "the control tool is deprecated; read inst.state() instead",
            DeprecationWarning,
            stacklevel=4,
        )
        query = arguments.get("query")
        if set(arguments) != {"query"} or not isinstance(query, str):
            raise ArgumentError(
                "controller_run_sql", [{"loc": ["query"], "msg": "a SQL string", "type": "string"}]
            )
        with self._lock:
            self.check_usable()
            if self._control_db is None:
                self._control_db = Db(self._open_reader("control"))
            result = sandbox.run_statement(
                self._control_db, query, authorizer=self._control_authorizer()
            )
            return {
                "columns": result.columns,
                "rows": result.to_dict()["rows"],
                "row_count": result.row_count,
            }

    def _control_authorizer(self) -> sandbox.Authorizer:
        """Every table of every store, read-only: the control tool's view, as inspect() has."""
        tables = [
            f"{runtime.node.schema_name}.{name}"
            for runtime in self._nodes
            for name in runtime.node.world.schema_info.tables
        ]
        return sandbox.Authorizer(tables, read_only=True, pragmas=sandbox.REPORTING_PRAGMAS)

    def _open_reader(self, purpose: str) -> apsw.Connection:
        # A reader reads alongside each store's own connection: the write-ahead log.
        for runtime in self._nodes:
            runtime.share()
        root = self._nodes[0]
        conn = open_connection(
            root.file,
            clock=self._clock,
            seed=node_seed(self.seed, "main"),
            purpose=purpose,
            readonly=True,
        )
        self._connections.add(conn)
        try:
            for runtime in self._nodes[1:]:
                uri = f"file:{_uri_path(runtime.file)}?mode=ro"
                conn.execute(f'ATTACH DATABASE ? AS "{runtime.node.schema_name}"', (uri,))
            conn.execute("PRAGMA query_only=ON")
            conn.authorizer = ReaderAuthorizer()
            if purpose == "control":
                # The agent's SQL: held to the sandbox's value limit.
                limit_values(conn)
            # No time limit, but a Ctrl-C stops a long read instead of waiting for it.
            Deadline(conn, None).install()
        except BaseException:
            self._connections.close(conn)
            raise
        return conn

    def _file_names(self) -> list[str]:
        """The files an instance leaves in its directory once its connections are closed.

        A store's connection closes without checkpointing, so a store a reader used
        leaves its write-ahead log and its index beside it.
        """
        return [
            runtime.file.name + suffix
            for runtime in getattr(self, "_nodes", ())
            for suffix in ("-wal", "-shm", "")
        ]

    def _close_connections(self) -> None:
        readers = [db.conn for db in (self._inspect_db, self._control_db) if db is not None]
        self._inspect_db = self._control_db = None
        # A reader's queries do not take the instance lock, so one may be running:
        # closing interrupts it (it fails as a destroyed instance's statement).
        for conn in readers:
            self._connections.close(conn)
        for runtime in getattr(self, "_nodes", ()):
            runtime.close()


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve()))


def _roll_back_quietly(conn: apsw.Connection) -> None:
    try:
        if conn.in_transaction:
            run_cleanup(conn, "ROLLBACK")
    except apsw.Error:
        pass


# --- creation ------------------------------------------------------------------------------------


def create_instance(
    world: World,
    fixture: str | None,
    *,
    seed: int | None,
    now: Any,
    clock_mode: ClockMode | None,
    state_format: str | None,
    control_tools: bool,
    startup: Mapping[str, Any] | None,
    setup_sql: str | None,
) -> Instance:
    """Everything ``world.instance(...)`` does, in order, leaving nothing behind on failure."""
    if in_call():
        raise WorldBug(
            "world.instance(...) was called from inside a call; reach an added world with "
            "ctx.worlds.<name>, and make instances in an eval or a test"
        )
    composition = world.composition()
    if fixture is not None:
        check_fixture_id(fixture)
    caller_seed = check_seed(seed)
    mode = check_clock_mode(clock_mode if clock_mode is not None else world.default_clock_mode)
    format_name = state_format if state_format is not None else world.pinned_state_format
    world.resolve_state_format(format_name)
    if not isinstance(control_tools, bool):
        raise WorldBug("control_tools must be True or False")
    if setup_sql is not None and not isinstance(setup_sql, str):
        raise WorldBug("setup_sql must be a string of SQL statements, or None")
    caller_startup = _check_startup(composition, startup)
    _check_primary_keys(composition)
    prepared: PreparedFixture | None = prepare(world, composition, fixture) if fixture else None

    if now is not None:
        start_ms = parse_instant(now)
        if prepared is not None and start_ms < prepared.now_ms:
            raise WorldBug(
                f"now={format_instant(start_ms)} is earlier than fixture {fixture!r}'s now, "
                f"{prepared.fixture.now}; an instance cannot start before its rows were written"
            )
    elif prepared is not None:
        start_ms = prepared.now_ms
    else:
        start_ms = time.time_ns() // 1_000_000
    clock = Clock.starting_at(start_ms, mode)

    instance = object.__new__(Instance)
    instance_seed = derive_seed(fixture if fixture is not None else world.name, caller_seed)
    instance._info = InstanceInfo(f"inst-{secrets.token_hex(8)}", fixture, instance_seed)
    instance._world = world
    instance._clock = clock
    instance._state_format = format_name
    instance._setup_sql = setup_sql
    instance._control_tools = control_tools
    instance._caller_seed = caller_seed
    instance._startup_rendered = to_jsonable_python(caller_startup, fallback=str)
    instance._lock = threading.RLock()
    instance.activation = None
    instance._call_log = []
    instance._change_log = []
    instance._change_texts = []
    instance._nodes = []
    instance._route_cache = None
    instance._inspect_db = None
    instance._control_db = None
    instance._connections = Connections()
    instance._destroyed = False
    instance._stopping = False
    instance._diverged = None
    instance._formatting = False
    instance._fixture_files = prepared.file_hashes if prepared is not None else None
    frozen = prepared.frozen_versions if prepared is not None else {}
    instance._reports = tuple(
        NodeReport(
            path=report.path,
            world=report.world,
            world_version=report.world_version,
            scope=report.scope,
            aliases=report.aliases,
            schema_hash=report.schema_hash,
            frozen_world_version=frozen.get(report.path),
        )
        for report in composition.reports()
    )
    instance._directory = instance_directory(world.name, world.work_dir, instance.id)
    # From here, interrupt_all() reaches the statements it runs, setup_sql's included.
    watch(instance)
    try:
        _materialise(instance, composition, prepared)
        if setup_sql is not None:
            run_setup_sql(
                setup_sql,
                instance._nodes,
                clock=clock,
                seed=instance.seed,
                connections=instance._connections,
            )
        _run_startup(instance, composition, caller_startup)
    except BaseException:
        instance._destroyed = True
        instance._close_connections()
        remove_directory(instance._directory, instance._file_names())
        raise
    _live_instances.add(instance)
    return instance


def _check_startup(composition: Composition, startup: Mapping[str, Any] | None) -> dict[str, Any]:
    if startup is None:
        return {}
    if not isinstance(startup, Mapping):
        raise WorldBug("startup must be a mapping of the world's own startup keywords")
    keywords = dict(startup)
    for key in keywords:
        if not isinstance(key, str):
            raise WorldBug(f"startup keyword {key!r} is not a string")
    worlds = {id(node.world): node.world for node in composition.nodes}.values()
    if any(world.accepts_any_startup_keyword for world in worlds):
        return keywords
    accepted = frozenset().union(*(world.accepted_startup_kwargs for world in worlds))
    unknown = sorted(key for key in keywords if key not in accepted)
    if unknown:
        raise WorldBug(
            f"unknown startup keyword {', '.join(map(repr, unknown))} for world "
            f"{composition.root.name!r}; its startup hooks accept "
            f"{', '.join(sorted(accepted)) or 'no keywords'}"
        )
    return keywords


def _check_primary_keys(composition: Composition) -> None:
    for node in composition.nodes:
        info = node.world.schema_info
        for name, table in info.tracked(node.world.untracked_tables).items():
            if not table.primary_key:
                raise WorldBug(
                    f"table {name!r} of world {node.world.name!r} has no explicit primary key, so "
                    "the change log cannot record it; give it a PRIMARY KEY, or name it in "
                    "World(untracked_tables=...)"
                )


def _materialise(
    instance: Instance, composition: Composition, prepared: PreparedFixture | None
) -> None:
    runtimes: list[NodeRuntime] = []
    instance._nodes = runtimes
    for node in composition.nodes:
        target = instance._directory / node.file_name
        image = None
        if prepared is not None:
            copy_state_file(prepared.files[node.path], target)
        else:
            # The schema built once per process and copied, as a fixture's file is.
            image = blank_image(node.world.name, node.world.schema)
            # Written here even when empty, so that SQLite opens a file made private
            # (0600), and gives its companion files the same mode.
            write_new_file(target, image if image is not None else b"")
        seed = node_seed(instance.seed, node.path)
        conn = open_connection(
            target, clock=instance._clock, seed=seed, purpose="main", defer_journal=True
        )
        instance._connections.add(conn)
        try:
            # Closing must not copy the write-ahead log back into a file that is deleted next.
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            runtime = NodeRuntime(instance, node, target, conn, seed)
        except BaseException:
            instance._connections.close(conn)
            raise
        runtimes.append(runtime)
        if prepared is None and image is None:
            # A schema whose rows read the clock or random() runs on the instance's own
            # connection, with a journal that waits on no disk and keeps no lock after.
            use_memory_journal(conn)
            try:
                run_script(conn, node.world.schema)
            except apsw.Error as error:
                raise WorldBug(
                    f"the schema of world {node.world.name!r} does not execute: {error}"
                ) from error
    for runtime in runtimes:
        runtime.children = {
            name: runtimes[child.index] for name, child in runtime.node.children.items()
        }


def startup_order(composition: Composition) -> list[Node]:
    """Depth first from the root; a node shared by several worlds runs after every one of them."""
    visits: list[Node] = []

    def visit(node: Node) -> None:
        visits.append(node)
        for _, _, child in node.edges:
            visit(child)

    visit(composition.nodes[0])
    last = {node.index: position for position, node in enumerate(visits)}
    return sorted(composition.nodes, key=lambda node: last[node.index])


def _run_startup(
    instance: Instance, composition: Composition, caller_startup: dict[str, Any]
) -> None:
    order = startup_order(composition)
    for node in order:
        available = {**caller_startup, **node.bound_startup}
        for hook in node.world.startup_hook_infos:
            missing = sorted(hook.required - set(available))
            if missing:
                raise WorldBug(
                    f"startup hook {getattr(hook.fn, '__qualname__', hook.fn)!r} of world "
                    f"{node.world.name!r} needs startup keyword {', '.join(map(repr, missing))}; "
                    f"pass startup={{{missing[0]!r}: ...}}"
                )
    if not any(node.world.startup_hook_infos for node in order):
        return
    activation = instance.activation = Activation(recording=False)
    runtimes = instance._nodes
    begun: list[NodeRuntime] = []
    try:
        for runtime in runtimes:
            runtime.conn.execute("BEGIN")
            begun.append(runtime)
        with entered():
            for node in order:
                runtime = runtimes[node.index]
                available = {**caller_startup, **node.bound_startup}
                for hook in node.world.startup_hook_infos:
                    keywords = (
                        available
                        if hook.accepts_any
                        else {
                            key: value for key, value in available.items() if key in hook.keywords
                        }
                    )
                    hook.fn(activation.ctx(runtime, None), **keywords)
        for runtime in [*runtimes[1:], runtimes[0]]:
            runtime.conn.execute("COMMIT")
    except BaseException:
        for runtime in begun:
            _roll_back_quietly(runtime.conn)
        raise
    finally:
        activation.end()
        instance.activation = None


@atexit.register
def _destroy_leftovers() -> None:
    for instance in list(_live_instances):
        with contextlib.suppress(Exception):
            instance.destroy()
