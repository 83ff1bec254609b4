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
    from seahaven_openenv.client import AtCapacity, SeahavenClient, ServerError, SessionLost
    from seahaven_openenv.environment import SeahavenEnv
    from seahaven_openenv.harness import ScenarioSessions
    from seahaven_openenv.models import (
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
    from seahaven_openenv.remote import RemoteSession, trial_runner
    from seahaven_openenv.server import app, app_for_worlds

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
    "app": "seahaven_openenv.server",
    "app_for_worlds": "seahaven_openenv.server",
    "SeahavenClient": "seahaven_openenv.client",
    "SessionLost": "seahaven_openenv.client",
    "AtCapacity": "seahaven_openenv.client",
    "ServerError": "seahaven_openenv.client",
    "SeahavenEnv": "seahaven_openenv.environment",
    "RemoteSession": "seahaven_openenv.remote",
    "ScenarioSessions": "seahaven_openenv.harness",
    "trial_runner": "seahaven_openenv.remote",
    "CallToolAction": "seahaven_openenv.models",
    "FileRef": "seahaven_openenv.models",
    "FixtureRef": "seahaven_openenv.models",
    "ListToolsAction": "seahaven_openenv.models",
    "ListToolsObservation": "seahaven_openenv.models",
    "NodeRef": "seahaven_openenv.models",
    "SeahavenObservation": "seahaven_openenv.models",
    "SeahavenState": "seahaven_openenv.models",
    "WorldRef": "seahaven_openenv.models",
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
