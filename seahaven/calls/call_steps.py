"""The steps a call made inside ``bulk()`` enters, as context managers: its log line and
failure record (``LoggedCall``), the activation it works in (``WorkingCall``), and the
depth of a nested call (``Deeper``); ``log_call`` writes the line on the
``seahaven.dispatch`` logger.

``Calls._run_outer`` runs the same steps written out for an agent's ordinary call.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import TYPE_CHECKING

from seahaven.calls.activation import Activation, thread_state
from seahaven.calls.routes import Route
from seahaven.errors import ToolError, WorldBug
from seahaven.stores.changelog import CallRecord

if TYPE_CHECKING:
    from seahaven.calls.owner import CallsOwner
    from seahaven.calls.runtime import NodeRuntime


_log = logging.getLogger("seahaven.dispatch")
_INFO = logging.INFO
_local = thread_state()


class LoggedCall:
    """A call's log line, and what it raised noted in its call record (when it has one)."""

    __slots__ = ("_instance_id", "_internal", "_node", "_record", "_started", "_tool")

    def __init__(
        self, instance_id: str, tool: str, node: str, record: CallRecord | None, *, internal: bool
    ) -> None:
        self._instance_id = instance_id
        self._tool = tool
        self._node = node
        self._record = record
        self._internal = internal

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        failure: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if failure is not None and self._record is not None:
            self._record.record_failure(failure)
        if failure is not None or self._internal or _log.isEnabledFor(_INFO):
            log_call(
                self._instance_id,
                self._tool,
                self._node,
                self._started,
                failure,
                internal=self._internal,
            )


class WorkingCall:
    """The activation an outer call works in: a new one, or a segment of the ``bulk()`` block.

    Entering marks the thread inside world code, installs the activation (or
    ends the block's segment so far), sets the ordinal and starts recording the
    route's stores. Leaving ends the call's work whatever was raised: a new
    activation is finished (its records kept), a block's segment is rendered
    and the block records again. What finishing could not record is raised.
    """

    __slots__ = (
        "_activation",
        "_actor",
        "_actor_before",
        "_calls",
        "_ordinal",
        "_ordinal_before",
        "_outer",
        "_resumed",
        "_route",
    )

    def __init__(self, calls: CallsOwner, route: Route, ordinal: int, actor: str) -> None:
        self._calls = calls
        self._route = route
        self._ordinal = ordinal
        self._actor = actor

    def __enter__(self) -> None:
        calls = self._calls
        activation = calls.slot.activation
        self._outer = activation is None
        if activation is None:
            activation = Activation(calls, recording=calls.net is None, actor=self._actor)
            self._resumed: list[NodeRuntime] = []
            self._ordinal_before: int | None = None
            self._actor_before = self._actor
        else:
            # A call made inside bulk(): what the block wrote before it is a segment
            # of its own, and so is what it writes after, on the same stores.
            self._resumed = list(activation.capturing.values())
            self._ordinal_before = activation.ordinal
            self._actor_before = activation.actor
        self._activation = activation
        _local.depth += 1
        try:
            if self._outer:
                calls.slot.activation = activation
            else:
                activation.flush()
            activation.ordinal = self._ordinal
            activation.actor = self._actor
            touch = activation.touch
            for runtime in self._route.touched:
                touch(runtime)
        except BaseException:
            self._end()
            raise

    def _end(self) -> WorldBug | None:
        _local.depth -= 1
        if self._outer:
            return self._calls.finish_call(self._activation)
        return self._calls.resume_block(
            self._activation, self._ordinal_before, self._resumed, self._actor_before
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _local.depth -= 1
        if self._outer:
            leftover = self._calls.finish_call(self._activation)
        else:
            leftover = self._calls.resume_block(
                self._activation, self._ordinal_before, self._resumed, self._actor_before
            )
        if leftover is not None and exc is None:
            raise leftover


class Deeper:
    """The thread is inside world code for the block: a nested call's depth."""

    __slots__ = ()

    def __enter__(self) -> None:
        _local.depth += 1

    def __exit__(self, *exc: object) -> None:
        _local.depth -= 1


def log_call(
    instance_id: str,
    tool: str,
    node: str,
    started: float,
    failure: BaseException | None,
    *,
    internal: bool,
) -> None:
    """Log a call's line on the ``seahaven.dispatch`` logger, and the traceback of a failure."""
    if failure is not None and not internal and not isinstance(failure, ToolError):
        _log.error(
            "%s: unexpected %s from %s at node=%s",
            instance_id,
            type(failure).__name__,
            tool,
            node,
            exc_info=failure,
        )
    elif (
        isinstance(failure, ToolError)
        and failure.__cause__ is not None
        and _log.isEnabledFor(logging.DEBUG)
    ):
        _log.debug("%s: %s raised from another error", instance_id, tool, exc_info=failure)
    if not _log.isEnabledFor(_INFO):
        return
    if failure is None:
        outcome = "ok"
    elif isinstance(failure, ToolError):
        outcome = f"tool_error:{failure.code}"
    else:
        outcome = f"error:{type(failure).__name__}"
    _log.info(
        "call tool=%s node=%s outcome=%s duration_ms=%.3f internal=%s instance=%s",
        tool,
        node,
        outcome,
        (time.perf_counter() - started) * 1000.0,
        "true" if internal else "false",
        instance_id,
    )
