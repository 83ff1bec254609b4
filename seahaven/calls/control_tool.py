"""The deprecated control tool, ``controller_run_sql``: read-only SQL over every store.

Kept in a module of its own so that removing it is deleting this file and the
few lines that make one when ``control_tools=True``. It runs on a reader of
its own (opened the first time it is used), held to the
sandbox's limits, and warns on every use.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import apsw

import seahaven.sandbox as sandbox
from seahaven.calls.readers import ReaderDb, open_reader
from seahaven.errors import ArgumentError
from seahaven.stores.db import Connections

if TYPE_CHECKING:
    from seahaven.calls.runtime import NodeRuntime
    from seahaven.declaration.context import InstanceInfo
    from seahaven.stores.clock import Clock

__all__ = ["ControlTool"]


class ControlledCalls(Protocol):
    """The owner of an instance's calls, as the control tool reads it (``Calls``)."""

    @property
    def lock(self) -> threading.RLock:
        """The instance's lock."""
        ...

    @property
    def runtimes(self) -> Sequence[NodeRuntime]:
        """Every store's runtime, root first."""
        ...

    @property
    def clock(self) -> Clock:
        """The instance's clock."""
        ...

    @property
    def info(self) -> InstanceInfo:
        """The instance's id, fixture and seed."""
        ...

    def check_usable(self) -> None:
        """Refuse use of a destroyed or broken instance."""
        ...


class ControlTool:
    """The control tool of one instance: its reader, opened on first use, and its view."""

    __slots__ = ("_connections", "_db")

    def __init__(self, connections: Connections) -> None:
        # The instance's connections, which the reader joins so that closing them closes it.
        self._connections = connections
        self._db: ReaderDb | None = None

    def __call__(self, calls: ControlledCalls, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run the query in ``arguments`` on a reader of every store; answer its rows."""
        warnings.warn(
            "the control tool is deprecated; read inst.state() instead",
            DeprecationWarning,
            stacklevel=4,
        )
        query = arguments.get("query")
        if set(arguments) != {"query"} or not isinstance(query, str):
            raise ArgumentError(
                "controller_run_sql", [{"loc": ["query"], "msg": "a SQL string", "type": "string"}]
            )
        with calls.lock:
            calls.check_usable()
            if self._db is None:
                self._db = open_reader(
                    calls.runtimes,
                    calls.clock,
                    calls.info.seed,
                    self._connections,
                    "control",
                    calls.lock,
                )
            self._db.sync()
            result = sandbox.run_statement(self._db, query, authorizer=_authorizer(calls.runtimes))
            return {
                "columns": result.columns,
                "rows": result.to_dict()["rows"],
                "row_count": result.row_count,
            }

    def reader(self) -> apsw.Connection | None:
        """The reader's connection, if it was opened; the instance closes it, then forgets it."""
        db, self._db = self._db, None
        return None if db is None else db.conn


def _authorizer(runtimes: Sequence[NodeRuntime]) -> sandbox.Authorizer:
    """Every table of every store, read-only: the control tool's view, as inspect() has."""
    tables = [
        f"{runtime.node.schema_name}.{name}"
        for runtime in runtimes
        for name in runtime.node.world.schema_info.tables
    ]
    return sandbox.Authorizer(tables, read_only=True, pragmas=sandbox.REPORTING_PRAGMAS)
