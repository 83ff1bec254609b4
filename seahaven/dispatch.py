"""Dispatch: ``Calls``, the one owner of an instance's calls, and the routes it runs them on.

``Calls`` holds everything a call changes or reads on its way: the instance
lock, the activation in progress, the routes resolved against the stores, the
call log and the change log, and whether the instance may still be used. An
agent's call (``Calls.call``), a world handle's nested call
(``Calls.call_nested``), a ``bulk()`` block and the startup hooks' activation
all run here; nothing calls back into ``Instance`` on the way, which only
delegates to this object.

A call is a short stack of steps: a call slot (``seahaven.concurrency``), the instance
lock, the call's record (and its log line), and the activation it works in.
A call made inside ``bulk()`` enters them as named context managers
(``_Logged``, ``_Working``); an agent's ordinary call, the hot loop, runs the
same steps written out in ``Calls._run_outer``, which saves their objects. A
``Route``'s middleware chain is composed once, when the route is first
resolved, not on every call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any

import apsw

from seahaven.calls.activation import Activation, WorldCodeScope, in_call, thread_state
from seahaven.calls.concurrency import CallSlots, call_slots
from seahaven.declaration.composition import Composition, SurfaceEntry
from seahaven.declaration.context import Ctx, InstanceInfo
from seahaven.errors import ToolError, UnknownTool, WorldBug
from seahaven.stores.changelog import CallRecord, ChangeLog, LogRecord
from seahaven.stores.db import db_error, run_cleanup
from seahaven.stores.names import AGENT, CONTROL_TOOL_NAME, SETUP, check_actor
from seahaven.tool import Call, Tool, check_result

if TYPE_CHECKING:
    from seahaven.calls.control_tool import ControlTool
    from seahaven.calls.runtime import NodeRuntime
    from seahaven.declaration.composition import DeclaredWorld as World
    from seahaven.stores.clock import Clock

__all__ = ["ActivationSlot", "Calls", "Route", "compose", "roll_back_quietly", "run_tool"]

_log = logging.getLogger("seahaven.dispatch")
_INFO = logging.INFO
_local = thread_state()

Step = Callable[[Call], Any]
Chain = Callable[[str, dict[str, Any]], Any]


class ActivationSlot:
    """Where an instance's activation in progress is kept; what a composed chain reads.

    The chains hold this slot rather than the ``Calls`` that owns it, so that
    the routes an owner caches never make a cycle back to it (an instance would
    then wait for the cycle collector to be freed).
    """

    __slots__ = ("activation",)

    def __init__(self) -> None:
        self.activation: Activation | None = None

    def current(self) -> Activation:
        """The activation in progress; a chain step run after its call ended is refused."""
        activation = self.activation
        if activation is None:
            raise WorldBug("a middleware's next_ was called after its call ended")
        return activation


class Route:
    """What dispatching one surface entry needs, resolved against one instance, chain composed."""

    __slots__ = ("entry", "layers", "owner", "run", "touched")

    def __init__(
        self, entry: SurfaceEntry, runtimes: list[NodeRuntime], slot: ActivationSlot
    ) -> None:
        self.entry = entry
        route = [runtimes[node.index] for node in entry.route]
        self.owner = route[-1]
        # Recorded for the owner, and for every node on the way whose middleware
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
        self.run = compose(slot, self.layers, self.owner, entry.tool)
        """``run(name, arguments)``: the chain, outermost middleware first, down to the tool."""


def compose(
    slot: ActivationSlot,
    layers: tuple[tuple[Callable[..., Any], NodeRuntime], ...],
    owner: NodeRuntime,
    tool: Tool,
) -> Chain:
    """The chain of ``layers`` down to ``tool`` on ``owner``, built once for a route.

    Each layer's ``next_`` is made here, once; the activation a step works in is
    read from ``slot`` when it runs, since it is the one in progress.
    """
    if not layers:
        validate, fn, node = tool.validate, tool.fn, owner.path
        transactional = tool.transaction

        def bare(name: str, arguments: dict[str, Any]) -> Any:
            # run_tool's steps, written out: a route without middleware is most calls.
            activation = slot.activation
            if activation is None:
                activation = slot.current()  # refused: the call has ended
            values = validate(arguments)
            ctx = activation.ctx(owner, Call(name, values, tool, node))
            if not transactional:
                result = fn(ctx, **values)
                check_result(tool.name, result)
                return result
            with ctx.db.transaction():
                result = fn(ctx, **values)
                check_result(tool.name, result)
            return result

        return bare

    def last(call: Call) -> Any:
        return run_tool(slot.current(), owner, tool, call.name, call.arguments, call.node)

    step: Step = last
    for middleware, runtime in reversed(layers):
        step = _layer(slot, middleware, runtime, step)
    first = step
    node = owner.path

    def chained(name: str, arguments: dict[str, Any]) -> Any:
        return first(Call(name, arguments, tool, node))

    return chained


def _layer(
    slot: ActivationSlot, middleware: Callable[..., Any], runtime: NodeRuntime, inner: Step
) -> Step:
    def next_(ctx: object, next_call: Call) -> Any:
        if not isinstance(next_call, Call):
            raise WorldBug(
                f"a middleware passed {type(next_call).__name__} to next_; pass (ctx, call)"
            )
        return inner(next_call)

    def step(call: Call) -> Any:
        return middleware(slot.current().ctx(runtime, call), call, next_)

    return step


def run_tool(
    activation: Activation,
    owner: NodeRuntime,
    tool: Tool,
    name: str,
    arguments: dict[str, Any],
    node: str,
) -> Any:
    """The end of every chain: validate the arguments, then run the tool in its transaction."""
    values = tool.validate(arguments)
    ctx = activation.ctx(owner, Call(name, values, tool, node))
    if not tool.transaction:
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
        return result
    # The same transaction world code opens with ctx.db.transaction(): BEGIN, or a
    # savepoint inside bulk(); a result that cannot be rendered rolls it back too.
    with ctx.db.transaction():
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
    return result


class _RouteCache:
    """The routes an instance resolved against one sealing of its world."""

    __slots__ = ("complete", "composition", "nested", "routes")

    def __init__(self, composition: Composition) -> None:
        self.composition = composition
        self.routes: dict[str, Route] = {}
        # Whether ``routes`` holds every surface entry, in surface order.
        self.complete = False
        # (node index, tool name) -> the tool and the owner's own chain, for a handle's calls.
        self.nested: dict[tuple[int, str], tuple[Tool, Chain]] = {}


# --- the steps of a call -----------------------------------------------------------------------


class _Logged:
    """A call's log line, and what it raised noted in its call record (when it has one)."""

    __slots__ = ("_instance_id", "_internal", "_node", "_record", "_started", "_tool")

    def __init__(
        self, instance_id: str, tool: str, node: str, record: CallRecord | None, *, internal: bool
    ) -> None:
        self._instance_id = instance_id
        self._tool = tool
        self._node = node
        self._record = record
        self._internal = internal

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        failure: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if failure is not None and self._record is not None:
            self._record.record_failure(failure)
        if failure is not None or self._internal or _log.isEnabledFor(_INFO):
            _log_call(
                self._instance_id,
                self._tool,
                self._node,
                self._started,
                failure,
                internal=self._internal,
            )


class _Working:
    """The activation an outer call works in: a new one, or a segment of the ``bulk()`` block.

    Entering marks the thread inside world code, installs the activation (or
    ends the block's segment so far), sets the ordinal and starts recording the
    route's stores. Leaving ends the call's work whatever was raised: a new
    activation is finished (its records kept), a block's segment is rendered
    and the block records again. What finishing could not record is raised.
    """

    __slots__ = (
        "_activation",
        "_actor",
        "_actor_before",
        "_calls",
        "_ordinal",
        "_ordinal_before",
        "_outer",
        "_resumed",
        "_route",
    )

    def __init__(self, calls: Calls, route: Route, ordinal: int, actor: str) -> None:
        self._calls = calls
        self._route = route
        self._ordinal = ordinal
        self._actor = actor

    def __enter__(self) -> None:
        calls = self._calls
        activation = calls.slot.activation
        self._outer = activation is None
        if activation is None:
            activation = Activation(calls, recording=calls.net is None, actor=self._actor)
            self._resumed: list[NodeRuntime] = []
            self._ordinal_before: int | None = None
            self._actor_before = self._actor
        else:
            # A call made inside bulk(): what the block wrote before it is a segment
            # of its own, and so is what it writes after, on the same stores.
            self._resumed = [runtime for runtime, _ in activation.sessions.values()]
            self._ordinal_before = activation.ordinal
            self._actor_before = activation.actor
        self._activation = activation
        _local.depth += 1
        try:
            if self._outer:
                calls.slot.activation = activation
            else:
                activation.flush()
            activation.ordinal = self._ordinal
            activation.actor = self._actor
            touch = activation.touch
            for runtime in self._route.touched:
                touch(runtime)
        except BaseException:
            self._end()
            raise

    def _end(self) -> WorldBug | None:
        _local.depth -= 1
        if self._outer:
            return self._calls.finish_call(self._activation)
        return self._calls.resume_block(
            self._activation, self._ordinal_before, self._resumed, self._actor_before
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _local.depth -= 1
        if self._outer:
            leftover = self._calls.finish_call(self._activation)
        else:
            leftover = self._calls.resume_block(
                self._activation, self._ordinal_before, self._resumed, self._actor_before
            )
        if leftover is not None and exc is None:
            raise leftover


class _Deeper:
    """The thread is inside world code for the block: a nested call's depth."""

    __slots__ = ()

    def __enter__(self) -> None:
        _local.depth += 1

    def __exit__(self, *exc: object) -> None:
        _local.depth -= 1


# --- the owner ---------------------------------------------------------------------------------


class Calls:
    """The one owner of an instance's calls: the lock, the activation, the routes and the logs.

    ``Instance`` keeps the public face and delegates here; the state document
    and freezing read an instance through this object too.
    """

    __slots__ = (
        "_formatting",
        "_log",
        "_route_cache",
        "acting",
        "call_log",
        "clock",
        "control",
        "destroyed",
        "diverged",
        "info",
        "lock",
        "net",
        "runtimes",
        "slot",
        "stopping",
        "world",
    )

    def __init__(
        self,
        world: World,
        info: InstanceInfo,
        clock: Clock,
        *,
        control: ControlTool | None = None,
    ) -> None:
        self.world = world
        self.info = info
        self.clock = clock
        self.lock = threading.RLock()
        """The instance lock: a call, ``bulk()``, ``state()`` and a freeze each hold it."""
        self.slot = ActivationSlot()
        """Where the activation in progress is kept."""
        self.runtimes: list[NodeRuntime] = []
        """One runtime per store, root first, in the composition's node order."""
        self.call_log: list[CallRecord] = []
        """Every dispatched call, in dispatch order, so ``[i]`` is call ``i``."""
        self.acting: dict[int, str] = {}
        """Who acts, by thread, inside an ``acting_as()`` block; empty outside every one."""
        self._log = ChangeLog()
        self.net: Activation | None = None
        """The recorder of an open ``record_net()`` block, or ``None`` outside one."""
        self.control = control
        """The deprecated control tool, or ``None`` when it is not callable."""
        self.destroyed = False
        """Whether ``destroy()`` ran."""
        self.stopping = False
        """Whether ``destroy()`` is stopping another thread's work to run."""
        self.diverged: str | None = None
        """Why the stores hold changes the log does not show, once that has happened."""
        self._formatting = False
        self._route_cache: _RouteCache | None = None

    @property
    def activation(self) -> Activation | None:
        """The activation in progress (a call, a ``bulk()`` block or startup), or ``None``."""
        return self.slot.activation

    @activation.setter
    def activation(self, activation: Activation | None) -> None:
        self.slot.activation = activation

    @property
    def log(self) -> ChangeLog:
        """The change log, each record with its JSON text; refused inside ``record_net()``."""
        if self.net is not None:
            raise WorldBug(
                "the change log of a record_net() block is written when the block ends; read the "
                "log, the state document or a snapshot after it"
            )
        return self._log

    def replace_logs(
        self, call_log: Sequence[CallRecord], records: Sequence[LogRecord], texts: Sequence[str]
    ) -> None:
        """Make the call log and the change log these, as a restore in place leaves them."""
        if self.net is not None or self.slot.activation is not None:
            raise WorldBug("the logs cannot be replaced while a call or a block is under way")
        self.call_log[:] = call_log
        log = ChangeLog()
        log.extend(list(records), list(texts))
        self._log = log

    # --- whether the instance may be used ---------------------------------------------------

    def check_usable(self) -> None:
        """Raise ``WorldBug`` once the instance is destroyed, or no longer matches its log."""
        if self.destroyed or self.stopping:
            raise WorldBug(f"instance {self.info.id} was destroyed; make a new one")
        if self.diverged is not None:
            raise WorldBug(
                f"instance {self.info.id} no longer matches its state document ({self.diverged}); "
                "destroy it and make a new one"
            )

    def check_callable(self) -> None:
        """``check_usable``, and refuse a call made while a state formatter runs."""
        self.check_usable()
        if self._formatting:
            raise WorldBug("a state formatter may not write: it called into the instance")

    def refuse_inside(self, message: str) -> None:
        """Raise ``WorldBug(message)`` from inside a call, a hook or this instance's ``bulk()``."""
        activation = self.slot.activation
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

    # --- routes ----------------------------------------------------------------------------

    def check_tree(self) -> None:
        """Refuse, with a ``WorldBug``, a tree that no longer seals or now has other stores.

        What every use of the tree checks first; it resolves no route.
        """
        self._routes_of(self.world.composition())

    def routes(self) -> dict[str, Route]:
        """Every surface name's route, resolved against this instance's stores, in surface order.

        Kept until the world seals again, and refused with a ``WorldBug`` when the
        world now resolves to other stores than the instance was made with.
        """
        cache = self._routes_of(self.world.composition())
        if not cache.complete:
            # route() may have resolved some already: keep them, in surface order.
            runtimes, known = self.runtimes, cache.routes
            cache.routes = {
                entry.name: known.get(entry.name) or Route(entry, runtimes, self.slot)
                for entry in cache.composition.surface
            }
            cache.complete = True
        return cache.routes

    def route(self, name: str) -> Route | None:
        """One surface name's route, resolved the first time it is called; ``None`` if unknown."""
        cache = self._route_cache
        if cache is None or cache.composition is not self.world.composition():
            cache = self._routes_of(self.world.composition())
        route = cache.routes.get(name)
        if route is None and not cache.complete:
            entry = cache.composition.by_name.get(name)
            if entry is None:
                return None
            route = cache.routes[name] = Route(entry, self.runtimes, self.slot)
        return route

    def _routes_of(self, composition: Composition) -> _RouteCache:
        cache = self._route_cache
        if cache is not None and cache.composition is composition:
            return cache
        mine = [
            (id(runtime.node.world), runtime.node.scope, runtime.path) for runtime in self.runtimes
        ]
        now = [(id(node.world), node.scope, node.path) for node in composition.nodes]
        if mine != now:
            raise WorldBug(
                f"world {self.world.name!r} now resolves to other stores than instance "
                f"{self.info.id} was made with; make a new instance"
            )
        cache = self._route_cache = _RouteCache(composition)
        return cache

    # --- calls from the agent's surface ------------------------------------------------------

    def call(self, target: Any, args: tuple[Any, ...], arguments: dict[str, Any]) -> Any:
        """``inst.call``: resolve over the composite surface, then dispatch as call ``i``."""
        if type(target) is str:
            cache = self._route_cache
            if cache is not None and cache.composition is self.world.composition():
                route = cache.routes.get(target) or self.route(target)
            else:
                route = self.route(target)
            if route is None:
                if target == CONTROL_TOOL_NAME and self.control is not None:
                    return self.control(self, arguments)
                raise UnknownTool(target)
            if args:
                raise WorldBug(
                    f"inst.call({target!r}, ...) got positional arguments; pass them by name, or "
                    "call the tool by its function"
                )
            name = target
        elif callable(target):
            route = _resolve_function(self.world.name, self.routes(), target)
            name = route.entry.name
            if args:
                arguments = {**route.entry.tool.bind_positional(args), **arguments}
        else:
            self.check_tree()  # a tree that no longer seals is refused first, as for any call
            raise WorldBug(f"inst.call takes a tool name or a tool's function, not {target!r}")
        # A call slot, for an outermost call; nested calls and bulk() take none.
        held: CallSlots | None = None
        if not (_local.depth or _local.bulk):
            taken = call_slots()
            if taken.acquire():
                held = taken
        try:
            with self.lock:
                if self.destroyed or self.stopping or self.diverged is not None or self._formatting:
                    self.check_callable()
                # Nothing above changed the instance, so a record that cannot be made (or
                # anything else raised so far) leaves it as it was. From the record on,
                # the steps below end the call's work, whatever is raised.
                ordinal, record = self.record_call(name, arguments)
                if self.slot.activation is None:
                    return self._run_outer(route, name, arguments, ordinal, record)
                with (
                    _Logged(self.info.id, name, route.owner.path, record, internal=False),
                    _Working(self, route, ordinal, record.actor),
                ):
                    return route.run(name, arguments)
        finally:
            if held is not None:
                held.release()

    def _run_outer(
        self, route: Route, name: str, arguments: dict[str, Any], ordinal: int, record: CallRecord
    ) -> Any:
        """A call in an activation of its own: ``_Logged`` and ``_Working``'s steps, inlined.

        This is every agent's call outside ``bulk()``, the hot loop, so the two
        steps' objects and their method calls are saved here; what each step does,
        and in which order, is theirs (a change to one is a change to both).
        """
        started = time.perf_counter()
        try:
            activation = Activation(self, recording=self.net is None, actor=record.actor)
            _local.depth += 1
            try:
                self.slot.activation = activation
                activation.ordinal = ordinal
                touch = activation.touch
                for runtime in route.touched:
                    touch(runtime)
                result = route.run(name, arguments)
            except BaseException:
                _local.depth -= 1
                # What finishing could not record is dropped: the call's own error wins.
                self.finish_call(activation)
                raise
            _local.depth -= 1
            leftover = self.finish_call(activation)
            if leftover is not None:
                raise leftover
        except BaseException as failure:
            record.record_failure(failure)
            _log_call(self.info.id, name, route.owner.path, started, failure, internal=False)
            raise
        if _log.isEnabledFor(_INFO):
            _log_call(self.info.id, name, route.owner.path, started, None, internal=False)
        return result

    def record_call(self, name: str, arguments: dict[str, Any]) -> tuple[int, CallRecord]:
        """Log a call about to be dispatched; return its ordinal ``i`` and its record.

        The record's actor is this thread's in an ``acting_as()`` block, else ``agent``.
        """
        ordinal = len(self.call_log)
        acting = self.acting
        record = CallRecord(
            name, arguments, acting.get(threading.get_ident(), AGENT) if acting else AGENT
        )
        self.call_log.append(record)
        self.clock.set_dispatched(ordinal + 1)
        return ordinal, record

    def finish_call(self, activation: Activation) -> WorldBug | None:
        """End an outer call: close what it left open, keep its records, stale its handles."""
        left_open = []
        unrecorded: WorldBug | None = None
        try:
            # A call in a record_net() block has no sessions of its own: the block's
            # recorder has one on every store, any of which the call may have left open.
            recorder = self.net if self.net is not None and not activation.recording else activation
            for runtime, _ in recorder.sessions.values():
                if runtime.conn.in_transaction:
                    roll_back_quietly(runtime.conn)
                    left_open.append(runtime.path)
            try:
                activation.flush()
            except WorldBug as error:
                unrecorded = error
            if activation.records:
                # An outer call's activation records under its one ordinal.
                assert activation.ordinal is not None
                self._log.extend_call(activation.ordinal, activation.records, activation.texts)
        finally:
            self.diverged = self.diverged or activation.diverged
            activation.end()
            self.slot.activation = None
        if unrecorded is not None:
            return unrecorded
        if left_open:
            return WorldBug(
                f"the call returned with a transaction still open on {', '.join(left_open)}; "
                "it was rolled back. Close every transaction a transaction=False tool opens"
            )
        return None

    def resume_block(
        self,
        activation: Activation,
        ordinal: int | None,
        resumed: list[NodeRuntime],
        actor: str = SETUP,
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
            activation.actor = actor
            try:
                for runtime in resumed:
                    activation.touch(runtime)
            except BaseException as error:
                # The block cannot record what it writes next, so it will keep none of it.
                activation.unrecorded = f"{type(error).__name__} reopening a change-log session"
                raise
        return leftover

    # --- calls made by host code through a handle --------------------------------------------

    def call_nested(
        self,
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
            owner, tool = self._resolve_in_subtree(runtime, target)
            if args:
                arguments = {**tool.bind_positional(args), **arguments}
        else:
            raise WorldBug(f"handle.call takes a tool name or a tool's function, not {target!r}")
        with self.lock:
            self.check_callable()
            activation.touch(owner)
            run = self._nested_chain(owner, tool)
            with _Logged(self.info.id, tool.name, owner.path, None, internal=True), _Deeper():
                return run(tool.name, arguments)

    def _nested_chain(self, owner: NodeRuntime, tool: Tool) -> Chain:
        cache = self._route_cache
        if cache is None:
            cache = self._routes_of(self.world.composition())
        key = (owner.index, tool.name)
        known = cache.nested.get(key)
        if known is not None and known[0] is tool:
            return known[1]
        layers = tuple((middleware, owner) for middleware in owner.node.world.middlewares)
        run = compose(self.slot, layers, owner, tool)
        cache.nested[key] = (tool, run)
        return run

    def _resolve_in_subtree(
        self, runtime: NodeRuntime, fn: Callable[..., Any]
    ) -> tuple[NodeRuntime, Tool]:
        runtimes = self.runtimes
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

    # --- work outside calls -------------------------------------------------------------------

    @contextmanager
    def bulk(self) -> Iterator[Ctx[Any]]:
        """Load rows fast: the root's context, one transaction per node, committed together."""
        self.check_usable()
        self.refuse_inside("bulk() cannot run inside a call or another bulk() block")
        with self.lock:
            self.check_callable()
            if self.net is not None:
                raise WorldBug("bulk() cannot run inside a record_net() block; end the block first")
            runtimes = self.runtimes
            # A reader may be asked for inside the block, and switching a store to the
            # journal a reader needs cannot happen once its transaction is open.
            for runtime in runtimes:
                runtime.share()
            activation = self.activation = Activation(
                self, recording=True, actor=self.actor_of_thread(SETUP)
            )
            begun: list[NodeRuntime] = []
            try:
                try:
                    for runtime in runtimes:
                        runtime.conn.execute("BEGIN")
                        begun.append(runtime)
                        activation.touch(runtime)
                    with WorldCodeScope(bulk=True):
                        yield activation.ctx(runtimes[0], None)
                except BaseException:
                    activation.discard()
                    for runtime in begun:
                        roll_back_quietly(runtime.conn)
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
                        roll_back_quietly(runtime.conn)
                    raise
                self._commit_bulk(activation.records, activation.texts)
            finally:
                activation.end()
                self.activation = None

    def actor_of_thread(self, default: str) -> str:
        """Who this thread acts as: its ``acting_as()`` actor, else ``default``."""
        acting = self.acting
        return acting.get(threading.get_ident(), default) if acting else default

    @contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Make this thread's calls and ``bulk()`` blocks on the instance ``actor``'s for the block.

        Other threads are not affected; blocks nest, the innermost winning. World
        code cannot change who acts: inside a call, a hook or a ``bulk()`` block it
        is refused, since what it does belongs to the call it is in.
        """
        actor = check_actor(actor)
        self.check_usable()
        self.refuse_inside(
            "acting_as() cannot start inside a call, a startup hook or a bulk() block; what "
            "world code does there belongs to the call (or block) it runs in"
        )
        thread = threading.get_ident()
        previous = self.acting.get(thread)
        self.acting[thread] = actor
        try:
            yield
        finally:
            if previous is None:
                self.acting.pop(thread, None)
            else:
                self.acting[thread] = previous

    @contextmanager
    def record_net(self) -> Iterator[None]:
        """Record the block's calls together: one net change per row, logged when it ends.

        Each call runs as usual (its call record, its clock tick, its transaction)
        but opens no change-capture session of its own: one session per store
        covers the whole block, and its net changes join the change log at the end
        with no call ordinal, as a ``bulk()`` block's do. The instance is this
        thread's for the block.
        """
        self.check_usable()
        self.refuse_inside("record_net() cannot start inside a call or a bulk() block")
        with self.lock:
            self.check_callable()
            if self.net is not None:
                raise WorldBug("record_net() blocks do not nest; this instance is in one already")
            recorder = Activation(self, recording=True, actor=self.actor_of_thread(AGENT))
            try:
                for runtime in self.runtimes:
                    recorder.touch(runtime)
            except BaseException:
                recorder.end()
                raise
            self.net = recorder
            try:
                yield
            finally:
                self.net = None
                try:
                    if not self.destroyed:
                        recorder.flush()
                        self._log.extend(recorder.records, recorder.texts)
                finally:
                    self.diverged = self.diverged or recorder.diverged
                    recorder.end()

    def _commit_bulk(self, records: list[LogRecord], texts: list[str]) -> None:
        # One node at a time, the root last; a failed commit keeps what committed before it.
        ordered = [*self.runtimes[1:], self.runtimes[0]]
        committed: set[str] = set()
        for position, runtime in enumerate(ordered):
            try:
                runtime.conn.execute("COMMIT")
            except apsw.Error as error:
                for remaining in ordered[position:]:
                    roll_back_quietly(remaining.conn)
                kept = [
                    (record, text)
                    for record, text in zip(records, texts, strict=True)
                    if record.world in committed
                ]
                self._log.extend([record for record, _ in kept], [text for _, text in kept])
                raise db_error(error) from error
            committed.add(runtime.path)
        self._log.extend(records, texts)

    def run_startup(self, hooks: Callable[[Activation], None]) -> None:
        """Run ``hooks`` in the startup activation: every node's transaction open, nothing logged.

        The transactions commit together, the root last, when ``hooks`` returns,
        and roll back when it raises.
        """
        activation = self.activation = Activation(self, recording=False)
        runtimes = self.runtimes
        begun: list[NodeRuntime] = []
        try:
            for runtime in runtimes:
                runtime.conn.execute("BEGIN")
                begun.append(runtime)
            with WorldCodeScope():
                hooks(activation)
            for runtime in [*runtimes[1:], runtimes[0]]:
                runtime.conn.execute("COMMIT")
        except BaseException:
            for runtime in begun:
                roll_back_quietly(runtime.conn)
            raise
        finally:
            activation.end()
            self.activation = None


def roll_back_quietly(conn: apsw.Connection) -> None:
    """Roll back ``conn``'s transaction, if it has one, ignoring what SQLite says."""
    try:
        if conn.in_transaction:
            run_cleanup(conn, "ROLLBACK")
    except apsw.Error:
        pass


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


# --- logging -----------------------------------------------------------------------------------


def _log_call(
    instance_id: str,
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
            instance_id,
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
        _log.debug("%s: %s raised from another error", instance_id, tool, exc_info=failure)
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
        instance_id,
    )
