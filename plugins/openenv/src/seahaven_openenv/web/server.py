"""The ASGI app factory: ``app`` serves one world over OpenEnv, ``app_for_worlds`` several.

One app serves one world at its root, or several worlds each under
``/worlds/<name>/``. A world may be served with a pack of scenarios
(``scenarios=``): OpenEnv's Task API lists its tasks, and a reset's ``split``
and ``index`` pick one. What the sessions share is a ``SessionPool``
(``seahaven_openenv.sessions.session_pool``), kept as ``app.state.hub``; the routes are
``seahaven_openenv.web.routes``'s and a ``/ws`` connection is
``seahaven_openenv.front.connection``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError

import seahaven
from seahaven.errors import WorldBug
from seahaven.scenarios import SUBMIT_TOOL, ScenarioSet
from seahaven_openenv.front.guard import Guard, GuardMiddleware
from seahaven_openenv.sessions import admission, descriptors, resume, session_pool, snapframes
from seahaven_openenv.sessions.session import WorldService
from seahaven_openenv.web import card, routes
from seahaven_openenv.wire.tasks import packs_for

__all__ = ["app", "app_for_worlds", "capacity_for"]

_log = logging.getLogger("seahaven.openenv")


def app(
    world: seahaven.World,
    *,
    scenarios: ScenarioSet | str | None = None,
    include_control_tools: bool = False,
    max_concurrent_envs: int | None = None,
    session_timeout: float | None = None,
    resume_grace: float = resume.DEFAULT_RESUME_GRACE_SECONDS,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    snapshot_limit: int = snapframes.DEFAULT_SNAPSHOT_LIMIT,
    snapshot_memory: float = snapframes.DEFAULT_SNAPSHOT_MEMORY_MB,
    snapshot_age: float = snapframes.DEFAULT_SNAPSHOT_AGE_SECONDS,
    admission_queue: int = admission.DEFAULT_ADMISSION_QUEUE,
    admission_wait: float = admission.DEFAULT_ADMISSION_WAIT_SECONDS,
    retry_after: int = admission.DEFAULT_RETRY_AFTER_SECONDS,
) -> FastAPI:
    """The ASGI app serving ``world`` over OpenEnv: ``/ws``, ``/health``, ``/schema``, ....

    ``scenarios`` is a pack of the world's scenarios (a ``ScenarioSet``, an installed
    pack's name, or ``module:attr``) for OpenEnv's Task API and ``reset(split=...,
    index=...)``. ``allowed_hosts`` and ``allowed_origins`` are the names and browser
    origins it answers besides its own (``seahaven_openenv.front.guard`` says which those are).
    ``resume_grace`` is how long a ``/ws`` session outlives a dropped connection, waiting
    for its client to resume it (``seahaven_openenv.sessions.resume``); 0 turns resume off.
    ``snapshot_limit``, ``snapshot_memory`` (MiB) and ``snapshot_age`` (seconds) bound
    the snapshots ``snapshot`` frames keep (``seahaven_openenv.sessions.snapframes``).
    Past capacity a new ``/ws`` connection waits for a seat in a queue of at most
    ``admission_queue`` connections, for at most ``admission_wait`` seconds; one
    refused is told to retry after ``retry_after`` seconds (``sessions.admission``).
    """
    return app_for_worlds(
        [world],
        scenarios=None if scenarios is None else [scenarios],
        include_control_tools=include_control_tools,
        max_concurrent_envs=max_concurrent_envs,
        session_timeout=session_timeout,
        resume_grace=resume_grace,
        console=console,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        snapshot_limit=snapshot_limit,
        snapshot_memory=snapshot_memory,
        snapshot_age=snapshot_age,
        admission_queue=admission_queue,
        admission_wait=admission_wait,
        retry_after=retry_after,
    )


def app_for_worlds(
    worlds: Sequence[seahaven.World],
    *,
    scenarios: Sequence[ScenarioSet | str] | None = None,
    include_control_tools: bool = False,
    max_concurrent_envs: int | None = None,
    session_timeout: float | None = None,
    resume_grace: float = resume.DEFAULT_RESUME_GRACE_SECONDS,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    snapshot_limit: int = snapframes.DEFAULT_SNAPSHOT_LIMIT,
    snapshot_memory: float = snapframes.DEFAULT_SNAPSHOT_MEMORY_MB,
    snapshot_age: float = snapframes.DEFAULT_SNAPSHOT_AGE_SECONDS,
    admission_queue: int = admission.DEFAULT_ADMISSION_QUEUE,
    admission_wait: float = admission.DEFAULT_ADMISSION_WAIT_SECONDS,
    retry_after: int = admission.DEFAULT_RETRY_AFTER_SECONDS,
) -> FastAPI:
    """One app for several worlds, each under ``/worlds/<name>/``; a lone world also at the root.

    ``scenarios`` are packs (or their names), each served beside the world its
    scenarios run on: one pack a world.
    """
    if not worlds:
        raise WorldBug("serve at least one world")
    for world in worlds:
        if not isinstance(world, seahaven.World):
            raise WorldBug(f"app() serves seahaven.World objects, not {type(world).__name__}")
    names = [world.name for world in worlds]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise WorldBug(f"world {duplicates[0]!r} is named twice; serve each world once")
    guard = Guard.build(allowed_hosts, allowed_origins)
    for world in worlds:
        # Seal now, so a world that does not compose fails at start-up, not on a first reset.
        world.composition()
    packs = packs_for(worlds, scenarios)
    for world in worlds:
        if world.name in packs and SUBMIT_TOOL in {e.name for e in world.composition().surface}:
            raise WorldBug(
                f"world {world.name!r} has a tool named {SUBMIT_TOOL!r}, which a scenario adds to "
                "end its episode; rename the world's tool to serve it with a pack"
            )
    hub = session_pool.SessionPool(
        max_concurrent_envs=capacity_for(worlds, max_concurrent_envs),
        session_timeout=session_timeout,
        resume_grace=resume_grace,
        snapshots=snapframes.WireSnapshots(
            max_count=snapshot_limit, max_mb=snapshot_memory, max_age=snapshot_age
        ),
        admission_queue=admission_queue,
        admission_wait=admission_wait,
        retry_after=retry_after,
    )
    services = [
        WorldService(
            world,
            include_control_tools=include_control_tools,
            pack=packs.get(world.name),
            packs={served.name: served.pack for served in packs.values()},
        )
        for world in worlds
    ]
    title = services[0].name if len(services) == 1 else "Seahaven worlds"
    application = FastAPI(
        title=title,
        version=worlds[0].version if len(worlds) == 1 else seahaven.__version__,
        description=card.description(worlds[0]) if len(worlds) == 1 else ", ".join(names),
        lifespan=hub.lifespan,
    )
    # A body that does not validate is answered with every echo bounded, never a 500.
    application.add_exception_handler(RequestValidationError, routes.validation_refusal)
    application.state.hub = hub
    application.state.services = {service.name: service for service in services}
    application.state.packs = {name: served.pack for name, served in packs.items()}
    application.include_router(routes.worlds_router(services, console=console))
    if len(services) == 1:
        application.include_router(routes.world_router(services[0], hub, console=console))
    else:
        application.include_router(routes.index_router(services, hub, console=console))
    for service in services:
        application.include_router(
            routes.world_router(service, hub, console=console), prefix=f"/worlds/{service.name}"
        )
    # Outermost first: the guard refuses foreign hosts and origins before anything runs.
    application.add_middleware(routes.AnswerHead)
    application.add_middleware(GuardMiddleware, guard=guard)
    return application


def capacity_for(worlds: Sequence[seahaven.World], chosen: int | None) -> int:
    """The server's capacity: ``chosen``, or as many sessions as its descriptors hold, up to 500.

    The process's soft limit on open files is raised as far as it may go first.
    A chosen capacity past what the descriptors hold is kept, with a warning: a
    reset that finds none left is answered ``CAPACITY_REACHED``.
    """
    limit = descriptors.raise_soft_limit()
    if limit is None:
        return session_pool.DEFAULT_MAX_CONCURRENT_ENVS if chosen is None else chosen
    each = descriptors.per_session(worlds)
    fit = descriptors.sessions_that_fit(limit, each)
    if chosen is None:
        return min(session_pool.DEFAULT_MAX_CONCURRENT_ENVS, fit)
    if chosen > fit:
        _log.warning(
            "max_concurrent_envs is %d, but at this process's limit of %d open files about %d "
            "sessions fit (%d descriptors each); resets past that answer CAPACITY_REACHED",
            chosen,
            limit,
            fit,
            each,
        )
    return chosen
