"""Seahaven: synthetic worlds for agent evals and reinforcement learning.

A world is a schema, the tools an agent calls, and the worlds it adds. An
instance is a private copy of a fixture for one run; its change log is what
an eval grades.
"""

from __future__ import annotations

from seahaven import (
    concurrency,
    sandbox,
    sql_tools,
)
from seahaven.changelog import CallRecord, LogRecord
from seahaven.clock import Clock, ClockMode
from seahaven.context import Ctx, InstanceInfo, WorldHandle, Worlds
from seahaven.db import Db, Exec
from seahaven.errors import (
    ArgumentError,
    DbError,
    SeahavenError,
    ToolError,
    UnknownTool,
    WorldBug,
)
from seahaven.fixtures import Fixture
from seahaven.hookspecs import hookimpl
from seahaven.ids import Ids
from seahaven.instance import Instance
from seahaven.instance_options import InstanceOptions
from seahaven.schema import sql_files
from seahaven.snapshot_store import SnapshotRefused, SnapshotStore, UnknownSnapshot
from seahaven.snapshots import Snapshot
from seahaven.tool import Call, Tool
from seahaven.version import VERSION as __version__
from seahaven.world import World

__all__ = [
    "ArgumentError",
    "Call",
    "CallRecord",
    "Clock",
    "ClockMode",
    "Ctx",
    "Db",
    "DbError",
    "Exec",
    "Fixture",
    "Ids",
    "Instance",
    "InstanceInfo",
    "InstanceOptions",
    "LogRecord",
    "SeahavenError",
    "Snapshot",
    "SnapshotRefused",
    "SnapshotStore",
    "Tool",
    "ToolError",
    "UnknownSnapshot",
    "UnknownTool",
    "World",
    "WorldBug",
    "WorldHandle",
    "Worlds",
    "__version__",
    "concurrency",
    "hookimpl",
    "sandbox",
    "sql_files",
    "sql_tools",
]


def __getattr__(name: str) -> object:
    # A module that moved or was split, read as an attribute of the package: warn, give the new.
    import importlib

    from seahaven.moved import MOVED, SPLIT, alias_module

    if f"{__name__}.{name}" in MOVED:
        module = alias_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if f"{__name__}.{name}" in SPLIT:
        # The old module's own file gathers the names and warns.
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
