"""Seahaven: synthetic worlds for agent evals and reinforcement learning.

A world is a schema, the tools an agent calls, and the worlds it adds. An
instance is a private copy of a fixture for one run; its change log is what
an eval grades.
"""

from __future__ import annotations

from seahaven import helpers, instances, sandbox, sql_tools
from seahaven.calls import concurrency
from seahaven.declaration.context import Ctx, InstanceInfo, WorldHandle, Worlds
from seahaven.declaration.instance_options import InstanceOptions
from seahaven.declaration.tool import Call, Tool
from seahaven.errors import (
    ArgumentError,
    DbError,
    SeahavenError,
    ToolError,
    UnknownTool,
    WorldBug,
)
from seahaven.fixtures import Fixture
from seahaven.instance import Instance
from seahaven.instance.snapshot_store import SnapshotRefused, SnapshotStore, UnknownSnapshot
from seahaven.instance.snapshots import Snapshot
from seahaven.registry.hookspecs import hookimpl
from seahaven.stores.changelog import CallRecord, LogRecord
from seahaven.stores.clock import Clock, ClockMode
from seahaven.stores.db import Db, Exec
from seahaven.stores.ids import Ids
from seahaven.stores.schema import sql_files
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
    "helpers",
    "hookimpl",
    "instances",
    "sandbox",
    "sql_files",
    "sql_tools",
]
