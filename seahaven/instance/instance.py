"""``Instance``: one run's private copy of a world, as evals, servers and tests hold it.

An instance holds one file and one connection per node of its composition,
one clock and the logs. Its calls, its lock and its logs belong to a
``seahaven.dispatch.Calls``, which the instance delegates to; it is made by
``world.instance(...)`` through ``seahaven.creation``, which assembles the
parts and hands them to the constructor whole.
"""

from __future__ import annotations

import copy
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, overload

from seahaven.calls.activation import Activation, in_world_code
from seahaven.calls.control_tool import ControlTool
from seahaven.calls.dispatch import Calls
from seahaven.calls.readers import ReaderDb, open_reader
from seahaven.calls.runtime import InstanceParts, NodeRuntime
from seahaven.declaration.composition import NodeReport
from seahaven.declaration.context import Ctx
from seahaven.declaration.state_formats import carries_whole_log
from seahaven.errors import WorldBug
from seahaven.instance.snapshots import SnapshotData, restore, restore_many, take
from seahaven.stores.changelog import CallRecord, LogRecord
from seahaven.stores.clock import Clock
from seahaven.stores.db import Connections, Db
from seahaven.stores.storage import Storage
from seahaven.stores.workdir import remove_directory

if TYPE_CHECKING:
    from seahaven.declaration.composition import DeclaredWorld
    from seahaven.fixtures.sidecar import Fixture

__all__ = ["Instance", "InstanceParts", "Snapshot", "live_instances"]

P = ParamSpec("P")
R = TypeVar("R")

live_instances: weakref.WeakSet[Instance] = weakref.WeakSet()
"""Every instance of this process not yet destroyed, so that its exit can destroy it."""
# A child of fork() owns none of its parent's instances: destroying one there (at the child's
# exit, or an eval worker's stop) would remove the parent's files.
os.register_at_fork(after_in_child=live_instances.clear)

_NO_FILES = (
    "this instance keeps its stores in memory, so it has no files; make it with "
    "storage='disk' to get files an outside tool can open, or freeze it into a fixture"
)

# How often destroy() stops the statements of a thread holding the instance, in seconds.
_STOP_EVERY = 0.05


class Instance:
    """A private, isolated copy of a world for one run. Made by ``world.instance(...)``.

    The methods above the line marked "the framework's interface" are the public
    API. Below it is what the framework's other layers read: ``calls`` (the
    owner of the instance's calls, lock and logs) and what the state document
    records of how the instance was made. World code and evals never need it.
    """

    def __init__(self, parts: InstanceParts | None = None, /) -> None:
        if not isinstance(parts, InstanceParts):
            raise TypeError("instances are made by world.instance(...)")
        self._parts = parts
        self._directory = parts.directory
        self._connections = Connections()
        self._inspect_db: ReaderDb | None = None
        self._control = ControlTool(self._connections) if parts.control_tools else None
        self.calls = Calls(parts.world, parts.info, parts.clock, control=self._control)
        """The owner of this instance's calls: its lock, activation, routes and logs."""
        # An instance whose own document carries the whole log has each record published as it
        # is logged, so the episode's first state() hands those dicts out (ChangeLog.prepare).
        self.calls.log.prepare = carries_whole_log(parts.world, parts.state_format)
        live_instances.add(self)

    # --- identity ------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The instance id, which is also the episode id in process."""
        return self._parts.info.id

    @property
    def fixture(self) -> str | None:
        """The fixture id this instance was made from, or ``None``."""
        return self._parts.info.fixture

    @property
    def seed(self) -> bytes:
        """The derived instance seed."""
        return self._parts.info.seed

    @property
    def world(self) -> DeclaredWorld:
        """The root world."""
        return self._parts.world

    @property
    def clock(self) -> Clock:
        """The instance's one clock."""
        return self._parts.clock

    @property
    def storage(self) -> Storage:
        """Where the stores live: ``"memory"`` or ``"disk"``, fixed when the instance was made."""
        return self._parts.storage

    @property
    def state_path(self) -> Path:
        """The root node's database file; an instance in memory has none, and says so."""
        file = self.calls.runtimes[0].file
        if file is None:
            raise WorldBug(_NO_FILES)
        return file

    @property
    def directory(self) -> Path:
        """The instance's working directory; an instance in memory has none, and says so."""
        if self._directory is None:
            raise WorldBug(_NO_FILES)
        return self._directory

    @property
    def db(self) -> Db:
        """The root node's ``Db``. Writes through it outside a call or ``bulk()`` are not logged."""
        return self.calls.runtimes[0].db

    @property
    def state_format(self) -> str:
        """The format ``state()`` answers in, fixed for the instance's life."""
        return self._parts.state_format

    @property
    def setup_sql(self) -> str | None:
        """The ``setup_sql`` this instance was made with, as given."""
        return self._parts.setup_sql

    @property
    def control_tools(self) -> bool:
        """Whether the framework's control tool is callable on this instance."""
        return self._parts.control_tools

    @property
    def call_count(self) -> int:
        """How many calls have been dispatched."""
        return len(self.calls.call_log)

    # --- calls -----------------------------------------------------------------------------------

    @overload
    def call(self, target: str, /, **arguments: Any) -> Any: ...
    @overload
    def call(
        self, target: Callable[Concatenate[Any, P], R], /, *args: P.args, **arguments: P.kwargs
    ) -> R: ...

    def call(self, target: Any, /, *args: Any, **arguments: Any) -> Any:
        """Run one tool: by its surface name, or by its function for a typed result."""
        return self.calls.call(target, args, arguments)

    @contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Make this thread's calls (and ``bulk()`` blocks) in the block ``actor``'s.

        ``actor`` is ``"agent"``, ``"user"``, ``"setup"`` or ``"event:<name>"``. Every
        call-log entry and change-log record carries its actor: a call made outside
        any block is the agent's, and a ``bulk()`` block's own writes are ``setup``'s.
        A context manager rather than a keyword of ``call``, so that no tool's
        parameter can be taken for it. Refused inside a call or a ``bulk()`` block.
        """
        with self.calls.acting_as(actor):
            yield

    def tools(self) -> list[dict[str, Any]]:
        """The flat tool list an agent sees, as ``{"name", "description", "input_schema"}``."""
        self.calls.check_usable()
        return [route.entry.listing() for route in self.calls.routes().values()]

    def composition(self) -> list[NodeReport]:
        """One report per store this instance holds, root first."""
        return list(self._parts.reports)

    # --- reading ---------------------------------------------------------------------------------

    def inspect(self) -> ReaderDb:
        """A read-only ``Db`` on a second connection, with every added store attached."""
        calls = self.calls
        calls.check_usable()
        with calls.lock:
            # Again under the lock: destroy() may have run while this thread waited for it.
            calls.check_usable()
            if self._inspect_db is None:
                self._inspect_db = open_reader(
                    calls.runtimes, self.clock, self.seed, self._connections, "inspect", calls.lock
                )
            return self._inspect_db

    def query(self, sql: str, *params: Any, store: str = "main") -> list[dict[str, Any]]:
        """Rows of a read-only query on one store, as it stands between calls.

        The query runs on the store's own connection, so nothing is opened: the
        cheap way to read an end state. Tables are named as the store's world
        names them, with no schema in front; a query across stores goes through
        ``inspect()``. ``store`` is a path, as ``composition()`` reports it.
        """
        calls = self.calls
        calls.check_usable()
        with calls.lock:
            calls.check_usable()
            if calls.activation is not None:
                raise WorldBug(
                    "inst.query(...) was called inside a call or a bulk() block; read the "
                    "store through ctx.db there, and query the instance between calls"
                )
            runtime = next((node for node in calls.runtimes if node.path == store), None)
            if runtime is None:
                known = ", ".join(node.path for node in calls.runtimes)
                raise WorldBug(f"this instance has no store {store!r}; its stores are {known}")
            return runtime.read(sql, params)

    def change_log(self) -> list[LogRecord]:
        """What the calls on this instance changed: a record per row per call, oldest first."""
        return list(self.calls.log.records)

    def state_json(self, format: str | None = None) -> str:
        """The state document as compact JSON text, assembled from records encoded once.

        The text is what ``json.dumps(inst.state(format), separators=(",", ":"),
        ensure_ascii=False, allow_nan=False)`` writes, byte for byte, without
        building the document's dicts: each change-log record was encoded when
        its call ended. A format of the world's own is encoded when asked for.
        """
        from seahaven.instance.state import document_json

        return document_json(self, format)

    def call_log(self) -> list[CallRecord]:
        """Every dispatched call, in dispatch order, so ``[i]`` is call ``i``."""
        return list(self.calls.call_log)

    def state(self, format: str | None = None) -> dict[str, Any]:
        """The state document: the envelope, and ``state`` in this instance's format."""
        from seahaven.instance.state import build_document

        return build_document(self, format)

    # --- writing outside calls --------------------------------------------------------------------

    @contextmanager
    def bulk(self) -> Iterator[Ctx[Any]]:
        """Load rows fast: the root's context, one transaction per node, committed together."""
        with self.calls.bulk() as ctx:
            yield ctx

    @contextmanager
    def record_net(self) -> Iterator[None]:
        """Run the block's calls with their changes recorded as one net change per row.

        For work whose end state is all that matters (replaying a reference
        solution, scripted set-up): each call is dispatched, logged in the call
        log and ticks the clock as usual, but the change log gets the block's
        net change per row when the block ends, with no call ordinal (as
        ``bulk()``'s rows), instead of each call's own records. That skips the
        per-call change capture, the larger part of a short call's cost. Inside
        the block the change log, the state document and snapshots are refused
        (they would miss the block's changes), and so is ``bulk()``.
        """
        with self.calls.record_net():
            yield

    def freeze(self, id: str, description: str) -> Fixture:
        """Mint a fixture from the current state, into the world's fixtures directory."""
        from seahaven.fixtures.freezing import freeze_instance

        return freeze_instance(self, id, description)

    def snapshot(self) -> Snapshot:
        """Capture this instance's whole state in memory, between calls: see ``docs/snapshots.md``.

        ``snapshot.restore()`` makes a new instance that goes on exactly as this
        one would: the same ids next, the same clock, the same logs so far.
        """
        return take(self, Snapshot, type(self))

    def fork(self, n: int) -> list[Instance]:
        """``n`` new instances that go on from its state now: ``snapshot().restore_many(n)``."""
        return self.snapshot().restore_many(n)

    # --- life cycle ------------------------------------------------------------------------------

    def destroy(self) -> None:
        """Close everything and remove the directory. Idempotent.

        Work another thread is doing on the instance (a call, ``bulk()``) is not
        waited for: its statements are interrupted until it lets go, and it fails
        with a ``WorldBug`` saying the instance was destroyed.
        """
        calls = self.calls
        activation = calls.activation
        if activation is not None and activation.thread == threading.get_ident():
            if in_world_code():
                raise WorldBug("an instance cannot be destroyed from inside its own call or bulk()")
            # This thread left world code without ending its stretch of work: a Ctrl-C
            # landed while a call was finishing. Nothing runs in it, so it ends here.
            activation.end()
            calls.activation = None
        lock = calls.lock
        if not lock.acquire(blocking=False):
            # Another thread holds the instance (a call, bulk(), a freeze). Nothing it
            # does will be kept, so its statements are stopped rather than waited for:
            # again and again, since a tool may start another after one fails.
            calls.stopping = True
            self._connections.stop()
            while not lock.acquire(timeout=_STOP_EVERY):
                self._connections.stop()
        try:
            if calls.destroyed:
                return
            calls.destroyed = True
            try:
                self._close_connections()
            finally:
                # Whatever closing met, the directory goes: nothing else will remove it.
                if self._directory is not None:
                    remove_directory(self._directory, self._file_names())
                live_instances.discard(self)
        finally:
            lock.release()

    def interrupt(self) -> None:
        """Stop whatever statement runs on this instance now, from any thread; nothing else.

        For a server stopping, or a harness giving up on a call: the statement (a
        tool's, ``setup_sql``'s, a reader's) fails with a ``DbError`` saying it was
        interrupted, and the call running it fails as that error makes it. A
        statement started afterwards runs as usual, and the instance stays usable,
        except in one case: a store in memory running in an episode whose
        interrupted statement was writing, after earlier calls had written, loses
        those calls to SQLite's rollback, and the instance then refuses further use
        (docs/concurrency.md). ``destroy()`` does this itself for whatever holds the
        instance.
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
        state = "destroyed" if self.calls.destroyed else f"{self.call_count} calls"
        return f"Instance({self.world.name!r}, id={self.id!r}, {state})"

    # --- the framework's interface -------------------------------------------------------------

    @property
    def activation(self) -> Activation | None:
        """The activation in progress (a call, a ``bulk()`` block or startup), or ``None``."""
        return self.calls.activation

    @property
    def connections(self) -> Connections:
        """The instance's connections, which destroying it closes (setup_sql's join them)."""
        return self._connections

    @property
    def caller_seed(self) -> int | None:
        """The ``seed=`` given to ``world.instance(...)``, as the state document records it."""
        return self._parts.caller_seed

    @property
    def startup(self) -> Any:
        """The startup keywords given to ``world.instance(...)``, as JSON values (a copy)."""
        startup = self._parts.startup
        # Most instances are given none, and every state document reads them.
        if type(startup) is dict and not startup:
            return {}
        return copy.deepcopy(startup)

    @property
    def fixture_files(self) -> dict[str, str] | None:
        """Each store's fixture ``file_sha256`` by path, or ``None`` for a blank instance."""
        return self._parts.fixture_files

    def remake(self, parts: InstanceParts) -> None:
        """Take ``parts`` as what this instance is made of now: a restore in place.

        ``seahaven.instance.snapshots.restore_into`` calls it before loading the stores'
        images, under the instance lock, between calls. The world, the storage
        (memory only), the clock and the control tool stay the instance's own;
        its id, seed and the record of how it was made become the new parts'.
        Its readers are closed, since they read the stores it held before.
        """
        current = self._parts
        if (
            parts.world is not current.world
            or parts.clock is not current.clock
            or parts.storage != "memory"
            or current.storage != "memory"
            or parts.directory is not None
            or parts.control_tools != current.control_tools
        ):
            raise WorldBug(
                "an instance is remade only in memory, with its own world, clock and control "
                "tool; make a new instance instead"
            )
        self._close_readers()
        self._parts = parts
        self.calls.info = parts.info
        for runtime in self.calls.runtimes:
            runtime.info = parts.info

    def add_runtime(self, runtime: NodeRuntime) -> None:
        """Take a store made for this instance (its connection among ``connections``)."""
        self.calls.runtimes.append(runtime)

    def _file_names(self) -> list[str]:
        """The files an instance leaves in its directory once its connections are closed.

        A store's connection closes without checkpointing, so a store a reader used
        leaves its write-ahead log and its index beside it.
        """
        return [
            runtime.file.name + suffix
            for runtime in self.calls.runtimes
            if runtime.file is not None
            for suffix in ("-wal", "-shm", "")
        ]

    def _close_readers(self) -> None:
        readers = [] if self._inspect_db is None else [self._inspect_db.conn]
        self._inspect_db = None
        if self._control is not None:
            control = self._control.reader()
            if control is not None:
                readers.append(control)
        # A reader's queries do not take the instance lock, so one may be running:
        # closing interrupts it (it fails as a destroyed instance's statement).
        for conn in readers:
            self._connections.close(conn)

    def _close_connections(self) -> None:
        self._close_readers()
        for runtime in self.calls.runtimes:
            runtime.close()


class Snapshot(SnapshotData[Instance]):
    """An instance's whole state at one moment between calls, in memory. Immutable.

    Made by ``inst.snapshot()``; ``restore()`` and ``restore_many(n)`` make new
    instances from it. It sits beside ``Instance`` so that both name each other's
    type while ``seahaven.instance.snapshots``, which takes and restores it,
    names neither: what it holds is ``SnapshotData``'s.
    """

    __slots__ = ()

    def restore(
        self, world: DeclaredWorld | None = None, *, storage: str | None = None
    ) -> Instance:
        """A new instance that goes on from this snapshot exactly as the original would have.

        ``world`` defaults to the world the snapshot was taken of; another (a
        module loaded again, say) must have the same stores, versions and
        schemas, or the restore is refused. ``storage`` (``"memory"`` or
        ``"disk"``) defaults to where the original kept its stores.
        """
        return restore(self, world, storage=storage)

    def restore_many(
        self, n: int, world: DeclaredWorld | None = None, *, storage: str | None = None
    ) -> list[Instance]:
        """``n`` independent instances from this snapshot: branches of one episode.

        All or none: when one cannot be made, those made already are destroyed.
        """
        return restore_many(self, n, world, storage=storage)
