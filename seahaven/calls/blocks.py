"""The work an instance does outside its calls: ``bulk()`` (rows loaded in one
transaction per store), ``acting_as()`` (who this thread acts as), ``record_net()``
(calls recorded together as one net change) and the startup activation.

Each takes the ``seahaven.dispatch.Calls`` that owns the instance's lock and
activation slot; ``Calls`` offers them as its methods of the same names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import apsw

from seahaven.calls.activation import Activation, WorldCodeScope
from seahaven.declaration.context import Ctx
from seahaven.errors import WorldBug
from seahaven.stores.changelog import LogRecord
from seahaven.stores.db import db_error, roll_back_quietly
from seahaven.stores.names import AGENT, SETUP, check_actor
from seahaven.stores.transactions import begin, commit

if TYPE_CHECKING:
    from seahaven.calls.owner import CallsOwner
    from seahaven.calls.runtime import NodeRuntime

__all__ = ["acting_as", "bulk", "record_net", "run_startup"]


@contextmanager
def bulk(calls: CallsOwner) -> Iterator[Ctx[Any]]:
    """Load rows fast: the root's context, one transaction per node, committed together."""
    calls.check_usable()
    calls.refuse_inside("bulk() cannot run inside a call or another bulk() block")
    with calls.lock:
        calls.check_callable()
        if calls.net is not None:
            raise WorldBug("bulk() cannot run inside a record_net() block; end the block first")
        runtimes = calls.runtimes
        # A reader may be asked for inside the block, and switching a store to the
        # journal a reader needs cannot happen once its transaction is open.
        for runtime in runtimes:
            runtime.share()
        activation = calls.activation = Activation(
            calls, recording=True, actor=calls.actor_of_thread(SETUP)
        )
        begun: list[NodeRuntime] = []
        try:
            try:
                for runtime in runtimes:
                    runtime.conn.execute("BEGIN")
                    begun.append(runtime)
                    activation.touch(runtime)
                with WorldCodeScope(bulk=True):
                    yield activation.ctx(runtimes[0], None)
            except BaseException:
                activation.discard()
                for runtime in begun:
                    roll_back_quietly(runtime.conn)
                raise
            try:
                activation.flush()
                # A segment that could not be recorded, nor undone, is rolled back
                # with the rest, and so is a block that stopped recording.
                lost = activation.diverged or activation.unrecorded
                if lost is not None:
                    raise WorldBug(
                        f"bulk() could not record everything the block wrote ({lost}), so "
                        "none of it was kept"
                    )
            except BaseException:
                # What the block wrote cannot be logged: none of it is kept.
                for runtime in begun:
                    roll_back_quietly(runtime.conn)
                raise
            _commit_bulk(calls, activation.records, activation.texts)
        finally:
            activation.end()
            calls.activation = None


@contextmanager
def acting_as(calls: CallsOwner, actor: str) -> Iterator[None]:
    """Make this thread's calls and ``bulk()`` blocks on the instance ``actor``'s for the block.

    Other threads are not affected; blocks nest, the innermost winning. World
    code cannot change who acts: inside a call, a hook or a ``bulk()`` block it
    is refused, since what it does belongs to the call it is in.
    """
    actor = check_actor(actor)
    calls.check_usable()
    calls.refuse_inside(
        "acting_as() cannot start inside a call, a startup hook or a bulk() block; what "
        "world code does there belongs to the call (or block) it runs in"
    )
    thread = threading.get_ident()
    previous = calls.acting.get(thread)
    calls.acting[thread] = actor
    try:
        yield
    finally:
        if previous is None:
            calls.acting.pop(thread, None)
        else:
            calls.acting[thread] = previous


@contextmanager
def record_net(calls: CallsOwner) -> Iterator[None]:
    """Record the block's calls together: one net change per row, logged when it ends.

    Each call runs as usual (its call record, its clock tick, its transaction)
    but records nothing of its own: every store records for the whole block,
    and the net changes join the change log at the end with no call ordinal,
    as a ``bulk()`` block's do. The instance is this thread's for the block.
    """
    calls.check_usable()
    calls.refuse_inside("record_net() cannot start inside a call or a bulk() block")
    with calls.lock:
        calls.check_callable()
        if calls.net is not None:
            raise WorldBug("record_net() blocks do not nest; this instance is in one already")
        recorder = Activation(calls, recording=True, actor=calls.actor_of_thread(AGENT))
        try:
            for runtime in calls.runtimes:
                recorder.touch(runtime)
        except BaseException:
            recorder.end()
            raise
        calls.net = recorder
        try:
            yield
        finally:
            calls.net = None
            try:
                if not calls.destroyed:
                    recorder.flush()
                    calls.log.extend(recorder.records, recorder.texts)
            finally:
                calls.diverged = calls.diverged or recorder.diverged
                recorder.end()


def _commit_bulk(calls: CallsOwner, records: list[LogRecord], texts: list[str]) -> None:
    # One node at a time, the root last; a failed commit keeps what committed before it.
    ordered = [*calls.runtimes[1:], calls.runtimes[0]]
    committed: set[str] = set()
    for position, runtime in enumerate(ordered):
        try:
            runtime.conn.execute("COMMIT")
        except apsw.Error as error:
            for remaining in ordered[position:]:
                roll_back_quietly(remaining.conn)
            kept = [
                (record, text)
                for record, text in zip(records, texts, strict=True)
                if record.world in committed
            ]
            calls.log.extend([record for record, _ in kept], [text for _, text in kept])
            raise db_error(error, runtime.conn) from error
        committed.add(runtime.path)
    calls.log.extend(records, texts)


def run_startup(calls: CallsOwner, hooks: Callable[[Activation], None]) -> None:
    """Run ``hooks`` in the startup activation: every node's transaction open, nothing logged.

    The transactions commit together, the root last, when ``hooks`` returns,
    and roll back when it raises.
    """
    activation = calls.activation = Activation(calls, recording=False)
    runtimes = calls.runtimes
    begun: list[NodeRuntime] = []
    try:
        for runtime in runtimes:
            begin(runtime.conn)
            begun.append(runtime)
        with WorldCodeScope():
            hooks(activation)
        for runtime in [*runtimes[1:], runtimes[0]]:
            commit(runtime.conn)
    except BaseException:
        for runtime in begun:
            roll_back_quietly(runtime.conn)
        raise
    finally:
        activation.end()
        calls.activation = None
