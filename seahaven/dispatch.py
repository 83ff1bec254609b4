"""Dispatch: from a surface name to the route's middleware, the owner's transaction and the tool.

An *activation* is one stretch of work on an instance: an agent's call (with
every nested call it makes), a ``bulk()`` block, or instance startup. World
handles live exactly as long as their activation. While an activation records,
every node it touches has a session open, and at the end of each call the
sessions are rendered into change-log records carrying that call's ordinal.

``inst.call`` hands the instance to ``call_surface``; a world handle's
``call`` reaches ``call_nested`` through its activation. Dispatch reads an
instance only through the interface ``Instance`` documents for the framework
(``routes``, ``lock``, ``activation``, ``record_call``, ``finish_call``, ...),
and imports the instance module for its types alone.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import apsw

from seahaven.changelog import LogRecord, render_changeset, sort_key
from seahaven.composition import SurfaceEntry
from seahaven.context import Ctx, Worlds
from seahaven.errors import ToolError, UnknownTool, WorldBug
from seahaven.instances import gate
from seahaven.names import CONTROL_TOOL_NAME
from seahaven.tool import Call, Tool, check_result

if TYPE_CHECKING:
    from seahaven.instance import Instance, NodeRuntime

__all__ = [
    "Activation",
    "Route",
    "bypasses_gate",
    "call_nested",
    "call_surface",
    "entered",
    "in_call",
    "in_world_code",
]

_log = logging.getLogger("seahaven.dispatch")
_INFO = logging.INFO


class _ThreadState(threading.local):
    """Per thread: how deep in tool calls, and how many ``bulk()`` blocks, we are."""

    def __init__(self) -> None:
        self.depth = 0
        self.bulk = 0


_local = _ThreadState()


def in_call() -> bool:
    """Whether this thread is inside a tool call, a middleware or a startup hook."""
    return _local.depth > 0


def in_world_code() -> bool:
    """Whether this thread is inside a call, a middleware, a startup hook or a ``bulk()`` block."""
    return _local.depth > 0 or _local.bulk > 0


def bypasses_gate() -> bool:
    """Nested calls, and calls made inside ``bulk()``, do not take the concurrency gate."""
    return in_world_code()


class entered:
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
    """One activation of an instance, and the sessions and records it holds."""

    __slots__ = (
        "_worlds",
        "alive",
        "diverged",
        "ordinal",
        "recording",
        "records",
        "sessions",
        "texts",
        "thread",
        "unrecorded",
    )

    def __init__(self, *, recording: bool) -> None:
        self.thread = threading.get_ident()
        self.alive = True
        self.recording = recording
        # node index -> (runtime, session), for the segment being recorded now.
        self.sessions: dict[int, tuple[NodeRuntime, apsw.Session]] = {}
        self.ordinal: int | None = None
        self.records: list[LogRecord] = []
        # Each record's JSON text, in step with ``records``.
        self.texts: list[str] = []
        self._worlds: dict[int, Worlds] = {}
        # Why the stores now hold a change the log cannot show, once that has happened.
        self.diverged: str | None = None
        # Why some writes of this activation would go unrecorded (a session not reopened).
        self.unrecorded: str | None = None

    def touch(self, runtime: NodeRuntime) -> None:
        """Make sure ``runtime``'s writes in this activation are recorded."""
        if self.recording and runtime.index not in self.sessions:
            session = apsw.Session(runtime.conn, "main")
            try:
                if runtime.table_filter is not None:
                    session.table_filter(runtime.table_filter)
                session.attach()
            except BaseException:
                session.close()
                raise
            self.sessions[runtime.index] = (runtime, session)

    def flush(self) -> list[NodeRuntime]:
        """Render the open sessions into records under the current ordinal, and close them.

        Returns the nodes whose sessions were closed, so a caller can reopen them.
        Whatever interrupts it (an unrenderable value, ``MemoryError``, Ctrl-C), every
        session is closed and what was written is taken back out, or, when that
        cannot be done, ``diverged`` says so.
        """
        if not self.sessions:
            return []
        touched = [runtime for runtime, _ in self.sessions.values()]
        taken: list[tuple[NodeRuntime, bytes]] = []
        unread: list[str] = []
        failure: BaseException | None = None
        for runtime, session in self.sessions.values():
            try:
                changeset = session.changeset()
            except BaseException as error:
                failure = failure or error
                unread.append(runtime.path)
                continue
            finally:
                session.close()
            if changeset:
                taken.append((runtime, changeset))
        self.sessions.clear()
        rendered: list[tuple[LogRecord, str, tuple[Any, ...]]] = []
        try:
            if failure is not None:
                raise failure
            for runtime, changeset in taken:
                rendered.extend(
                    render_changeset(
                        runtime.path,
                        changeset,
                        self.ordinal,
                        runtime.describe_table,
                        runtime.shapes,
                    )
                )
            if len(rendered) > 1:
                rendered.sort(key=_sort_key)
        except BaseException as error:
            # The rows are written but cannot be logged: take them back out, so the
            # instance never holds a change its state document does not show.
            problem = self._unrecordable(taken, unread, error)
            if isinstance(error, Exception):
                raise problem from error
            raise
        if rendered:
            self.records.extend([record for record, _, _ in rendered])
            self.texts.extend([text for _, text, _ in rendered])
        return touched

    def _unrecordable(
        self, taken: list[tuple[NodeRuntime, bytes]], unread: list[str], error: BaseException
    ) -> WorldBug:
        """Undo the changes ``taken`` records, and say why they could not be logged."""
        why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        stores = ", ".join([runtime.path for runtime, _ in taken] + unread)
        try:
            for runtime, changeset in reversed(taken):
                apsw.Changeset.apply(
                    apsw.Changeset.invert(changeset),
                    runtime.conn,
                    conflict=lambda _reason, _change: apsw.SQLITE_CHANGESET_ABORT,
                )
        except apsw.Error as undo_error:
            self.diverged = (
                f"what was written to {stores} could not be recorded ({why}) nor undone "
                f"({type(undo_error).__name__}: {undo_error})"
            )
        if unread:
            # A session whose changes could not be read cannot be undone either.
            self.diverged = f"what was written to {', '.join(unread)} could not be read ({why})"
        if self.diverged is not None:
            return WorldBug(
                f"{self.diverged}; this instance no longer matches its state document, so it "
                "refuses further use: destroy it"
            )
        return WorldBug(
            f"the change log cannot record what was written to {stores} ({why}), so it was "
            "undone; store text as valid UTF-8, or bytes as a BLOB"
        )

    def discard(self) -> None:
        """Close the open sessions without rendering them."""
        for _, session in self.sessions.values():
            session.close()
        self.sessions.clear()

    def end(self) -> None:
        """This activation is over: every handle made in it is now stale."""
        self.discard()
        self.alive = False
        # Each ``Worlds`` refers back to this activation: drop them, so an ended
        # activation is freed without waiting for the cycle collector.
        self._worlds.clear()

    def worlds(self, runtime: NodeRuntime) -> Worlds:
        """The ``ctx.worlds`` container of ``runtime`` for this activation."""
        worlds = self._worlds.get(runtime.index)
        if worlds is None:
            worlds = self._worlds[runtime.index] = Worlds(runtime, self)
        return worlds

    def call(
        self, runtime: NodeRuntime, target: Any, args: tuple[Any, ...], arguments: dict[str, Any]
    ) -> Any:
        """``handle.call``: run a tool of ``runtime``'s subtree inside this activation."""
        return call_nested(runtime, self, target, args, arguments)

    def ctx(self, runtime: NodeRuntime, call: Call | None) -> Ctx[Any]:
        """The context a layer of ``runtime``'s world receives."""
        return Ctx(
            runtime.db,
            runtime.clock,
            runtime.ids,
            runtime.state,
            call,
            runtime.info,
            self.worlds(runtime),
        )


def _sort_key(item: tuple[LogRecord, str, tuple[Any, ...]]) -> tuple[Any, ...]:
    return sort_key(item[0], item[2])


class Route:
    """What dispatching one surface entry needs, resolved against one instance."""

    __slots__ = ("entry", "layers", "owner", "touched")

    def __init__(self, entry: SurfaceEntry, runtimes: list[NodeRuntime]) -> None:
        self.entry = entry
        route = [runtimes[node.index] for node in entry.route]
        self.owner = route[-1]
        # Sessions for the owner, and for every node on the way whose middleware
        # runs with that node's db and so may write there.
        self.touched = tuple(
            dict.fromkeys(
                runtime
                for runtime in route
                if runtime is self.owner or runtime.node.world.middlewares
            )
        )
        self.layers = tuple(
            (middleware, runtime)
            for runtime in route
            for middleware in runtime.node.world.middlewares
        )


# --- the chain ---------------------------------------------------------------------------------


def _run_chain(
    activation: Activation,
    layers: tuple[tuple[Callable[..., Any], NodeRuntime], ...],
    position: int,
    owner: NodeRuntime,
    tool: Tool,
    call: Call,
) -> Any:
    if position == len(layers):
        return _run_tool(activation, owner, tool, call.name, call.arguments, call.node)
    middleware, runtime = layers[position]

    def next_(ctx: object, next_call: Call) -> Any:
        if not isinstance(next_call, Call):
            raise WorldBug(
                f"a middleware passed {type(next_call).__name__} to next_; pass (ctx, call)"
            )
        return _run_chain(activation, layers, position + 1, owner, tool, next_call)

    return middleware(activation.ctx(runtime, call), call, next_)


def _run_tool(
    activation: Activation,
    owner: NodeRuntime,
    tool: Tool,
    name: str,
    arguments: dict[str, Any],
    node: str,
) -> Any:
    values = tool.validate(arguments)
    ctx = activation.ctx(owner, Call(name, values, tool, node))
    if not tool.transaction:
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
        return result
    # The same transaction world code opens with ctx.db.transaction(): BEGIN, or a
    # savepoint inside bulk(); a result that cannot be rendered rolls it back too.
    with owner.db.transaction():
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
    return result


# --- calls from the agent's surface --------------------------------------------------------------


def call_surface(
    instance: Instance, target: Any, args: tuple[Any, ...], arguments: dict[str, Any]
) -> Any:
    """``inst.call``: resolve over the composite surface, then dispatch as call ``i``."""
    if type(target) is str:
        route = instance.route(target)
        if route is None:
            if target == CONTROL_TOOL_NAME and instance.control_tools:
                return instance.run_control_tool(arguments)
            raise UnknownTool(target)
        if args:
            raise WorldBug(
                f"inst.call({target!r}, ...) got positional arguments; pass them by name, or "
                "call the tool by its function"
            )
        name = target
    elif callable(target):
        route = _resolve_function(instance.world.name, instance.routes(), target)
        name = route.entry.name
        if args:
            arguments = {**route.entry.tool.bind_positional(args), **arguments}
    else:
        instance.routes()  # a tree that no longer seals is refused first, as for any call
        raise WorldBug(f"inst.call takes a tool name or a tool's function, not {target!r}")
    return _dispatch(instance, route, name, arguments)


def _resolve_function(world: str, routes: dict[str, Route], fn: Callable[..., Any]) -> Route:
    """The one route built from ``fn`` on world ``world``'s surface (in surface order)."""
    found = [route for route in routes.values() if route.entry.tool.fn is fn]
    if not found:
        raise WorldBug(
            f"no tool on world {world!r}'s surface is built from "
            f"{getattr(fn, '__qualname__', fn)!r}; a tool kept off the surface by a list is "
            "reached through ctx.worlds.<name>.call(...)"
        )
    owners = {route.entry.owner.index for route in found}
    if len(owners) > 1:
        candidates = ", ".join(f"{route.entry.name} at {route.entry.owner.path}" for route in found)
        raise WorldBug(
            f"{getattr(fn, '__qualname__', fn)!r} is a tool of more than one store ({candidates}); "
            "name the store with ctx.worlds.<name>.call(...) or call it by its surface name"
        )
    return found[0]


def _dispatch(instance: Instance, route: Route, name: str, arguments: dict[str, Any]) -> Any:
    local = _local
    gated = not (local.depth or local.bulk) and gate().acquire()
    try:
        with instance.lock:
            instance.check_callable()
            activation = instance.activation
            outer = activation is None
            if activation is None:
                activation = Activation(recording=True)
                resumed: list[NodeRuntime] = []
                outer_ordinal = None
            else:
                # A call made inside bulk(): what the block wrote before it is a segment
                # of its own, and so is what it writes after, on the same stores.
                resumed = [runtime for runtime, _ in activation.sessions.values()]
                outer_ordinal = activation.ordinal
            owner = route.owner
            started = time.perf_counter()
            failure: BaseException | None = None
            leftover: WorldBug | None = None
            # Nothing above changed the instance, so a record that cannot be made (or
            # anything else raised so far) leaves it as it was. From the record on, the
            # finally below ends the call's work, whatever is raised.
            ordinal, record = instance.record_call(name, arguments)
            local.depth += 1
            try:
                if outer:
                    instance.activation = activation
                else:
                    activation.flush()
                activation.ordinal = ordinal
                for runtime in route.touched:
                    activation.touch(runtime)
                layers = route.layers
                tool = route.entry.tool
                if layers:
                    call = Call(name, arguments, tool, owner.path)
                    result = _run_chain(activation, layers, 0, owner, tool, call)
                else:
                    # No middleware on the route: straight to the tool, as the chain's end would.
                    result = _run_tool(activation, owner, tool, name, arguments, owner.path)
            except BaseException as error:
                failure = error
                record.record_failure(error)
                raise
            finally:
                local.depth -= 1
                if outer:
                    leftover = instance.finish_call(activation)
                else:
                    leftover = _resume_block(activation, outer_ordinal, resumed)
                failure = failure or leftover
                if failure is not None or _log.isEnabledFor(_INFO):
                    _log_call(instance, name, owner.path, started, failure, internal=False)
                # The error's traceback holds this frame: keeping it here too would make a
                # cycle, and the call's arguments would wait for the cycle collector.
                failure = None
            if leftover is not None:
                record.record_failure(leftover)
                raise leftover
            return result
    finally:
        if gated:
            gate().release()


def _resume_block(
    activation: Activation, ordinal: int | None, resumed: list[NodeRuntime]
) -> WorldBug | None:
    """End a call's segment inside ``bulk()``, and record the block's own writes again."""
    leftover: WorldBug | None = None
    try:
        activation.flush()
    except WorldBug as unrecorded:
        leftover = unrecorded
    finally:
        # The block goes on recording, whatever the call's segment did.
        activation.ordinal = ordinal
        try:
            for runtime in resumed:
                activation.touch(runtime)
        except BaseException as error:
            # The block cannot record what it writes next, so it will keep none of it.
            activation.unrecorded = f"{type(error).__name__} reopening a change-log session"
            raise
    return leftover


# --- calls made by host code through a handle ---------------------------------------------------


def call_nested(
    runtime: NodeRuntime,
    activation: Activation,
    target: Any,
    args: tuple[Any, ...],
    arguments: dict[str, Any],
) -> Any:
    """``handle.call``: one tool of this node (by name) or of its subtree (by function)."""
    if type(target) is str:
        tool = runtime.node.world.tools.get(target)
        if tool is None:
            raise WorldBug(
                f"world {runtime.node.world.name!r} (at {runtime.path!r}) has no tool named "
                f"{target!r}; a handle calls the added world's own, unprefixed names"
            )
        if args:
            raise WorldBug(f"handle.call({target!r}, ...) takes its arguments by name")
        owner = runtime
    elif callable(target):
        owner, tool = _resolve_in_subtree(runtime, target)
        if args:
            arguments = {**tool.bind_positional(args), **arguments}
    else:
        raise WorldBug(f"handle.call takes a tool name or a tool's function, not {target!r}")
    instance = runtime.instance
    with instance.lock:
        instance.check_callable()
        activation.touch(owner)
        layers = tuple((middleware, owner) for middleware in owner.node.world.middlewares)
        call = Call(tool.name, arguments, tool, owner.path)
        started = time.perf_counter()
        _local.depth += 1
        failure: BaseException | None = None
        try:
            return _run_chain(activation, layers, 0, owner, tool, call)
        except BaseException as error:
            failure = error
            raise
        finally:
            _local.depth -= 1
            _log_call(instance, tool.name, owner.path, started, failure, internal=True)
            failure = None  # as in _dispatch: no cycle through the traceback


def _resolve_in_subtree(runtime: NodeRuntime, fn: Callable[..., Any]) -> tuple[NodeRuntime, Tool]:
    runtimes = runtime.instance.runtimes
    found = [
        (runtimes[node.index], tool)
        for node in runtime.node.subtree()
        for tool in node.world.tools.values()
        if tool.fn is fn
    ]
    if not found:
        raise WorldBug(
            f"no world at or below {runtime.path!r} has a tool built from "
            f"{getattr(fn, '__qualname__', fn)!r}"
        )
    if len(found) > 1:
        candidates = ", ".join(f"{tool.name} at {owner.path}" for owner, tool in found)
        raise WorldBug(
            f"{getattr(fn, '__qualname__', fn)!r} is a tool of more than one store below "
            f"{runtime.path!r} ({candidates}); use the handle of the store you mean"
        )
    return found[0]


# --- logging -----------------------------------------------------------------------------------


def _log_call(
    instance: Instance,
    tool: str,
    node: str,
    started: float,
    failure: BaseException | None,
    *,
    internal: bool,
) -> None:
    if failure is not None and not internal and not isinstance(failure, ToolError):
        _log.error(
            "%s: unexpected %s from %s at node=%s",
            instance.id,
            type(failure).__name__,
            tool,
            node,
            exc_info=failure,
        )
    elif (
        isinstance(failure, ToolError)
        and failure.__cause__ is not None
        and _log.isEnabledFor(logging.DEBUG)
    ):
        _log.debug("%s: %s raised from another error", instance.id, tool, exc_info=failure)
    if not _log.isEnabledFor(_INFO):
        return
    if failure is None:
        outcome = "ok"
    elif isinstance(failure, ToolError):
        outcome = f"tool_error:{failure.code}"
    else:
        outcome = f"error:{type(failure).__name__}"
    _log.info(
        "call tool=%s node=%s outcome=%s duration_ms=%.3f internal=%s instance=%s",
        tool,
        node,
        outcome,
        (time.perf_counter() - started) * 1000.0,
        "true" if internal else "false",
        instance.id,
    )
