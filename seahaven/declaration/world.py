"""``World``: the declaration, and its four registration verbs.

A world holds its name, version and schema, and everything registered on it:
tools, middleware, startup hooks, state formats and the worlds it adds.
Registration validates at once and raises ``WorldBug`` naming what is wrong.
Every registration bumps one process-wide counter, which is how a sealed
composition knows it must seal again.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

from seahaven.declaration.composition import Composition, seal
from seahaven.declaration.context import Ctx
from seahaven.declaration.instance_options import instance_option_names
from seahaven.declaration.registration import (
    Registrations,
    StartupHookInfo,
    caller_origin,
    check_middleware,
    qualname,
    startup_hook_info,
    tool_list,
)
from seahaven.declaration.state_formats import BUILTIN_FORMATS
from seahaven.declaration.tool import Call, Tool
from seahaven.errors import WorldBug
from seahaven.fixtures.location import default_fixtures_dir
from seahaven.stores.clock import ClockMode, check_clock_mode
from seahaven.stores.names import (
    check_child_name,
    check_state_format_name,
    check_world_name,
)
from seahaven.stores.schema import SchemaInfo, build_schema

if TYPE_CHECKING:
    from seahaven.fixtures.sidecar import Fixture
    from seahaven.instance.instance import Instance
    from seahaven.stores.storage import Storage

__all__ = [
    "INSTANCE_OPTIONS",
    "AddedWorld",
    "Handler",
    "Middleware",
    "StartupHook",
    "StartupHookInfo",
    "StateFormatter",
    "World",
]

Handler: TypeAlias = Callable[[Ctx[Any], Call], Any]
"""The rest of the chain, as a middleware sees it: ``(ctx, call) -> result``."""

Middleware: TypeAlias = Callable[[Ctx[Any], Call, Handler], Any]
"""A middleware: ``(ctx, call, next_) -> result``."""

StartupHook: TypeAlias = Callable[..., None]
"""A startup hook: ``(ctx, **keywords) -> None``, its keywords spelled out."""

StateFormatter: TypeAlias = "Callable[[World, Instance | None], dict[str, Any]]"
"""A state format: ``(world, instance or None) -> the value of the document's state``."""

INSTANCE_OPTIONS: tuple[str, ...] = instance_option_names()
"""The keywords of ``World.instance()`` a caller in another process may set, in the order
messages list them: the fields of ``seahaven.InstanceOptions``; ``control_tools`` is left
to whoever runs the server."""

# A tool function, kept at its own type through ``@world.tool`` so typed calls stay typed.
_Fn = TypeVar("_Fn", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class AddedWorld:
    """What one ``add_world`` call recorded."""

    world: World
    name: str
    store: str | None
    tool_prefix: str | None
    tool_allow_list: tuple[str, ...] | None
    tool_block_list: tuple[str, ...] | None
    startup: Mapping[str, Any]
    origin: str = field(compare=False)

    def describe(self) -> str:
        """How a message names this declaration: ``add_world(name='x') at file.py:12``."""
        return f"add_world(name={self.name!r}) at {self.origin}"


class World:
    """A synthetic world: a schema, the tools an agent calls, and the worlds it adds."""

    def __init__(
        self,
        name: str,
        version: str,
        schema: str,
        *,
        state_format: str | None = None,
        default_clock_mode: ClockMode = "running",
        description: str | None = None,
        mcp_server_name: str | None = None,
        mcp_server_instructions: str | None = None,
        fixtures_dir: Path | str | None = None,
        work_dir: Path | str | None = None,
        untracked_tables: Sequence[str] = (),
    ) -> None:
        self._name = check_world_name(name)
        if not isinstance(version, str) or not version.strip():
            raise WorldBug(f"world {name!r}: version must be a non-empty string, such as '1.0.0'")
        self._version = version
        if not isinstance(schema, str):
            raise WorldBug(f"world {name!r}: schema must be SQL text, such as sql_files(...)")
        if state_format is None:
            raise WorldBug(
                f"world {name!r} pins no state format: pass state_format=, one of "
                f"{', '.join(BUILTIN_FORMATS)} or a format this world registers"
            )
        check_state_format_name(state_format)
        if state_format.startswith("seahaven.") and state_format not in BUILTIN_FORMATS:
            raise WorldBug(
                f"world {name!r}: {state_format!r} is not a format the framework publishes; "
                f"the built-in formats are {', '.join(BUILTIN_FORMATS)}"
            )
        self._pinned_state_format = state_format
        self._default_clock_mode: ClockMode = check_clock_mode(default_clock_mode)
        if description is not None and not isinstance(description, str):
            raise WorldBug(f"world {name!r}: description must be a string")
        self._description = description
        if mcp_server_name is not None:
            if not isinstance(mcp_server_name, str) or not mcp_server_name.strip():
                raise WorldBug(f"world {name!r}: mcp_server_name must not be blank")
            if len(mcp_server_name) > 128:
                raise WorldBug(
                    f"world {name!r}: mcp_server_name is {len(mcp_server_name)} characters; "
                    "the limit is 128"
                )
        self._mcp_server_name = mcp_server_name
        if mcp_server_instructions is not None and not isinstance(mcp_server_instructions, str):
            raise WorldBug(f"world {name!r}: mcp_server_instructions must be a string")
        self._mcp_server_instructions = mcp_server_instructions
        if isinstance(untracked_tables, str) or not all(
            isinstance(table, str) for table in untracked_tables
        ):
            raise WorldBug(
                f"world {name!r}: untracked_tables is a list of table names, not a bare string"
            )
        self._untracked_tables = tuple(untracked_tables)
        self._schema = schema
        self._schema_info: SchemaInfo = build_schema(name, schema)
        self._fixtures_dir_given = Path(fixtures_dir) if fixtures_dir is not None else None
        self._fixtures_dir_resolved: Path | None = None
        self._work_dir = Path(work_dir) if work_dir is not None else None
        self._origin_module = sys._getframe(1).f_globals.get("__name__", "__main__")
        self._origin_file = sys._getframe(1).f_globals.get("__file__")

        self._tools: dict[str, Tool] = {}
        self._middlewares: list[Callable[..., Any]] = []
        self._startup_hooks: list[StartupHookInfo] = []
        self._state_formats: dict[str, Callable[..., dict[str, Any]]] = {}
        self._added: list[AddedWorld] = []
        self._sealed: tuple[int, Composition] | None = None

    # --- read-only members ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The world's name, as given."""
        return self._name

    @property
    def version(self) -> str:
        """The world's version: its contract with every eval built on it."""
        return self._version

    @property
    def description(self) -> str | None:
        """The one-line description, as given."""
        return self._description

    @property
    def schema(self) -> str:
        """The schema SQL, as given."""
        return self._schema

    @property
    def schema_hash(self) -> str:
        """The hash of the normalised schema, recorded in every fixture."""
        return self._schema_info.hash

    @property
    def pinned_state_format(self) -> str:
        """The state format this world was constructed with."""
        return self._pinned_state_format

    @property
    def default_clock_mode(self) -> ClockMode:
        """The clock mode an instance gets when the caller names none."""
        return self._default_clock_mode

    @property
    def mcp_server_name(self) -> str:
        """The name the MCP handshake publishes: as given, or the world's name."""
        return self._mcp_server_name if self._mcp_server_name is not None else self._name

    @property
    def mcp_server_instructions(self) -> str | None:
        """The MCP instructions string, as given, or ``None``."""
        return self._mcp_server_instructions

    @property
    def untracked_tables(self) -> tuple[str, ...]:
        """Tables the change log does not record."""
        return self._untracked_tables

    @property
    def module(self) -> str:
        """The name of the module the world was declared in (``__main__`` for a script)."""
        return str(self._origin_module)

    @property
    def work_dir(self) -> Path | None:
        """Where instance directories go when given; ``None`` for the swept temp directory."""
        return self._work_dir

    @property
    def fixtures_dir(self) -> Path:
        """Where this world's fixtures live (see ``seahaven.fixtures``)."""
        if self._fixtures_dir_given is not None:
            return self._fixtures_dir_given
        if self._fixtures_dir_resolved is None:
            self._fixtures_dir_resolved = default_fixtures_dir(
                self._origin_module, self._origin_file
            )
        return self._fixtures_dir_resolved

    @fixtures_dir.setter
    def fixtures_dir(self, value: Path | str) -> None:
        self._fixtures_dir_given = Path(value)

    @property
    def tools(self) -> Mapping[str, Tool]:
        """This world's own tools by name, in registration order. Read-only."""
        return MappingProxyType(self._tools)

    @property
    def tools_by_fn(self) -> Mapping[Callable[..., Any], tuple[Tool, ...]]:
        """This world's own tools by the function each was built from."""
        by_fn: dict[Callable[..., Any], tuple[Tool, ...]] = {}
        for tool in self._tools.values():
            by_fn[tool.fn] = (*by_fn.get(tool.fn, ()), tool)
        return MappingProxyType(by_fn)

    @property
    def middlewares(self) -> tuple[Callable[..., Any], ...]:
        """The middleware, outermost first."""
        return tuple(self._middlewares)

    @property
    def startup_hooks(self) -> tuple[Callable[..., None], ...]:
        """The startup hooks, in registration order."""
        return tuple(hook.fn for hook in self._startup_hooks)

    @property
    def accepted_startup_kwargs(self) -> frozenset[str]:
        """Every startup keyword some hook of this world names."""
        return frozenset().union(*(hook.keywords for hook in self._startup_hooks))

    @property
    def state_formats(self) -> tuple[str, ...]:
        """The names of the state formats this world registers, without the built-ins."""
        return tuple(self._state_formats)

    @property
    def added_worlds(self) -> tuple[AddedWorld, ...]:
        """What ``add_world`` recorded, in registration order."""
        return tuple(self._added)

    @property
    def schema_info(self) -> SchemaInfo:
        """The built schema: its hash and every table SQLite reports."""
        return self._schema_info

    @property
    def startup_hook_infos(self) -> tuple[StartupHookInfo, ...]:
        """Each startup hook with the keywords it takes, in registration order."""
        return tuple(self._startup_hooks)

    @property
    def accepts_any_startup_keyword(self) -> bool:
        """Whether some startup hook takes ``**keywords``, and so any keyword at all."""
        return any(hook.accepts_any for hook in self._startup_hooks)

    # --- registration ----------------------------------------------------------------------------

    @overload
    def tool(self, obj: Tool, /) -> Tool: ...
    @overload
    def tool(
        self,
        obj: _Fn,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        transaction: bool | None = None,
    ) -> _Fn: ...
    @overload
    def tool(
        self,
        obj: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        transaction: bool | None = None,
    ) -> Callable[[_Fn], _Fn]: ...

    def tool(
        self,
        obj: Any = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        transaction: bool | None = None,
    ) -> Any:
        """Register a tool, as ``@world.tool``, ``@world.tool(...)`` or ``world.tool(built)``."""
        if obj is None:

            def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
                self.tool(fn, name=name, description=description, transaction=transaction)
                return fn

            return decorate
        if isinstance(obj, Tool):
            given = [
                keyword
                for keyword, value in (
                    ("name", name),
                    ("description", description),
                    ("transaction", transaction),
                )
                if value is not None
            ]
            if given:
                raise WorldBug(
                    f"world.tool({obj.name!r}) was given {', '.join(given)} beside a built Tool; "
                    "the factory that built it decides those, so pass them to the factory"
                )
            built = obj
        else:
            built = Tool.from_function(
                obj,
                name=name,
                description=description,
                transaction=True if transaction is None else transaction,
            )
        if built.control:
            raise WorldBug(f"tool {built.name!r} is a control tool; only the framework makes those")
        existing = self._tools.get(built.name)
        if existing is not None:
            raise WorldBug(
                f"world {self._name!r} already has a tool named {built.name!r} "
                f"(from {qualname(existing.fn)}); give one of them another name"
            )
        self._tools[built.name] = built
        Registrations.bump()
        return obj

    def middleware(self, obj: Any = None, /) -> Any:
        """Register a middleware ``(ctx, call, next_)``, as a decorator or a call."""
        if obj is None:
            return self.middleware
        check_middleware(obj)
        self._middlewares.append(obj)
        Registrations.bump()
        return obj

    def instance_startup(self, obj: Any = None, /) -> Any:
        """Register a startup hook ``(ctx, *, keyword=...)``, as a decorator or a call."""
        if obj is None:
            return self.instance_startup
        self._startup_hooks.append(startup_hook_info(obj))
        Registrations.bump()
        return obj

    def state_format(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a state format of this world's own, as ``@world.state_format("x.y/1")``."""
        check_state_format_name(name)
        if name.startswith("seahaven."):
            raise WorldBug(
                f"state format {name!r}: the 'seahaven.' prefix is reserved for the "
                f"framework's own formats ({', '.join(BUILTIN_FORMATS)})"
            )
        if name in self._state_formats:
            raise WorldBug(f"world {self._name!r} already registers a state format {name!r}")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if not callable(fn):
                raise WorldBug(f"state format {name!r} must be a function (world, instance)")
            try:
                inspect.signature(fn).bind(None, None)
            except (TypeError, ValueError):
                raise WorldBug(
                    f"state format {name!r}: {qualname(fn)} cannot be called as (world, instance)"
                ) from None
            if name in self._state_formats:
                raise WorldBug(f"world {self._name!r} already registers a state format {name!r}")
            self._state_formats[name] = fn
            return fn

        return register

    def resolve_state_format(self, name: str) -> Callable[..., dict[str, Any]]:
        """The formatter ``name`` answers to: a built-in, or one this world registered."""
        if name in BUILTIN_FORMATS:
            return BUILTIN_FORMATS[name]
        registered = self._state_formats.get(name)
        if registered is None:
            known = [*BUILTIN_FORMATS, *self._state_formats]
            raise WorldBug(
                f"world {self._name!r} has no state format {name!r}; it answers in "
                f"{', '.join(known)}"
            )
        return registered

    def add_world(
        self,
        world: World,
        /,
        *,
        name: str | None = None,
        store: str | None = None,
        tool_prefix: str | None = None,
        tool_allow_list: Sequence[str] | None = None,
        tool_block_list: Sequence[str] | None = None,
        startup: Mapping[str, Any] | None = None,
    ) -> None:
        """Add another world: its tools join this surface, its store joins every instance."""
        if not isinstance(world, World):
            raise WorldBug(f"add_world takes a seahaven.World, not {type(world).__name__}")
        child_name = check_child_name(world.name if name is None else name)
        if any(added.name == child_name for added in self._added):
            raise WorldBug(
                f"world {self._name!r} already adds a world named {child_name!r}; "
                "give this one another name="
            )
        if store is not None and (
            not isinstance(store, str) or not store.strip() or store != store.strip()
        ):
            raise WorldBug(
                f"add_world(name={child_name!r}): store={store!r} is not a scope name; pass a "
                "name such as 'eu', or None to share the adder's store"
            )
        if tool_prefix is not None and not isinstance(tool_prefix, str):
            raise WorldBug(f"add_world(name={child_name!r}): tool_prefix must be a string")
        if tool_allow_list is not None and tool_block_list is not None:
            raise WorldBug(
                f"add_world(name={child_name!r}) gives both tool_allow_list and tool_block_list; "
                "give one of them"
            )
        allow = tool_list(child_name, "tool_allow_list", tool_allow_list)
        block = tool_list(child_name, "tool_block_list", tool_block_list)
        if not isinstance(startup, Mapping | None):
            raise WorldBug(f"add_world(name={child_name!r}): startup must be a mapping")
        bound = dict(startup or {})
        if not world.accepts_any_startup_keyword:
            accepted = world.accepted_startup_kwargs
            unknown = sorted(key for key in bound if key not in accepted)
            if unknown:
                raise WorldBug(
                    f"add_world(name={child_name!r}) binds startup keyword "
                    f"{', '.join(map(repr, unknown))}, which no startup hook of world "
                    f"{world.name!r} accepts (they accept: {', '.join(sorted(accepted)) or 'none'})"
                )
        if world is self or self in world._tree():
            raise WorldBug(
                f"add_world(name={child_name!r}): world {world.name!r} already contains "
                f"{self._name!r} in its tree, so adding it would make a cycle"
            )
        self._added.append(
            AddedWorld(
                world=world,
                name=child_name,
                store=store,
                tool_prefix=tool_prefix,
                tool_allow_list=allow,
                tool_block_list=block,
                startup=MappingProxyType(bound),
                origin=caller_origin(),
            )
        )
        Registrations.bump()

    def _tree(self) -> Iterator[World]:
        """Every world this one adds, at any depth."""
        seen: set[int] = set()
        stack = [added.world for added in self._added]
        while stack:
            world = stack.pop()
            if id(world) in seen:
                continue
            seen.add(id(world))
            yield world
            stack.extend(added.world for added in world._added)

    # --- using the world -----------------------------------------------------------------------

    def composition(self) -> Composition:
        """The sealed tree: nodes, paths and the flat tool surface. Cached until a registration."""
        sealed = self._sealed
        if sealed is not None and sealed[0] == Registrations.generation:
            return sealed[1]
        generation = Registrations.generation
        composition = seal(self)
        self._sealed = (generation, composition)
        return composition

    def instance(
        self,
        fixture: str | None = None,
        *,
        seed: int | None = None,
        now: Any = None,
        clock_mode: ClockMode | None = None,
        state_format: str | None = None,
        control_tools: bool = False,
        startup: Mapping[str, Any] | None = None,
        setup_sql: str | None = None,
        storage: Storage | None = None,
    ) -> Instance:
        """Make an instance: a private copy of a fixture, or a blank one. A context manager.

        ``storage`` is where its stores live: ``"disk"`` (one file per node in
        the instance's directory, which an outside tool can open) or ``"memory"``
        (nothing on disk, and faster); ``None`` takes ``SEAHAVEN_STORAGE``, else
        disk. The runners that make instances for themselves (trials, evals,
        episodes, servers) default to memory instead: see ``seahaven.storage``.
        """
        from seahaven.instance.creation import create_instance

        return create_instance(
            self,
            fixture,
            seed=seed,
            now=now,
            clock_mode=clock_mode,
            state_format=state_format,
            control_tools=control_tools,
            startup=startup,
            setup_sql=setup_sql,
            storage=storage,
        )

    def fixtures(self) -> list[Fixture]:
        """Every fixture in this world's fixtures directory, sorted by id."""
        from seahaven.fixtures.listing import world_fixtures

        return world_fixtures(self)

    def __copy__(self) -> World:
        clone = object.__new__(World)
        clone.__dict__.update(self.__dict__)
        clone._tools = dict(self._tools)
        clone._middlewares = list(self._middlewares)
        clone._startup_hooks = list(self._startup_hooks)
        clone._state_formats = dict(self._state_formats)
        clone._added = list(self._added)
        clone._sealed = None
        return clone

    def __repr__(self) -> str:
        return f"World({self._name!r}, version={self._version!r})"
