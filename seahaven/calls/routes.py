"""The routes a call runs on: each surface entry resolved against an instance's stores,
its middleware chain composed once, down to the tool.

``Route`` is what dispatching one surface entry needs; ``compose`` builds its chain,
reading the activation in progress from an ``ActivationSlot`` when it runs; ``run_tool``
is the end of every chain; ``RouteCache`` keeps an instance's routes for one sealing of
its world.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seahaven.calls.activation import Activation
from seahaven.declaration.composition import Composition, SurfaceEntry
from seahaven.declaration.tool import Call, Tool
from seahaven.declaration.tool_validation import check_result
from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.calls.runtime import NodeRuntime


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
                owner.settle()  # as run_tool does
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
        # World code takes transactions into its own hands: the store's episode, if it
        # runs in one and no call's transaction is open over it, ends here, committed.
        owner.settle()
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
        return result
    # The same transaction world code opens with ctx.db.transaction(): BEGIN, or a
    # savepoint inside bulk(); a result that cannot be rendered rolls it back too.
    with ctx.db.transaction():
        result = tool.fn(ctx, **values)
        check_result(tool.name, result)
    return result


class RouteCache:
    """The routes an instance resolved against one sealing of its world."""

    __slots__ = ("complete", "composition", "nested", "routes")

    def __init__(self, composition: Composition) -> None:
        self.composition = composition
        self.routes: dict[str, Route] = {}
        # Whether ``routes`` holds every surface entry, in surface order.
        self.complete = False
        # (node index, tool name) -> the tool and the owner's own chain, for a handle's calls.
        self.nested: dict[tuple[int, str], tuple[Tool, Chain]] = {}


def resolve_function(world: str, routes: dict[str, Route], fn: Callable[..., Any]) -> Route:
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
