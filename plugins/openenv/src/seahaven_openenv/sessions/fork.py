"""A ``fork`` frame: ``n`` new detached sessions, each with its own instance from one snapshot."""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven_openenv.sessions import snapframes
from seahaven_openenv.sessions.session import Session
from seahaven_openenv.sessions.session_pool import SessionPool
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.inbox import Inbox

__all__ = ["capacity_refusal", "fork", "fork_arguments"]


def fork_arguments(data: Any) -> tuple[int, str | None]:
    """A fork frame's ``n`` and ``token``; ``FrameError`` naming what is wrong."""
    if not isinstance(data, dict) or any(key not in ("n", "token") for key in data):
        raise FrameError(
            "VALIDATION_ERROR",
            'a fork frame\'s data is {"n": <sessions>} and, to fork a kept snapshot rather '
            'than this session\'s episode, "token"; nothing else',
        )
    n = data.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= snapframes.MAX_FORK:
        raise FrameError(
            "VALIDATION_ERROR",
            f"a fork's n is a whole number of sessions from 1 to {snapframes.MAX_FORK}",
        )
    token = data.get("token")
    if token is not None and not isinstance(token, str):
        raise FrameError("VALIDATION_ERROR", "a fork's token is a string a snapshot answered")
    return n, token


def capacity_refusal(hub: SessionPool, n: int) -> FrameError:
    """The refusal of a fork of ``n`` sessions that would pass the server's capacity."""
    # Not CAPACITY_REACHED: that code closes the connection, and a refused fork leaves this
    # session as it was.
    return FrameError(
        "EXECUTION_ERROR",
        f"a fork of {n} sessions would pass this server's maximum of {hub.max_concurrent_envs} "
        f"sessions ({hub.active_sessions} are held now); fork fewer, or raise "
        "`seahaven serve --max-concurrent-envs`",
        reason="fork_refused",
        limit="sessions",
        option="--max-concurrent-envs",
        **hub.capacity(),
    )


async def fork(
    session: Session, hub: SessionPool, data: Any, inbox: Inbox | None
) -> dict[str, Any]:
    """``n`` new detached sessions, each with its own instance from one snapshot.

    All or none: when a branch cannot be made, or the sessions would pass the
    server's capacity, none is left behind.
    """
    n, token = fork_arguments(data)
    resumables = hub.resumables
    if not resumables.enabled:
        raise FrameError(
            "EXECUTION_ERROR",
            "a fork's sessions wait for their clients as resumable sessions do, and this server "
            "keeps none (seahaven serve --resume-grace 0); serve with a resume grace above 0",
            reason="fork_refused",
            option="--resume-grace",
        )
    if not hub.admission.admits_now(n):
        raise capacity_refusal(hub, n)
    if token is None:
        snapshot, step_count = await hub.run(session.snapshot, inbox=inbox)
    else:
        snapshot, step_count = hub.snapshots.find(token)
        if snapshot.world is not session.service.world:
            raise FrameError(
                "VALIDATION_ERROR",
                f"snapshot {token!r} was taken of another world than this session serves",
            )
    try:
        instances = await hub.run(snapshot.restore_many, n, inbox=inbox)
    except seahaven.SeahavenError as error:
        raise FrameError("EXECUTION_ERROR", f"fork failed: {error}") from None
    if not hub.admission.admits_now(n):
        # Other connections took the room while the branches were made.
        for instance in instances:
            await hub.run(instance.destroy)
        raise capacity_refusal(hub, n)
    grace = resumables.grace
    sessions = []
    for instance in instances:
        branch = session.service.session()
        branch.adopt(instance, step_count)
        record = resumables.open_detached(branch)
        sessions.append({**record.credentials(grace), "episode_id": instance.id})
    return {"sessions": sessions, "step_count": step_count, "call_count": snapshot.call_count}
