"""``CallsOwner``: the owner of an instance's calls, as the steps and blocks it delegates to see it.

``Calls`` (``seahaven.calls.dispatch``) hands itself to ``call_steps`` (the
steps of a call inside ``bulk()``) and ``blocks`` (``bulk()``, ``acting_as()``,
``record_net()``, startup), which it imports; they read and set it through this
protocol instead of naming ``Calls``, so the imports, type-checking ones
included, form no loop. ``Calls`` has every member.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

from seahaven.calls.activation import NestedCalls
from seahaven.stores.names import SETUP

if TYPE_CHECKING:
    from seahaven.calls.activation import Activation
    from seahaven.calls.routes import ActivationSlot
    from seahaven.calls.runtime import NodeRuntime
    from seahaven.errors import WorldBug
    from seahaven.stores.changelog import ChangeLog

__all__ = ["CallsOwner"]


class CallsOwner(NestedCalls, Protocol):
    """What ``call_steps`` and ``blocks`` read and set of an instance's ``Calls``."""

    # Set by a block: the activation in progress, the net-change recorder, and a divergence.
    activation: Activation | None
    net: Activation | None
    diverged: str | None

    @property
    def lock(self) -> threading.RLock:
        """The instance's lock."""
        ...

    @property
    def slot(self) -> ActivationSlot:
        """The slot holding the activation in progress."""
        ...

    @property
    def runtimes(self) -> list[NodeRuntime]:
        """Every store's runtime, root first."""
        ...

    @property
    def acting(self) -> dict[int, str]:
        """The actor each thread inside ``acting_as()`` acts as."""
        ...

    @property
    def log(self) -> ChangeLog:
        """The change log."""
        ...

    @property
    def destroyed(self) -> bool:
        """Whether the instance was destroyed."""
        ...

    def check_usable(self) -> None:
        """Refuse use of a destroyed instance."""
        ...

    def check_callable(self) -> None:
        """Refuse a call while the instance cannot take one."""
        ...

    def refuse_inside(self, message: str) -> None:
        """Refuse, with ``message``, what cannot run inside a call or a block."""
        ...

    def actor_of_thread(self, default: str) -> str:
        """The actor this thread acts as, or ``default``."""
        ...

    def finish_call(self, activation: Activation) -> WorldBug | None:
        """Render a finished call's sessions into the change log."""
        ...

    def resume_block(
        self,
        activation: Activation,
        ordinal: int | None,
        resumed: list[NodeRuntime],
        actor: str = SETUP,
    ) -> WorldBug | None:
        """End a call's segment inside ``bulk()``, and record the block's own writes again."""
        ...
