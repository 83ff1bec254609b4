"""Sealing: from a root world and its ``add_world`` tree to nodes, paths and one tool surface.

It reads a world through ``DeclaredWorld``, the protocol of what the seal and
every layer above the declaration read of one, so nothing beneath ``World``
names it, even for types.

A node is one store, identified by (World object, scope). Its canonical path is
the shallowest route to it, ties broken by registration order; every other
route is an alias. The surface is flat and insertion-ordered: the root's own
tools, then each added world's contribution, filtered then prefixed. A world
that adds nothing seals to one node and its own tools, through this same code.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

import apsw

from seahaven.declaration.tool import Tool
from seahaven.errors import WorldBug
from seahaven.stores.clock import ClockMode
from seahaven.stores.names import RESERVED_TOOL_NAMES, check_tool_name
from seahaven.stores.schema import SchemaInfo

__all__ = [
    "Composition",
    "DeclaredAddition",
    "DeclaredStartupHook",
    "DeclaredWorld",
    "Node",
    "NodeReport",
    "SealError",
    "SurfaceEntry",
    "attach_limit",
    "seal",
]

ROOT_PATH = "main"


class DeclaredStartupHook(Protocol):
    """One startup hook of a world, as making an instance reads it (``StartupHookInfo``)."""

    @property
    def fn(self) -> Callable[..., None]:
        """The hook."""
        ...

    @property
    def keywords(self) -> frozenset[str]:
        """The startup keywords it names."""
        ...

    @property
    def required(self) -> frozenset[str]:
        """The startup keywords it requires."""
        ...

    @property
    def accepts_any(self) -> bool:
        """Whether it takes ``**kwargs``."""
        ...


class DeclaredAddition(Protocol):
    """One ``add_world`` call, as the seal reads it (``AddedWorld``)."""

    @property
    def world(self) -> DeclaredWorld:
        """The world added."""
        ...

    @property
    def name(self) -> str:
        """The name the adding world reaches it by."""
        ...

    @property
    def store(self) -> str | None:
        """The scope of its store, ``None`` for the world's own."""
        ...

    @property
    def tool_prefix(self) -> str | None:
        """The prefix its tools take on the surface."""
        ...

    @property
    def tool_allow_list(self) -> tuple[str, ...] | None:
        """The tools it contributes, when listed."""
        ...

    @property
    def tool_block_list(self) -> tuple[str, ...] | None:
        """The tools it does not contribute, when listed."""
        ...

    @property
    def startup(self) -> Mapping[str, Any]:
        """The startup keywords bound for it."""
        ...

    @property
    def origin(self) -> str:
        """Where the ``add_world`` call is: ``file.py:12``."""
        ...

    def describe(self) -> str:
        """How a message names this declaration."""
        ...


class DeclaredWorld(Protocol):
    """What the seal, the call path, the instance and fixtures read of a ``World``.

    ``World`` has every member; the layers beneath it name this protocol
    instead, so ``World`` can reach them (``World.instance()``) without a loop.
    """

    @property
    def name(self) -> str:
        """The world's name."""
        ...

    @property
    def version(self) -> str:
        """The world's version."""
        ...

    @property
    def schema(self) -> str:
        """The schema's SQL."""
        ...

    @property
    def schema_hash(self) -> str:
        """The schema's hash."""
        ...

    @property
    def schema_info(self) -> SchemaInfo:
        """The schema's tables, read once."""
        ...

    @property
    def untracked_tables(self) -> tuple[str, ...]:
        """The tables the change log leaves out."""
        ...

    @property
    def pinned_state_format(self) -> str:
        """The state format pinned at declaration."""
        ...

    @property
    def default_clock_mode(self) -> ClockMode:
        """The clock mode an instance gets when none is given."""
        ...

    @property
    def work_dir(self) -> Path | None:
        """Where its instances' directories go, ``None`` for the default."""
        ...

    @property
    def fixtures_dir(self) -> Path:
        """Where its fixtures live."""
        ...

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Its own tools by name."""
        ...

    @property
    def middlewares(self) -> tuple[Callable[..., Any], ...]:
        """Its middleware, outermost first."""
        ...

    @property
    def accepted_startup_kwargs(self) -> frozenset[str]:
        """Every startup keyword one of its hooks names."""
        ...

    @property
    def accepts_any_startup_keyword(self) -> bool:
        """Whether one of its hooks takes ``**kwargs``."""
        ...

    @property
    def startup_hook_infos(self) -> tuple[DeclaredStartupHook, ...]:
        """Its startup hooks, in order."""
        ...

    @property
    def added_worlds(self) -> tuple[DeclaredAddition, ...]:
        """Its ``add_world`` calls, in order."""
        ...

    def composition(self) -> Composition:
        """The sealed tree, sealed once."""
        ...

    def resolve_state_format(self, name: str) -> Callable[..., dict[str, Any]]:
        """The formatter of a state format, or a ``WorldBug`` naming the known ones."""
        ...


class SealError(WorldBug):
    """A tree that does not seal. ``declaration`` is the ``add_world`` to correct, when one is."""

    def __init__(self, message: str, declaration: DeclaredAddition | None = None) -> None:
        super().__init__(message)
        self.declaration = declaration


@dataclass(eq=False)
class Node:
    """One store of a composition: a (world, scope) pair and where it sits in the tree."""

    world: DeclaredWorld
    scope: str | None
    path: str
    index: int
    aliases: list[str] = field(default_factory=list)
    # (name, declaration, child) for every world this node's world adds, in order.
    edges: list[tuple[str, DeclaredAddition, Node]] = field(default_factory=list)
    bound_startup: dict[str, Any] = field(default_factory=dict)

    @property
    def is_root(self) -> bool:
        """Whether this node is the root's store."""
        return self.path == ROOT_PATH

    @property
    def file_name(self) -> str:
        """The node's state file: ``state.sqlite`` for the root, ``state.<path>.sqlite`` else."""
        if self.is_root:
            return "state.sqlite"
        return f"state.{self.schema_name}.sqlite"

    @property
    def schema_name(self) -> str:
        """The schema the node is attached under on an inspection connection."""
        return ROOT_PATH if self.is_root else self.path.replace("/", "__")

    @property
    def children(self) -> dict[str, Node]:
        """The nodes this node's world adds, by the name it added them under."""
        return {name: child for name, _, child in self.edges}

    def subtree(self) -> list[Node]:
        """This node and every node below it, each once, in depth-first order."""
        seen: dict[int, Node] = {}
        stack = [self]
        while stack:
            node = stack.pop()
            if node.index in seen:
                continue
            seen[node.index] = node
            stack.extend(child for _, _, child in reversed(node.edges))
        return list(seen.values())

    def __repr__(self) -> str:
        return f"Node({self.path!r}, world={self.world.name!r}, scope={self.scope!r})"


@dataclass(frozen=True, slots=True)
class SurfaceEntry:
    """One tool on the flat surface: its surface name, the tool, and the route to its owner."""

    name: str
    tool: Tool
    owner: Node
    # The nodes whose middleware a call descends, root first, owner last.
    route: tuple[Node, ...]
    # The add_world declarations the route passes through, outermost first.
    via: tuple[DeclaredAddition, ...] = ()

    def listing(self) -> dict[str, Any]:
        """The listing an agent sees: the owner's, under the surface name."""
        listed = self.tool.listing()
        listed["name"] = self.name
        return listed


@dataclass(frozen=True, slots=True)
class NodeReport:
    """One store an instance holds, as ``inst.composition()`` reports it."""

    path: str
    world: str
    world_version: str
    scope: str | None
    aliases: tuple[str, ...]
    schema_hash: str
    frozen_world_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The state document's entry for this node (keyed there by ``path``)."""
        return {
            "world": self.world,
            "world_version": self.world_version,
            "scope": self.scope,
            "aliases": list(self.aliases),
            "schema_hash": self.schema_hash,
            "frozen_world_version": self.frozen_world_version,
        }


class Composition:
    """A sealed tree: its nodes, root first, and the flat tool surface."""

    def __init__(self, root: DeclaredWorld, nodes: list[Node], surface: list[SurfaceEntry]) -> None:
        self.root = root
        self.nodes: tuple[Node, ...] = tuple(nodes)
        self.surface: tuple[SurfaceEntry, ...] = tuple(surface)
        self.by_name: Mapping[str, SurfaceEntry] = MappingProxyType(
            {entry.name: entry for entry in surface}
        )
        self.by_path: Mapping[str, Node] = MappingProxyType({node.path: node for node in nodes})

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The flat surface as listings: what ``inst.tools()`` serves."""
        return [entry.listing() for entry in self.surface]

    def reports(self) -> list[NodeReport]:
        """One report per node, root first."""
        return [
            NodeReport(
                path=node.path,
                world=node.world.name,
                world_version=node.world.version,
                scope=node.scope,
                aliases=tuple(node.aliases),
                schema_hash=node.world.schema_hash,
            )
            for node in self.nodes
        ]

    def __repr__(self) -> str:
        return f"Composition({self.root.name!r}, nodes={[node.path for node in self.nodes]})"


@functools.cache
def attach_limit() -> int:
    """How many databases SQLite here can attach to one connection, probed once."""
    conn = apsw.Connection(":memory:")
    try:
        return int(conn.limit(apsw.SQLITE_LIMIT_ATTACHED, -1))
    finally:
        conn.close()


def _join(parent: str, name: str) -> str:
    return name if parent == ROOT_PATH else f"{parent}/{name}"


def seal(root: DeclaredWorld) -> Composition:
    """Resolve ``root``'s tree, checking everything that is a property of the whole tree."""
    nodes = _resolve_nodes(root)
    limit = attach_limit()
    if len(nodes) - 1 > limit:
        raise WorldBug(
            f"world {root.name!r} has {len(nodes) - 1} added stores, and SQLite here can attach "
            f"at most {limit} to the inspection connection; remove a scope or an add_world "
            f"(the last one resolved is {nodes[-1].path!r})"
        )
    surface = _contribution(nodes[0], {})
    _check_unique(root, surface)
    return Composition(root, nodes, surface)


def _resolve_nodes(root: DeclaredWorld) -> list[Node]:
    """Breadth first, so the first route found to a node is its shallowest."""
    first = Node(world=root, scope=None, path=ROOT_PATH, index=0)
    by_key: dict[tuple[int, str | None], Node] = {(id(root), None): first}
    ordered = [first]
    bound_by: dict[tuple[int, str], DeclaredAddition] = {}
    queue = deque([first])
    while queue:
        parent = queue.popleft()
        for added in parent.world.added_worlds:
            scope = added.store if added.store is not None else parent.scope
            key = (id(added.world), scope)
            child = by_key.get(key)
            if child is None:
                child = Node(
                    world=added.world,
                    scope=scope,
                    path=_join(parent.path, added.name),
                    index=len(ordered),
                )
                by_key[key] = child
                ordered.append(child)
                queue.append(child)
            else:
                child.aliases.append(_join(parent.path, added.name))
            parent.edges.append((added.name, added, child))
            for keyword, value in added.startup.items():
                if keyword in child.bound_startup and child.bound_startup[keyword] != value:
                    earlier = bound_by[(child.index, keyword)]
                    raise SealError(
                        f"startup keyword {keyword!r} is bound to two values on node "
                        f"{child.path!r}: {child.bound_startup[keyword]!r} by "
                        f"{earlier.describe()} and {value!r} by {added.describe()}; bind one",
                        added,
                    )
                child.bound_startup[keyword] = value
                bound_by.setdefault((child.index, keyword), added)
    return ordered


def _contribution(node: Node, memo: dict[int, list[SurfaceEntry]]) -> list[SurfaceEntry]:
    """What ``node``'s world contributes, with routes relative to ``node``."""
    cached = memo.get(node.index)
    if cached is not None:
        return cached
    entries = [
        SurfaceEntry(name=tool.name, tool=tool, owner=node, route=(node,), via=())
        for tool in node.world.tools.values()
    ]
    for _name, added, child in node.edges:
        below = _contribution(child, memo)
        names = [entry.name for entry in below]
        for keyword, listed in (
            ("tool_allow_list", added.tool_allow_list),
            ("tool_block_list", added.tool_block_list),
        ):
            for item in listed or ():
                if item not in names:
                    raise SealError(
                        f"{added.describe()}: {keyword} names {item!r}, which world "
                        f"{added.world.name!r} does not contribute (it contributes: "
                        f"{', '.join(names) or 'nothing'})",
                        added,
                    )
        if added.tool_allow_list is not None:
            allowed = set(added.tool_allow_list)
            below = [entry for entry in below if entry.name in allowed]
        elif added.tool_block_list is not None:
            blocked = set(added.tool_block_list)
            below = [entry for entry in below if entry.name not in blocked]
        prefix = added.tool_prefix or ""
        for entry in below:
            published = prefix + entry.name
            if prefix:
                try:
                    check_tool_name(published, what="contributed tool name")
                except WorldBug as error:
                    raise SealError(
                        f"{added.describe()}: tool_prefix={prefix!r} turns {entry.name!r} into "
                        f"{error}",
                        added,
                    ) from None
            entries.append(
                SurfaceEntry(
                    name=published,
                    tool=entry.tool,
                    owner=entry.owner,
                    route=(node, *entry.route),
                    via=(added, *entry.via),
                )
            )
    _check_unique(node.world, entries)
    memo[node.index] = entries
    return entries


def _check_unique(world: DeclaredWorld, entries: list[SurfaceEntry]) -> None:
    seen: dict[str, SurfaceEntry] = {}
    for entry in entries:
        if entry.name in RESERVED_TOOL_NAMES:
            raise SealError(
                f"{_route_text(entry)} contributes the reserved tool name {entry.name!r}",
                entry.via[0] if entry.via else None,
            )
        earlier = seen.get(entry.name)
        if earlier is not None:
            raise SealError(
                f"two routes produce the tool name {entry.name!r} on the surface of world "
                f"{world.name!r}: {_route_text(earlier)} and {_route_text(entry)}; give one of the "
                "add_world calls a tool_prefix or a list",
                entry.via[0] if entry.via else None,
            )
        seen[entry.name] = entry


def _route_text(entry: SurfaceEntry) -> str:
    if not entry.via:
        return f"the tool {entry.tool.name!r} registered on world {entry.owner.world.name!r}"
    return f"{entry.tool.name!r} of world {entry.owner.world.name!r} via " + " -> ".join(
        added.describe() for added in entry.via
    )
