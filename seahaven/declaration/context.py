"""What world code is given: ``Ctx``, and ``Worlds``/``WorldHandle`` for reaching added worlds.

A context is made per layer of a call, so every middleware and the tool see
their own world's store, and ``ctx.call`` is always the call that layer holds.
A world handle belongs to one activation (the outermost call, a ``bulk()``
block, or instance startup) and refuses every use once that activation ends or
from another thread. Handles are handed their node and their activation, and
make nested calls through the activation.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from seahaven.declaration.tool_signature import ContextBase
from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.declaration.tool import Call
    from seahaven.stores.clock import Clock
    from seahaven.stores.db import Db
    from seahaven.stores.ids import Ids

__all__ = [
    "Ctx",
    "HandleActivation",
    "HandledStore",
    "InstanceInfo",
    "StoreNode",
    "WorldHandle",
    "Worlds",
    "worlds_class",
]


class NamedWorld(Protocol):
    """A world as a handle's messages name it."""

    @property
    def name(self) -> str:
        """The world's name."""
        ...


class StoreNode(Protocol):
    """A store's place in the composition, as a handle reads it (a ``Node``)."""

    @property
    def path(self) -> str:
        """The store's canonical path."""
        ...

    @property
    def world(self) -> NamedWorld:
        """The world the store is of."""
        ...


class HandledStore(Protocol):
    """One store of an instance, as ``Worlds`` and ``WorldHandle`` read it (a ``NodeRuntime``).

    A protocol, so the context names nothing of the call path's: a handle is
    handed its store and its activation.
    """

    @property
    def node(self) -> StoreNode:
        """Where the store sits in the composition."""
        ...

    @property
    def children(self) -> Mapping[str, HandledStore]:
        """The stores its world adds, by name."""
        ...

    @property
    def db(self) -> Db:
        """The store's ``Db``."""
        ...

    @property
    def state(self) -> dict[str, Any]:
        """The store's ``ctx.state``."""
        ...

    @property
    def worlds_type(self) -> type[Worlds]:
        """The ``Worlds`` class for its children (``worlds_class`` of their names)."""
        ...


class HandleActivation(Protocol):
    """The activation a handle belongs to, as the handle uses it (an ``Activation``)."""

    @property
    def alive(self) -> bool:
        """Whether the activation is still running."""
        ...

    @property
    def thread(self) -> int:
        """The thread it runs on."""
        ...

    # The store is the handle's own, handed back: typed Any, as the activation's own type
    # for it (NodeRuntime) is the call path's.
    def call(
        self, runtime: Any, target: Any, args: tuple[Any, ...], arguments: dict[str, Any]
    ) -> Any:
        """Run a tool of the store's subtree inside the activation."""
        ...

    def touch(self, runtime: Any) -> None:
        """Note that world code read or wrote the store."""
        ...


STALE_HANDLE = "a world handle was used after the call it belongs to returned"

P = ParamSpec("P")
R = TypeVar("R")


class InstanceInfo:
    """``ctx.instance``: the instance's id, fixture and seed, read-only."""

    __slots__ = ("_fixture", "_id", "_seed")

    def __init__(self, id: str, fixture: str | None, seed: bytes) -> None:
        self._id = id
        self._fixture = fixture
        self._seed = seed

    @property
    def id(self) -> str:
        """The instance id."""
        return self._id

    @property
    def fixture(self) -> str | None:
        """The fixture the instance was made from, or ``None`` for a blank one."""
        return self._fixture

    @property
    def seed(self) -> bytes:
        """The derived instance seed."""
        return self._seed

    def __repr__(self) -> str:
        return f"InstanceInfo(id={self._id!r}, fixture={self._fixture!r})"


class Worlds:
    """``ctx.worlds``: the worlds this node adds, by attribute or by item.

    Subclass it, with one ``<name>: seahaven.WorldHandle`` annotation per child,
    to tell a type checker the names; the subclass is never instantiated.
    """

    __slots__ = ("_activation", "_runtime")

    def __init__(self, runtime: HandledStore, activation: HandleActivation) -> None:
        self._runtime = runtime
        self._activation = activation

    def __getattr__(self, name: str) -> WorldHandle:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> WorldHandle:
        activation = self._activation
        if not activation.alive or activation.thread != threading.get_ident():
            raise WorldBug(STALE_HANDLE)
        child = self._runtime.children.get(name)
        if child is None:
            runtime = self._runtime
            names = sorted(runtime.children)
            world = runtime.node.world.name
            if not names:
                raise WorldBug(
                    f"world {world!r} adds no other worlds, so ctx.worlds has no {name!r}"
                )
            raise WorldBug(
                f"world {world!r} adds no world named {name!r}; it adds {', '.join(names)}"
            )
        return WorldHandle(child, activation)

    def __dir__(self) -> list[str]:
        return sorted(self._runtime.children)

    def __repr__(self) -> str:
        return f"Worlds({', '.join(sorted(self._runtime.children))})"


# Child names -> the Worlds class naming them, for every store of the process. Kept to a bound.
_WORLDS_CLASSES: dict[tuple[str, ...], type[Worlds]] = {}
_WORLDS_CLASSES_KEPT = 256


def worlds_class(names: Iterable[str]) -> type[Worlds]:
    """The ``Worlds`` class of a store adding worlds named ``names``, made once per set of names.

    Each name that can be an attribute is one on the class, reached as
    ``ctx.worlds[name]`` is: Python looks ``__getattr__`` up only after raising
    and catching an ``AttributeError`` inside, which doubled the cost of
    ``ctx.worlds.<name>.db``. Other names still reach ``__getattr__``.
    """
    key = tuple(sorted(names))
    made = _WORLDS_CLASSES.get(key)
    if made is None:
        attributes: dict[str, Any] = {
            name: property(operator.itemgetter(name), doc=f"``ctx.worlds[{name!r}]``.")
            for name in key
            if name.isidentifier() and not name.startswith("_") and not hasattr(Worlds, name)
        }
        if not attributes:
            made = Worlds
        else:
            attributes["__slots__"] = ()
            attributes["__doc__"] = Worlds.__doc__
            attributes["__module__"] = Worlds.__module__
            made = type("Worlds", (Worlds,), attributes)
        if len(_WORLDS_CLASSES) >= _WORLDS_CLASSES_KEPT:
            # Emptied whole, which no other thread's lookup can trip over mid-way.
            _WORLDS_CLASSES.clear()
        _WORLDS_CLASSES[key] = made
    return made


class WorldHandle:
    """One added world's store, for the length of the activation it was made in."""

    __slots__ = ("_activation", "_runtime")

    def __init__(self, runtime: HandledStore, activation: HandleActivation) -> None:
        self._runtime = runtime
        self._activation = activation

    def _live(self) -> HandledStore:
        activation = self._activation
        if not activation.alive or activation.thread != threading.get_ident():
            raise WorldBug(STALE_HANDLE)
        return self._runtime

    @overload
    def call(self, target: str, /, **arguments: Any) -> Any: ...
    @overload
    def call(
        self, target: Callable[Concatenate[Any, P], R], /, *args: P.args, **arguments: P.kwargs
    ) -> R: ...

    def call(self, target: Any, /, *args: Any, **arguments: Any) -> Any:
        """Run one of this world's tools: by its own unprefixed name, or by its function."""
        return self._activation.call(self._live(), target, args, arguments)

    @property
    def db(self) -> Db:
        """This node's ``Db``: a full read-write connection to its store."""
        runtime = self._live()
        self._activation.touch(runtime)
        return runtime.db

    @property
    def state(self) -> dict[str, Any]:
        """This node's own ``ctx.state``."""
        return self._live().state

    @property
    def worlds(self) -> Worlds:
        """This node's own children, for reaching a grandchild explicitly."""
        runtime = self._live()
        return runtime.worlds_type(runtime, self._activation)

    def __repr__(self) -> str:
        return f"WorldHandle({self._runtime.node.path!r})"


if TYPE_CHECKING:
    # A default makes a bare ``seahaven.Ctx`` mean ``Ctx[Worlds]``, so the common
    # spelling passes a strict type checker. Only checkers read it, so the runtime
    # needs no typing_extensions.
    from typing_extensions import TypeVar as _TypeVarWithDefault

    W = _TypeVarWithDefault("W", bound=Worlds, default=Worlds)
else:
    W = TypeVar("W", bound=Worlds)


class Ctx(ContextBase, Generic[W]):
    """Everything world code is given for one call, hook or bulk block."""

    __slots__ = ("call", "clock", "db", "ids", "instance", "state", "worlds")

    db: Db
    clock: Clock
    ids: Ids
    state: dict[str, Any]
    call: Call | None
    instance: InstanceInfo
    worlds: W

    def __init__(
        self,
        db: Db,
        clock: Clock,
        ids: Ids,
        state: dict[str, Any],
        call: Call | None,
        instance: InstanceInfo,
        worlds: W,
    ) -> None:
        self.db = db
        self.clock = clock
        self.ids = ids
        self.state = state
        self.call = call
        self.instance = instance
        self.worlds = worlds

    def __repr__(self) -> str:
        return f"Ctx(instance={self.instance.id!r}, call={self.call!r})"
