"""Snapshots: an instance's whole state held in memory, restored as new instances, and bounded.

``Instance.snapshot()`` takes a ``Snapshot`` between calls: every store's
image (SQLite's serialization of its file, read through its own connection),
the clock's position, where every id stream and every store's SQL stream
are, each node's ``ctx.state``, the change log and the call log, and how the
instance was made. ``Snapshot.restore()`` makes a new instance from it that
goes on exactly as the original would have; ``Snapshot.restore_many(n)``
makes n independent branches. ``seahaven.instance.snapshot_store.SnapshotStore`` keeps
snapshots by token under limits on their count, their bytes and their age, for a
server that hands tokens to its clients.

Freezing (``seahaven.fixtures.freezing``) is the durable cousin: a fixture on disk,
with a sidecar and hashes, that starts an episode afresh. A snapshot lives in
this process only, and carries the episode on.

This module reads the instance as an ``InstanceView`` and holds a snapshot as
``SnapshotData``, generic over the class it restores as, so it names nothing of
``seahaven.instance.instance``, even for types. The ``Snapshot`` users hold is
defined there, beside ``Instance``: ``SnapshotData[Instance]`` with ``restore()``
and ``restore_many(n)`` typed to return instances.
"""

from __future__ import annotations

import copy
import gc
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from seahaven.calls.activation import in_call
from seahaven.calls.concurrency import watch
from seahaven.calls.runtime import InstanceParts, NodeRuntime, link_children, open_store
from seahaven.declaration.composition import Composition, NodeReport
from seahaven.declaration.context import InstanceInfo
from seahaven.declaration.state_formats import carries_whole_log
from seahaven.errors import WorldBug
from seahaven.stores.changelog import CallRecord, LogRecord
from seahaven.stores.clock import Clock, ClockMode, format_instant
from seahaven.stores.ids import sql_stream
from seahaven.stores.images import image_of
from seahaven.stores.storage import Storage, check_storage, rollback_image
from seahaven.stores.transactions import transaction_open
from seahaven.stores.workdir import instance_directory

if TYPE_CHECKING:
    from seahaven.calls.dispatch import Calls
    from seahaven.declaration.composition import DeclaredWorld
    from seahaven.instance.view import InstanceView

__all__ = [
    "SnapshotData",
    "StoreImage",
    "load_stores",
    "restore",
    "restore_into",
    "restore_many",
    "take",
]

# Every SQLite database image starts with these bytes; a damaged snapshot's may not.
_HEADER = b"SQLite format 3\x00"

InstanceT = TypeVar("InstanceT", bound="InstanceView")
"""The class of instance a snapshot restores as (``Instance``, for the ``Snapshot`` users hold)."""
SnapshotT = TypeVar("SnapshotT", bound="SnapshotData[Any]")


@dataclass(frozen=True, slots=True, weakref_slot=True, eq=False)
class StoreImage:
    """One store of a snapshot: its database image and where its streams had got to."""

    path: str
    """The store's path in the composition (``main`` for the root)."""
    image: bytes = field(repr=False)
    """The store's database, as SQLite serializes it, marked for a rollback journal."""
    ids_state: Any = field(repr=False)
    """``random.Random.getstate()`` of the store's ``ctx.ids`` stream."""
    sql_state: Any = field(repr=False)
    """``getstate()`` of the stream the store's SQL ``random()`` draws from, or ``None``."""
    node_state: dict[str, Any] = field(repr=False)
    """A copy of the node's ``ctx.state``; each restore copies it again."""


@dataclass(frozen=True, slots=True, weakref_slot=True, eq=False)
class SnapshotData(Generic[InstanceT]):
    """What a snapshot holds: an instance's whole state at one moment between calls. Immutable.

    The ``Snapshot`` users hold (``seahaven.instance.instance``) is this over
    ``Instance``, with ``restore()`` and ``restore_many(n)``; this module takes
    and restores it naming only ``InstanceView``, so it imports nothing of the
    instance's module, even for types. Two snapshots are equal only when they
    are the same object (their tokens differ), so comparing or hashing one
    never reads its images. ``token`` is its stable id, ``nbytes`` what it
    holds (the stores' images plus the change log's JSON text), ``created_at``
    the wall-clock moment it was taken, in canonical form.
    """

    token: str
    """``snap-`` and 24 hex digits: this snapshot's id, the same for its whole life."""
    created_at: str
    """When it was taken (wall clock, not the instance's clock), as canonical text."""
    source: str
    """The id of the instance it was taken of."""
    world: DeclaredWorld = field(repr=False)
    """The root world it was taken of; ``restore()`` makes instances of it."""
    reports: tuple[NodeReport, ...] = field(repr=False)
    """The instance's stores as ``inst.composition()`` reported them."""
    fixture: str | None
    """The fixture the original instance was made from, or ``None``."""
    seed: bytes = field(repr=False)
    """The original's derived instance seed, which its branches share."""
    caller_seed: int | None = field(repr=False)
    state_format: str = field(repr=False)
    setup_sql: str | None = field(repr=False)
    control_tools: bool = field(repr=False)
    startup: Any = field(repr=False)
    fixture_files: dict[str, str] | None = field(repr=False)
    clock: tuple[ClockMode, int, int] = field(repr=False)
    """The clock's ``position()``: mode, start and ticks."""
    stores: tuple[StoreImage, ...] = field(repr=False)
    """One image per store, root first, in the composition's node order."""
    call_log: tuple[CallRecord, ...] = field(repr=False)
    records: tuple[LogRecord, ...] = field(repr=False)
    texts: tuple[str, ...] = field(repr=False)
    instance_class: Callable[[InstanceParts], InstanceT] = field(repr=False)
    """The class of the instance it was taken of; ``restore()`` makes instances of it. Taken
    from the instance, so that this module imports nothing of the instance's."""
    storage: Storage = "disk"
    """Where the original kept its stores; a restore keeps them there unless told otherwise."""
    nbytes: int = 0
    """What it holds, in bytes: every store's image, and the change log's JSON text counted a
    byte a character."""

    @property
    def call_count(self) -> int:
        """How many calls the original had dispatched when the snapshot was taken."""
        return len(self.call_log)


def take(
    instance: InstanceT,
    snapshot_class: type[SnapshotT],
    instance_class: Callable[[InstanceParts], InstanceT],
) -> SnapshotT:
    """``inst.snapshot()``: capture the instance's whole state, between calls.

    The snapshot is made as ``snapshot_class`` and restores as ``instance_class``
    (the instance's own class), both handed in by the instance.
    """
    calls = instance.calls
    calls.check_usable()
    calls.refuse_inside(
        "a snapshot cannot be taken inside a call, a startup hook or bulk(): the stores would "
        "hold writes the logs do not show yet; take it between calls"
    )
    # A snapshot is a use of the tree, so a tree that no longer seals is refused here.
    calls.check_tree()
    with calls.lock:
        # Again under the lock: destroy() may have run while this thread waited for it.
        calls.check_usable()
        stores = tuple(_capture_store(runtime) for runtime in calls.runtimes)
        records = tuple(calls.log.records)
        texts = tuple(calls.log.texts)
        call_log = tuple(calls.call_log)
        clock = instance.clock.position()
    nbytes = sum(len(store.image) for store in stores) + sum(len(text) for text in texts)
    return snapshot_class(
        token=f"snap-{secrets.token_hex(12)}",
        created_at=format_instant(time.time_ns() // 1_000_000),
        source=instance.id,
        world=instance.world,
        reports=tuple(instance.composition()),
        fixture=instance.fixture,
        seed=instance.seed,
        caller_seed=instance.caller_seed,
        state_format=instance.state_format,
        setup_sql=instance.setup_sql,
        control_tools=instance.control_tools,
        startup=instance.startup,
        fixture_files=None if instance.fixture_files is None else dict(instance.fixture_files),
        clock=clock,
        stores=stores,
        call_log=call_log,
        records=records,
        texts=texts,
        instance_class=instance_class,
        storage=instance.storage,
        nbytes=nbytes,
    )


def _capture_store(runtime: NodeRuntime) -> StoreImage:
    conn = runtime.conn
    if transaction_open(conn):
        raise WorldBug(
            f"the store at {runtime.path!r} has a transaction open, so no snapshot was taken; "
            "take it between calls, once every transaction is closed"
        )
    # The image must hold what the calls committed: a store's episode ends here, committed.
    runtime.settle()
    # Without the room a store in memory is loaded with: the bytes a file of it would hold.
    image = image_of(conn)
    stream = sql_stream(conn)
    try:
        node_state = copy.deepcopy(runtime.state)
    except Exception as error:
        raise WorldBug(
            f"ctx.state of the store at {runtime.path!r} holds a value that cannot be copied "
            f"({type(error).__name__}: {error}), so no snapshot was taken; keep plain values "
            "in ctx.state"
        ) from None
    return StoreImage(
        path=runtime.path,
        # Marked for a rollback journal, so it opens in memory and as a file alike.
        image=rollback_image(image or b""),
        ids_state=runtime.ids.random.getstate(),
        sql_state=None if stream is None else stream.getstate(),
        node_state=node_state,
    )


def restore(
    snapshot: SnapshotData[InstanceT],
    world: DeclaredWorld | None = None,
    *,
    storage: str | None = None,
) -> InstanceT:
    """A new instance from ``snapshot``, on ``world`` or the world it was taken of."""
    target, composition = _checked_world(snapshot, world)
    where = snapshot.storage if storage is None else check_storage(storage)
    return _branch(snapshot, target, composition, where)


def restore_many(
    snapshot: SnapshotData[InstanceT],
    n: int,
    world: DeclaredWorld | None = None,
    *,
    storage: str | None = None,
) -> list[InstanceT]:
    """``n`` new instances from ``snapshot``, the world checked once; all or none."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise WorldBug(f"restore_many takes a number of branches of 1 or more, not {n!r}")
    target, composition = _checked_world(snapshot, world)
    where = snapshot.storage if storage is None else check_storage(storage)
    made: list[InstanceT] = []
    # Every object a branch allocates lives on with it, so the cyclic collector, run
    # again and again by so many allocations, would walk them for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(n):
            made.append(_branch(snapshot, target, composition, where))
    except BaseException:
        for instance in made:
            instance.destroy()
        raise
    finally:
        if collecting:
            gc.enable()
    return made


def _checked_world(
    snapshot: SnapshotData[Any], world: DeclaredWorld | None
) -> tuple[DeclaredWorld, Composition]:
    if not isinstance(snapshot, SnapshotData):
        raise WorldBug(f"restore takes a seahaven.Snapshot, not {type(snapshot).__name__}")
    if in_call():
        raise WorldBug(
            "a snapshot cannot be restored from inside a call; restore it in an eval, a "
            "harness or a test"
        )
    target = snapshot.world if world is None else world
    composition = target.composition()
    _check_same_world(snapshot, target, composition)
    target.resolve_state_format(snapshot.state_format)
    return target, composition


def restore_into(snapshot: SnapshotData[Any], instance: InstanceView) -> None:
    """Bring ``instance`` to ``snapshot``'s state in place: what ``restore`` would make, anew.

    For a harness that restores one world again and again (a trial's solution
    replay): the instance keeps its connections and only the stores' images
    are loaded, which skips opening and closing a connection per store. It
    then goes on exactly as a restored instance would, under a new id. The
    instance must keep its stores in memory, be of the snapshot's world, clock
    mode and control tool, and be idle; otherwise a ``WorldBug`` says so and
    the instance is left as it was. A failure while loading destroys it.
    """
    target, _ = _checked_world(snapshot, instance.world)
    calls = instance.calls
    calls.check_usable()
    calls.refuse_inside("an instance cannot be restored into from inside a call or bulk()")
    mode, start_ms, ticks = snapshot.clock
    if instance.storage != "memory" or mode != instance.clock.mode:
        raise WorldBug(
            f"snapshot {snapshot.token} restores in place only into an instance in memory with "
            f"a {mode} clock; this one is on {instance.storage} with a {instance.clock.mode} "
            "clock: restore it as a new instance"
        )
    if not all(store.image for store in snapshot.stores):
        # SQLite loads no database from no bytes; a new instance opens such a store empty.
        raise WorldBug(
            f"snapshot {snapshot.token} holds a store with no pages yet, which restores only "
            "as a new instance"
        )
    if snapshot.control_tools != instance.control_tools:
        raise WorldBug(
            f"snapshot {snapshot.token} was taken "
            f"{'with' if snapshot.control_tools else 'without'} the control tool and this "
            f"instance was made {'with' if instance.control_tools else 'without'} it; restore "
            "it as a new instance"
        )
    with calls.lock:
        calls.check_usable()
        info = InstanceInfo(f"inst-{secrets.token_hex(8)}", snapshot.fixture, snapshot.seed)
        instance.remake(_parts(snapshot, target, info, instance.clock, "memory"))
        try:
            for runtime, store in zip(calls.runtimes, snapshot.stores, strict=True):
                runtime.load_image(_checked_image(store))
            _set_streams(calls.runtimes, snapshot.stores)
            instance.clock.resume_at(mode, start_ms, ticks)
            _replace_logs(calls, snapshot, target)
        except BaseException:
            instance.destroy()
            raise


def _replace_logs(calls: Calls, snapshot: SnapshotData[Any], target: DeclaredWorld) -> None:
    """Make the instance's logs the snapshot's; the calls made after it are prepared as before."""
    calls.replace_logs(snapshot.call_log, snapshot.records, snapshot.texts)
    # The restored records are copied when read, as before: a restore (or restore_many's
    # hundreds) pays nothing ahead for a document it may never read; the calls made from here
    # on are published as they are logged when the instance's own format carries the whole log.
    calls.log.prepare = carries_whole_log(target, snapshot.state_format)


def _parts(
    snapshot: SnapshotData[Any],
    target: DeclaredWorld,
    info: InstanceInfo,
    clock: Clock,
    storage: Storage,
) -> InstanceParts:
    return InstanceParts(
        info=info,
        world=target,
        clock=clock,
        state_format=snapshot.state_format,
        setup_sql=snapshot.setup_sql,
        control_tools=snapshot.control_tools,
        caller_seed=snapshot.caller_seed,
        startup=copy.deepcopy(snapshot.startup),
        fixture_files=None if snapshot.fixture_files is None else dict(snapshot.fixture_files),
        reports=snapshot.reports,
        directory=(
            instance_directory(target.name, target.work_dir, info.id) if storage == "disk" else None
        ),
        storage=storage,
    )


def _set_streams(runtimes: Sequence[NodeRuntime], stores: Sequence[StoreImage]) -> None:
    """Set each store's id stream, SQL stream and ``ctx.state`` where the snapshot had them."""
    for runtime, store in zip(runtimes, stores, strict=True):
        stream = sql_stream(runtime.conn)
        if stream is not None and store.sql_state is not None:
            stream.setstate(store.sql_state)
        runtime.ids.random.setstate(store.ids_state)
        runtime.state = copy.deepcopy(store.node_state)


def _branch(
    snapshot: SnapshotData[InstanceT],
    target: DeclaredWorld,
    composition: Composition,
    storage: Storage,
) -> InstanceT:
    mode, start_ms, ticks = snapshot.clock
    clock = Clock.resumed(mode, start_ms, ticks)
    info = InstanceInfo(f"inst-{secrets.token_hex(8)}", snapshot.fixture, snapshot.seed)
    instance = snapshot.instance_class(_parts(snapshot, target, info, clock, storage))
    watch(instance)
    try:
        load_stores(instance, composition, snapshot.stores)
        _replace_logs(instance.calls, snapshot, target)
    except BaseException:
        instance.destroy()
        raise
    return instance


def load_stores(
    instance: InstanceView, composition: Composition, stores: Sequence[StoreImage]
) -> None:
    """Give ``instance`` one store per node from its image, as the instance keeps its stores.

    On disk each is a new private file (0600) in the instance's directory; in
    memory, a database loaded in one step. The store's SQL stream is set where
    the snapshot's was, and an image that is not a database is refused here.
    """
    if len(stores) != len(composition.nodes):
        raise WorldBug(
            f"the snapshot holds {len(stores)} stores for {len(composition.nodes)} nodes; it is "
            "damaged: take a new one"
        )
    directory = instance.directory if instance.storage == "disk" else None
    for node, store in zip(composition.nodes, stores, strict=True):
        runtime = open_store(
            node,
            directory=directory,
            instance_seed=instance.seed,
            clock=instance.clock,
            info=instance.calls.info,
            connections=instance.connections,
            image=_checked_image(store),
        )
        instance.add_runtime(runtime)
    link_children(instance.calls.runtimes)
    _set_streams(instance.calls.runtimes, stores)


def _checked_image(store: StoreImage) -> bytes:
    """The store's image, refused with a ``WorldBug`` when it is not a SQLite database."""
    image = store.image
    if image and not image.startswith(_HEADER):
        raise WorldBug(
            f"the image of the store at {store.path!r} is not a SQLite database; the snapshot "
            "is damaged: take a new one"
        )
    return image


def _check_same_world(
    snapshot: SnapshotData[Any], world: DeclaredWorld, composition: Composition
) -> None:
    def described(reports: Sequence[NodeReport]) -> list[tuple[Any, ...]]:
        return [
            (report.path, report.world, report.world_version, report.scope, report.schema_hash)
            for report in reports
        ]

    taken = described(snapshot.reports)
    now = described(composition.reports())
    if taken == now:
        return
    for before, after in zip(taken, now, strict=False):
        if before != after:
            path, name, version, _, schema_hash = before
            if after[0] != path or after[1] != name:
                why = f"the store at {path!r} is now {after[1]!r} at {after[0]!r}"
            elif after[2] != version:
                why = f"world {name!r} at {path!r} was {version}, and is now {after[2]}"
            elif after[4] != schema_hash:
                why = f"the schema of world {name!r} at {path!r} changed"
            else:
                why = f"the store at {path!r} changed scope"
            break
    else:
        why = f"it held {len(taken)} stores, and the world now has {len(now)}"
    raise WorldBug(
        f"snapshot {snapshot.token} cannot be restored on world {world.name!r}: {why}. A "
        "snapshot restores only on the world, versions and schemas it was taken of; take a "
        "new snapshot with this world"
    )
