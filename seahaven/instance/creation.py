"""Making an instance: everything ``world.instance(...)`` does, in order, leaving nothing behind.

The parameters are checked and the fixture verified before any file is
touched; then the parts are assembled and handed to ``Instance``'s
constructor, the stores' files are copied or built, ``setup_sql`` runs, and
the startup hooks run with every node's transaction open. Anything that fails
on the way destroys the instance again, directory and all.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from seahaven.calls.activation import Activation, in_call
from seahaven.calls.concurrency import watch
from seahaven.calls.runtime import InstanceParts, link_children, open_store
from seahaven.calls.setup_sql import run_setup_sql
from seahaven.declaration.composition import Composition, Node, NodeReport
from seahaven.declaration.context import InstanceInfo
from seahaven.errors import WorldBug
from seahaven.fixtures.preparation import PreparedFixture, prepare
from seahaven.instance.instance import Instance, live_instances
from seahaven.stores.clock import Clock, ClockMode, check_clock_mode, format_instant, parse_instant
from seahaven.stores.ids import check_seed, derive_seed
from seahaven.stores.names import check_fixture_id
from seahaven.stores.schema import blank_image
from seahaven.stores.storage import check_storage, fixture_image
from seahaven.stores.workdir import instance_directory

if TYPE_CHECKING:
    from seahaven.declaration.composition import DeclaredWorld

__all__ = ["create_instance", "destroy_live_instances", "startup_order"]


def create_instance(
    world: DeclaredWorld,
    fixture: str | None,
    *,
    seed: int | None,
    now: Any,
    clock_mode: ClockMode | None,
    state_format: str | None,
    control_tools: bool,
    startup: Mapping[str, Any] | None,
    setup_sql: str | None,
    storage: str | None = None,
) -> Instance:
    """Everything ``world.instance(...)`` does, in order, leaving nothing behind on failure."""
    if in_call():
        raise WorldBug(
            "world.instance(...) was called from inside a call; reach an added world with "
            "ctx.worlds.<name>, and make instances in an eval or a test"
        )
    composition = world.composition()
    if fixture is not None:
        if type(fixture) is str:
            _check_fixture_id(fixture)
        else:
            check_fixture_id(fixture)
    caller_seed = check_seed(seed)
    mode = check_clock_mode(clock_mode if clock_mode is not None else world.default_clock_mode)
    format_name = state_format if state_format is not None else world.pinned_state_format
    world.resolve_state_format(format_name)
    if not isinstance(control_tools, bool):
        raise WorldBug("control_tools must be True or False")
    if setup_sql is not None and not isinstance(setup_sql, str):
        raise WorldBug("setup_sql must be a string of SQL statements, or None")
    where = check_storage(storage)
    caller_startup = _check_startup(composition, startup)
    plan = _plan(composition)
    prepared: PreparedFixture | None = prepare(world, composition, fixture) if fixture else None

    if now is not None:
        start_ms = parse_instant(now)
        if prepared is not None and start_ms < prepared.now_ms:
            raise WorldBug(
                f"now={format_instant(start_ms)} is earlier than fixture {fixture!r}'s now, "
                f"{prepared.fixture.now}; an instance cannot start before its rows were written"
            )
    elif prepared is not None:
        start_ms = prepared.now_ms
    else:
        start_ms = time.time_ns() // 1_000_000
    clock = Clock.starting_at(start_ms, mode)

    instance_seed = derive_seed(fixture if fixture is not None else world.name, caller_seed)
    # secrets.token_hex(8) without its two frames: the same eight bytes of os.urandom.
    info = InstanceInfo("inst-" + os.urandom(8).hex(), fixture, instance_seed)
    frozen = prepared.frozen_versions if prepared is not None else None
    reports = (
        tuple(
            replace(report, frozen_world_version=frozen.get(report.path)) for report in plan.reports
        )
        if frozen
        else plan.reports
    )
    instance = Instance(
        InstanceParts(
            info=info,
            world=world,
            clock=clock,
            state_format=format_name,
            setup_sql=setup_sql,
            control_tools=control_tools,
            caller_seed=caller_seed,
            startup=to_jsonable_python(caller_startup, fallback=str) if caller_startup else {},
            fixture_files=prepared.file_hashes if prepared is not None else None,
            reports=reports,
            directory=(
                instance_directory(world.name, world.work_dir, info.id) if where == "disk" else None
            ),
            storage=where,
        )
    )
    # From here, interrupt_all() reaches the statements it runs, setup_sql's included.
    watch(instance)
    try:
        _materialise(instance, composition, prepared)
        if setup_sql is not None:
            run_setup_sql(
                setup_sql,
                instance.calls.runtimes,
                clock=clock,
                seed=instance.seed,
                connections=instance.connections,
            )
        if plan.startup_order:
            _run_startup(instance, plan.startup_order, caller_startup)
        # An instance is idle until its first call: the pages its making read are given back
        # (most of what a store's connection holds), and the first call reads what it needs;
        # an episode that kept nothing holds no page to stop that.
        for runtime in instance.calls.runtimes:
            runtime.rest()
            runtime.conn.release_memory()
    except BaseException:
        instance.destroy()
        raise
    return instance


@functools.lru_cache(maxsize=256)
def _check_fixture_id(fixture: str) -> None:
    """``check_fixture_id``, remembered for the ids that passed: one is checked per instance."""
    check_fixture_id(fixture)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What making an instance works out from its sealed composition alone, once per sealing.

    A composition is sealed anew whenever a world registers anything (a tool, a
    startup hook), so what is kept here never outlives what it was worked out from.
    """

    # One report per node, root first, with no frozen world version.
    reports: tuple[NodeReport, ...]
    # The nodes in the order their startup hooks run; empty when no node has a hook.
    startup_order: tuple[Node, ...]


_plans: weakref.WeakKeyDictionary[Composition, _Plan] = weakref.WeakKeyDictionary()


def _plan(composition: Composition) -> _Plan:
    """The composition's ``_Plan``, its tables' primary keys checked the first time."""
    plan = _plans.get(composition)
    if plan is None:
        _check_primary_keys(composition)
        order = startup_order(composition)
        plan = _Plan(
            reports=tuple(composition.reports()),
            startup_order=tuple(order)
            if any(node.world.startup_hook_infos for node in order)
            else (),
        )
        _plans[composition] = plan
    return plan


def _check_startup(composition: Composition, startup: Mapping[str, Any] | None) -> dict[str, Any]:
    if startup is None:
        return {}
    if not isinstance(startup, Mapping):
        raise WorldBug("startup must be a mapping of the world's own startup keywords")
    keywords = dict(startup)
    for key in keywords:
        if not isinstance(key, str):
            raise WorldBug(f"startup keyword {key!r} is not a string")
    worlds = {id(node.world): node.world for node in composition.nodes}.values()
    if any(world.accepts_any_startup_keyword for world in worlds):
        return keywords
    accepted = frozenset().union(*(world.accepted_startup_kwargs for world in worlds))
    unknown = sorted(key for key in keywords if key not in accepted)
    if unknown:
        raise WorldBug(
            f"unknown startup keyword {', '.join(map(repr, unknown))} for world "
            f"{composition.root.name!r}; its startup hooks accept "
            f"{', '.join(sorted(accepted)) or 'no keywords'}"
        )
    return keywords


def _check_primary_keys(composition: Composition) -> None:
    for node in composition.nodes:
        info = node.world.schema_info
        for name, table in info.tracked(node.world.untracked_tables).items():
            if not table.primary_key:
                raise WorldBug(
                    f"table {name!r} of world {node.world.name!r} has no explicit primary key, so "
                    "the change log cannot record it; give it a PRIMARY KEY, or name it in "
                    "World(untracked_tables=...)"
                )


def _materialise(
    instance: Instance, composition: Composition, prepared: PreparedFixture | None
) -> None:
    """Every store of a new instance: from its fixture file, or its world's blank schema."""
    directory = instance.directory if instance.storage == "disk" else None

    def add(
        node: Node,
        image: bytes | None = None,
        copy_from: Path | None = None,
        run_schema: bool = False,
    ) -> None:
        instance.add_runtime(
            open_store(
                node,
                directory=directory,
                instance_seed=instance.seed,
                clock=instance.clock,
                info=instance.calls.info,
                connections=instance.connections,
                image=image,
                copy_from=copy_from,
                run_schema=run_schema,
                # Each image loaded here is the process's own, loaded by every instance.
                room=True,
            )
        )

    for node in composition.nodes:
        if prepared is not None:
            if directory is None:
                add(
                    node,
                    image=fixture_image(prepared.files[node.path], prepared.file_hashes[node.path]),
                )
            else:
                add(node, copy_from=prepared.files[node.path])
            continue
        # The schema built once per process and copied, as a fixture's file is; a schema
        # whose rows read the clock or random() has no such image, and runs on the store.
        blank = blank_image(node.world.name, node.world.schema)
        add(node, image=blank, run_schema=blank is None)
    link_children(instance.calls.runtimes)


def startup_order(composition: Composition) -> list[Node]:
    """Depth first from the root; a node shared by several worlds runs after every one of them."""
    visits: list[Node] = []

    def visit(node: Node) -> None:
        visits.append(node)
        for _, _, child in node.edges:
            visit(child)

    visit(composition.nodes[0])
    last = {node.index: position for position, node in enumerate(visits)}
    return sorted(composition.nodes, key=lambda node: last[node.index])


def _run_startup(
    instance: Instance, order: tuple[Node, ...], caller_startup: dict[str, Any]
) -> None:
    for node in order:
        available = {**caller_startup, **node.bound_startup}
        for hook in node.world.startup_hook_infos:
            missing = sorted(hook.required - set(available))
            if missing:
                raise WorldBug(
                    f"startup hook {getattr(hook.fn, '__qualname__', hook.fn)!r} of world "
                    f"{node.world.name!r} needs startup keyword {', '.join(map(repr, missing))}; "
                    f"pass startup={{{missing[0]!r}: ...}}"
                )
    runtimes = instance.calls.runtimes

    def hooks(activation: Activation) -> None:
        for node in order:
            runtime = runtimes[node.index]
            available = {**caller_startup, **node.bound_startup}
            for hook in node.world.startup_hook_infos:
                keywords = (
                    available
                    if hook.accepts_any
                    else {key: value for key, value in available.items() if key in hook.keywords}
                )
                hook.fn(activation.ctx(runtime, None), **keywords)

    instance.calls.run_startup(hooks)


@atexit.register
def destroy_live_instances() -> None:
    """Destroy every instance of this process not destroyed yet (at exit, and by an eval
    worker that stops through ``os._exit``, which runs no exit handler)."""
    for instance in list(live_instances):
        with contextlib.suppress(Exception):
            instance.destroy()
