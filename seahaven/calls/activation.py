"""Activations: one stretch of work on an instance, and the thread's place in world code.

An *activation* is one stretch of work on an instance: an agent's call (with
every nested call it makes), a ``bulk()`` block, or instance startup. World
handles live exactly as long as their activation. While an activation records,
every node it touches records through its store's ``Capture`` (SQLite's
preupdate hook), and at the end of each call the net changes are rendered into
change-log records carrying that call's ordinal. Which thread is inside world
code (and how deep) is kept here too, so the instance can refuse what world code
may not do.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

import apsw

from seahaven.declaration.context import Ctx, Worlds
from seahaven.declaration.tool import Call
from seahaven.errors import WorldBug
from seahaven.stores.capture import Change
from seahaven.stores.changelog import LogRecord, render_changes, sort_key
from seahaven.stores.db import DESTROYED_WHILE_RUNNING, db_error, is_closing, is_interrupt
from seahaven.stores.names import AGENT

if TYPE_CHECKING:
    from seahaven.calls.runtime import NodeRuntime

__all__ = [
    "Activation",
    "NestedCalls",
    "ThreadState",
    "WorldCodeScope",
    "in_call",
    "in_world_code",
    "takes_no_call_slot",
    "thread_state",
]


class NestedCalls(Protocol):
    """The owner of an instance's calls, as an activation reaches it (``Calls``).

    A protocol, so the activation names nothing of dispatch's: it is handed its
    owner, and reaches it only for a handle's nested call.
    """

    def call_nested(
        self,
        runtime: NodeRuntime,
        activation: Activation,
        target: Any,
        args: tuple[Any, ...],
        arguments: dict[str, Any],
    ) -> Any:
        """Run a tool of ``runtime``'s subtree inside ``activation``."""
        ...


class ThreadState(threading.local):
    """Per thread: how deep in tool calls, and how many ``bulk()`` blocks, we are."""

    def __init__(self) -> None:
        self.depth = 0
        self.bulk = 0


_local = ThreadState()


def thread_state() -> ThreadState:
    """This thread's ``depth`` (calls it is inside) and ``bulk`` (``bulk()`` blocks it is in)."""
    return _local


def in_call() -> bool:
    """Whether this thread is inside a tool call, a middleware or a startup hook."""
    return _local.depth > 0


def in_world_code() -> bool:
    """Whether this thread is inside a call, a middleware, a startup hook or a ``bulk()`` block."""
    return _local.depth > 0 or _local.bulk > 0


def takes_no_call_slot() -> bool:
    """Whether a call made now takes no call slot: nested calls and those inside ``bulk()``."""
    return in_world_code()


class WorldCodeScope:
    """Mark this thread as inside world code (or a ``bulk()`` block) for a ``with`` block."""

    __slots__ = ("_bulk",)

    def __init__(self, *, bulk: bool = False) -> None:
        self._bulk = bulk

    def __enter__(self) -> None:
        if self._bulk:
            _local.bulk += 1
        else:
            _local.depth += 1

    def __exit__(self, *exc: object) -> None:
        if self._bulk:
            _local.bulk -= 1
        else:
            _local.depth -= 1


class Activation:
    """One activation of an instance, the stores it captures and the records it holds."""

    __slots__ = (
        "_worlds",
        "actor",
        "alive",
        "calls",
        "capturing",
        "diverged",
        "ordinal",
        "recording",
        "records",
        "texts",
        "thread",
        "unrecorded",
    )

    def __init__(self, calls: NestedCalls, *, recording: bool, actor: str = AGENT) -> None:
        # The owner of the instance's calls, which runs the nested calls this activation makes.
        self.calls = calls
        self.thread = threading.get_ident()
        self.alive = True
        self.recording = recording
        # node index -> runtime, for each store the segment being recorded now records.
        self.capturing: dict[int, NodeRuntime] = {}
        self.ordinal: int | None = None
        # Who the segment being recorded now is by: its records carry it, as they carry ordinal.
        self.actor = actor
        self.records: list[LogRecord] = []
        # Each record's JSON text, in step with ``records``.
        self.texts: list[str] = []
        self._worlds: dict[int, Worlds] = {}
        # Why the stores now hold a change the log cannot show, once that has happened.
        self.diverged: str | None = None
        # Why some writes of this activation would go unrecorded (a store not recording again).
        self.unrecorded: str | None = None

    def touch(self, runtime: NodeRuntime) -> None:
        """Make sure ``runtime``'s writes in this activation are recorded."""
        if self.recording and runtime.index not in self.capturing:
            try:
                runtime.capture.start()
            except apsw.Error as error:
                # Its first start reads the schema: an interrupt or destroy() can stop that.
                raise db_error(error, runtime.conn) from error
            self.capturing[runtime.index] = runtime

    def flush(self) -> list[NodeRuntime]:
        """Render what the recording stores changed into records under the current ordinal.

        Returns the nodes that stopped recording, so a caller can start them again.
        Whatever interrupts it (an unrenderable value, ``MemoryError``, Ctrl-C), every
        store stops recording and what was written is taken back out, or, when that
        cannot be done, ``diverged`` says so.
        """
        capturing = self.capturing
        if not capturing:
            return []
        touched = list(capturing.values())
        if len(touched) == 1:
            # One store that recorded nothing, a read's usual end: stop it and be done.
            capture = touched[0].capture
            if capture.is_empty:
                capture.stop()
                capturing.clear()
                return touched
        taken: list[tuple[NodeRuntime, list[Change]]] = []
        written: list[NodeRuntime] = []
        failure: BaseException | None = None
        records, texts = self.records, self.texts
        kept = len(records)
        try:
            for runtime in touched:
                capture = runtime.capture
                if capture.is_empty:
                    continue
                written.append(runtime)
                try:
                    changes = capture.changes()
                except BaseException as error:
                    failure = failure or error
                    continue
                if changes:
                    taken.append((runtime, changes))
            if failure is not None:
                raise failure
            if len(taken) > 1:
                # Records are kept by store, table and key (``sort_key``): stores in path
                # order, then each store's own records sorted.
                taken.sort(key=_by_path)
            for runtime, changes in taken:
                start = len(records)
                raw_keys = render_changes(
                    runtime.path,
                    changes,
                    self.ordinal,
                    runtime.describe_table,
                    runtime.shapes,
                    self.actor,
                    records,
                    texts,
                )
                if len(raw_keys) > 1:
                    _sort_from(start, records, texts, raw_keys)
        except BaseException as error:
            # What this flush appended goes; the rows are written but cannot be logged:
            # take them back out, so the instance never holds a change its state
            # document does not show.
            del records[kept:], texts[kept:]
            try:
                problem = self._unrecordable(written, error)
            finally:
                self.discard()
            if isinstance(error, Exception):
                raise problem from error
            raise
        self.discard()
        return touched

    def _unrecordable(self, written: list[NodeRuntime], error: BaseException) -> WorldBug:
        """Put back the rows ``written`` changed, and say why they could not be logged."""
        if is_interrupt(error) and any([is_closing(runtime.conn) for runtime in written]):
            # destroy() stopped the capture's own statements: the instance and all it
            # holds are going, so there is nothing to put back and one thing to say.
            return WorldBug(DESTROYED_WHILE_RUNNING)
        why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        stores = ", ".join([runtime.path for runtime in written])
        try:
            for runtime in reversed(written):
                runtime.capture.undo()
        except apsw.Error as undo_error:
            self.diverged = (
                f"what was written to {stores} could not be recorded ({why}) nor undone "
                f"({type(undo_error).__name__}: {undo_error})"
            )
        if self.diverged is not None:
            return WorldBug(
                f"{self.diverged}; this instance no longer matches its state document, so it "
                "refuses further use: destroy it"
            )
        if is_interrupt(error):
            return WorldBug(
                f"the call was interrupted while the change log read what it wrote to {stores}, "
                "so what it wrote was undone"
            )
        if isinstance(error, WorldBug):
            return WorldBug(
                f"the change log cannot record what was written to {stores}, so the rows written "
                f"were put back: {error}"
            )
        return WorldBug(
            f"the change log cannot record what was written to {stores} ({why}), so it was "
            "undone; store text as valid UTF-8, or bytes as a BLOB"
        )

    def discard(self) -> None:
        """Stop recording the stores, keeping nothing of what they recorded."""
        for runtime in self.capturing.values():
            runtime.capture.stop()
        self.capturing.clear()

    def end(self) -> None:
        """This activation is over: every handle made in it is now stale."""
        if self.capturing:
            self.discard()
        self.alive = False
        # Each ``Worlds`` refers back to this activation: drop them, so an ended
        # activation is freed without waiting for the cycle collector.
        self._worlds.clear()

    def worlds(self, runtime: NodeRuntime) -> Worlds:
        """The ``ctx.worlds`` container of ``runtime`` for this activation."""
        worlds = self._worlds.get(runtime.index)
        if worlds is None:
            worlds = self._worlds[runtime.index] = runtime.worlds_type(runtime, self)
        return worlds

    def call(
        self, runtime: NodeRuntime, target: Any, args: tuple[Any, ...], arguments: dict[str, Any]
    ) -> Any:
        """``handle.call``: run a tool of ``runtime``'s subtree inside this activation."""
        return self.calls.call_nested(runtime, self, target, args, arguments)

    def ctx(self, runtime: NodeRuntime, call: Call | None) -> Ctx[Any]:
        """The context a layer of ``runtime``'s world receives."""
        worlds = self._worlds.get(runtime.index)
        if worlds is None:
            worlds = self._worlds[runtime.index] = runtime.worlds_type(runtime, self)
        return Ctx(
            runtime.db,
            runtime.clock,
            runtime.ids,
            runtime.state,
            call,
            runtime.info,
            worlds,
        )


def _by_path(taken: tuple[NodeRuntime, list[Change]]) -> str:
    return taken[0].path


def _sort_from(
    start: int, records: list[LogRecord], texts: list[str], raw_keys: list[tuple[Any, ...]]
) -> None:
    """Sort ``records[start:]`` (and ``texts[start:]`` in step) by ``sort_key``."""
    order = sorted(range(len(raw_keys)), key=lambda k: sort_key(records[start + k], raw_keys[k]))
    records[start:] = [records[start + k] for k in order]
    texts[start:] = [texts[start + k] for k in order]
