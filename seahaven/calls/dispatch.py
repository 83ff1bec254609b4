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
(``seahaven.call_steps``: ``LoggedCall``, ``WorkingCall``); an agent's ordinary call,
the hot loop, runs the same steps written out in ``Calls._run_outer``, which saves
their objects. A ``Route``'s middleware chain (``seahaven.routes``) is composed once,
when the route is first resolved, not on every call. The work outside calls
(``bulk()``, ``acting_as()``, ``record_net()``, startup) is ``seahaven.blocks``'s,
which ``Calls`` delegates to.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from seahaven.calls import blocks
from seahaven.calls.activation import Activation, in_call, thread_state
from seahaven.calls.call_steps import Deeper, LoggedCall, WorkingCall, log_call
from seahaven.calls.concurrency import CallSlots, call_slots
from seahaven.calls.routes import (
    ActivationSlot,
    Chain,
    Route,
    RouteCache,
    compose,
    resolve_function,
    run_tool,
)
from seahaven.declaration.composition import Composition
from seahaven.declaration.context import Ctx, InstanceInfo
from seahaven.declaration.tool import Tool
from seahaven.errors import UnknownTool, WorldBug
from seahaven.stores.changelog import CallRecord, ChangeLog, LogRecord
from seahaven.stores.db import roll_back_quietly
from seahaven.stores.names import AGENT, CONTROL_TOOL_NAME, SETUP
from seahaven.stores.transactions import transaction_open

if TYPE_CHECKING:
    from seahaven.calls.control_tool import ControlTool
    from seahaven.calls.runtime import NodeRuntime
    from seahaven.declaration.composition import DeclaredWorld
    from seahaven.stores.clock import Clock


__all__ = ["ActivationSlot", "Calls", "Route", "compose", "roll_back_quietly", "run_tool"]

_log = logging.getLogger("seahaven.dispatch")
_INFO = logging.INFO
_local = thread_state()


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
        world: DeclaredWorld,
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
        self._route_cache: RouteCache | None = None

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

    def _routes_of(self, composition: Composition) -> RouteCache:
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
        cache = self._route_cache = RouteCache(composition)
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
            route = resolve_function(self.world.name, self.routes(), target)
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
                    LoggedCall(self.info.id, name, route.owner.path, record, internal=False),
                    WorkingCall(self, route, ordinal, record.actor),
                ):
                    return route.run(name, arguments)
        finally:
            if held is not None:
                held.release()

    def _run_outer(
        self, route: Route, name: str, arguments: dict[str, Any], ordinal: int, record: CallRecord
    ) -> Any:
        """A call in an activation of its own: ``LoggedCall`` and ``WorkingCall``'s steps, inlined.

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
            log_call(self.info.id, name, route.owner.path, started, failure, internal=False)
            raise
        if _log.isEnabledFor(_INFO):
            log_call(self.info.id, name, route.owner.path, started, None, internal=False)
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
            # A call in a record_net() block captures nothing of its own: the block's
            # recorder captures every store, any of which the call may have left open.
            recorder = self.net if self.net is not None and not activation.recording else activation
            for runtime in recorder.capturing.values():
                conn = runtime.conn
                if transaction_open(conn):
                    roll_back_quietly(conn)
                    left_open.append(runtime.path)
                lost = getattr(conn, "lost", None)
                if lost is not None:
                    self.diverged = self.diverged or f"{lost} (at {runtime.path})"
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
            with LoggedCall(self.info.id, tool.name, owner.path, None, internal=True), Deeper():
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

    # --- work outside calls (``seahaven.blocks``) -----------------------------------------

    def bulk(self) -> AbstractContextManager[Ctx[Any]]:
        """Load rows fast: the root's context, one transaction per node, committed together."""
        return blocks.bulk(self)

    def actor_of_thread(self, default: str) -> str:
        """Who this thread acts as: its ``acting_as()`` actor, else ``default``."""
        acting = self.acting
        return acting.get(threading.get_ident(), default) if acting else default

    def acting_as(self, actor: str) -> AbstractContextManager[None]:
        """Make this thread's calls and ``bulk()`` blocks ``actor``'s for the block."""
        return blocks.acting_as(self, actor)

    def record_net(self) -> AbstractContextManager[None]:
        """Record the block's calls together: one net change per row, logged when it ends."""
        return blocks.record_net(self)

    def run_startup(self, hooks: Callable[[Activation], None]) -> None:
        """Run ``hooks`` in the startup activation: each node's transaction open, nothing logged."""
        blocks.run_startup(self, hooks)
