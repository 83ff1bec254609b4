"""Serving Seahaven worlds over OpenEnv; imported as ``seahaven.openenv``.

``app(world)`` is the ASGI app a world's ``openenv_app.py`` exposes;
``serve.serve(world, ...)`` runs it under uvicorn; ``SeahavenClient`` drives
it; ``trial_runner(url)`` runs ``seahaven eval``'s trials against a served
world. The client and the typed models import OpenEnv, which takes seconds, so
they load on first use: a server that only serves never pays for them, and the server
(FastAPI, uvicorn) loads on first use too, so a client never pays for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seahaven_openenv import serve
    from seahaven_openenv.clients.client import SeahavenClient
    from seahaven_openenv.clients.environment import SeahavenEnv
    from seahaven_openenv.clients.errors import AtCapacity, ServerError, SessionLost
    from seahaven_openenv.clients.harness import ScenarioSessions
    from seahaven_openenv.clients.models import (
        CallToolAction,
        FileRef,
        FixtureRef,
        ListToolsAction,
        ListToolsObservation,
        NodeRef,
        SeahavenObservation,
        SeahavenState,
        WorldRef,
    )
    from seahaven_openenv.clients.remote import RemoteSession, trial_runner
    from seahaven_openenv.web.server import app, app_for_worlds

__all__ = [
    "AtCapacity",
    "CallToolAction",
    "FileRef",
    "FixtureRef",
    "ListToolsAction",
    "ListToolsObservation",
    "NodeRef",
    "RemoteSession",
    "ScenarioSessions",
    "SeahavenClient",
    "SeahavenEnv",
    "SeahavenObservation",
    "SeahavenState",
    "ServerError",
    "SessionLost",
    "WorldRef",
    "app",
    "app_for_worlds",
    "serve",
    "trial_runner",
]

# Every name loads on first use, so importing ``seahaven.openenv`` costs nearly nothing: the
# server (FastAPI, uvicorn) is imported by what serves, and the client (OpenEnv's models,
# websockets) by what connects, neither by the other.
_LAZY = {
    "app": "seahaven_openenv.web.server",
    "app_for_worlds": "seahaven_openenv.web.server",
    "SeahavenClient": "seahaven_openenv.clients.client",
    "SessionLost": "seahaven_openenv.clients.errors",
    "AtCapacity": "seahaven_openenv.clients.errors",
    "ServerError": "seahaven_openenv.clients.errors",
    "SeahavenEnv": "seahaven_openenv.clients.environment",
    "RemoteSession": "seahaven_openenv.clients.remote",
    "ScenarioSessions": "seahaven_openenv.clients.harness",
    "trial_runner": "seahaven_openenv.clients.remote",
    "CallToolAction": "seahaven_openenv.clients.models",
    "FileRef": "seahaven_openenv.clients.models",
    "FixtureRef": "seahaven_openenv.clients.models",
    "ListToolsAction": "seahaven_openenv.clients.models",
    "ListToolsObservation": "seahaven_openenv.clients.models",
    "NodeRef": "seahaven_openenv.clients.models",
    "SeahavenObservation": "seahaven_openenv.clients.models",
    "SeahavenState": "seahaven_openenv.clients.models",
    "WorldRef": "seahaven_openenv.clients.models",
}


def __getattr__(name: str) -> Any:
    if name == "serve":
        # A module of this package: importing it sets the attribute, as ``import`` does.
        return importlib.import_module("seahaven_openenv.serve")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'seahaven.openenv' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
