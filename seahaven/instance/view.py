"""``InstanceView``: what the modules an ``Instance`` delegates to read of one.

The state document, freezing a fixture and snapshots are reached from the
instance's own methods (``Instance.state``, ``Instance.freeze``,
``Instance.snapshot``), so they read the instance through this protocol rather
than naming ``Instance``: the imports, type-checking ones included, form no
loop. ``Instance`` has every member; they are its public reads and the
interface it documents for the framework (``calls``, ``connections``,
``add_runtime``, ``caller_seed``, ``startup``, ``fixture_files``, ``remake``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from seahaven.calls.dispatch import Calls
    from seahaven.calls.runtime import InstanceParts, NodeRuntime
    from seahaven.declaration.composition import DeclaredWorld, NodeReport
    from seahaven.stores.clock import Clock
    from seahaven.stores.db import Connections
    from seahaven.stores.storage import Storage

__all__ = ["InstanceView"]


class InstanceView(Protocol):
    """An instance as the framework's own modules read it."""

    calls: Calls

    @property
    def id(self) -> str:
        """The instance's id."""
        ...

    @property
    def fixture(self) -> str | None:
        """The fixture it was made from, ``None`` for blank."""
        ...

    @property
    def seed(self) -> bytes:
        """Its seed."""
        ...

    @property
    def world(self) -> DeclaredWorld:
        """The world it is an instance of."""
        ...

    @property
    def clock(self) -> Clock:
        """Its clock."""
        ...

    @property
    def storage(self) -> Storage:
        """Where its stores are: ``memory`` or ``disk``."""
        ...

    @property
    def directory(self) -> Path:
        """Its directory (stores on disk only)."""
        ...

    @property
    def state_format(self) -> str:
        """The state format its document is written in."""
        ...

    @property
    def setup_sql(self) -> str | None:
        """The ``setup_sql`` it was made with."""
        ...

    @property
    def control_tools(self) -> bool:
        """Whether the control tool is on."""
        ...

    @property
    def call_count(self) -> int:
        """How many calls it has recorded."""
        ...

    @property
    def connections(self) -> Connections:
        """Its connections, closed and interrupted under one lock."""
        ...

    @property
    def caller_seed(self) -> int | None:
        """The ``seed=`` it was made with."""
        ...

    @property
    def startup(self) -> Any:
        """The startup keywords it was made with, as JSON values."""
        ...

    @property
    def fixture_files(self) -> dict[str, str] | None:
        """The fixture's file hashes by store path, ``None`` for blank."""
        ...

    def composition(self) -> list[NodeReport]:
        """One report per store, root first."""
        ...

    def add_runtime(self, runtime: NodeRuntime) -> None:
        """Add a store's runtime while the instance is being made."""
        ...

    def remake(self, parts: InstanceParts) -> None:
        """Take new parts whole, as a restore in place does."""
        ...

    def destroy(self) -> None:
        """Close and remove the instance."""
        ...
