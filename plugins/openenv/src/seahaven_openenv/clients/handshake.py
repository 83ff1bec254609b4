"""Whether to open a WebSocket again after its opening handshake was refused, and when.

A ``408`` (the request took too long to arrive, as from a client starved of
CPU) or a ``503`` (a proxy, or a server with no room) answers the handshake
before any session began, so connecting again loses nothing. The answer's
``Retry-After`` (whole seconds) is honoured; without one the wait doubles
from half a second, to at most 10 s.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from websockets.exceptions import InvalidStatus

__all__ = ["connect_retrying", "handshake_delay"]

_T = TypeVar("_T")

# The most a Retry-After is taken to ask for: a larger one is a server's mistake.
_LONGEST_RETRY_AFTER_S = 3600.0
# Answers to the opening handshake that mean "not now", before any session began.
_RETRIED_AT_HANDSHAKE = frozenset({408, 503})
# The backoff between handshakes refused without a Retry-After: doubling from the first.
_FIRST_BACKOFF_S = 0.5
_LONGEST_BACKOFF_S = 10.0


def handshake_delay(error: BaseException, attempt: int) -> float | None:
    """Seconds to wait before connecting again after ``error``, or ``None`` not to.

    Only a ``408`` or ``503`` answer to the opening handshake is tried again;
    its ``Retry-After`` (whole seconds) is honoured, else the backoff doubles.
    """
    refusal = error if isinstance(error, InvalidStatus) else error.__cause__
    if not isinstance(refusal, InvalidStatus):
        return None
    if refusal.response.status_code not in _RETRIED_AT_HANDSHAKE:
        return None
    asked = (refusal.response.headers.get("Retry-After") or "").strip()
    if asked.isascii() and asked.isdigit():
        delay = min(float(asked), _LONGEST_RETRY_AFTER_S)
    else:
        # No time named (or an HTTP date, which a clock skew makes unreliable): back off.
        delay = min(_FIRST_BACKOFF_S * 2**attempt, _LONGEST_BACKOFF_S)
    # Never before the server asked; spread a little so refused clients come back apart.
    return delay * (1.0 + 0.1 * random.random())


async def connect_retrying(
    connect: Callable[[], Awaitable[_T]],
    retries: int,
    wait_s: float,
    retried: Callable[[], None],
) -> _T:
    """``connect()``, again after each ``408`` or ``503`` handshake, ``retries`` times at most.

    Raises the last refusal once the tries, or the ``wait_s`` seconds of waiting
    between them, would run out; ``retried()`` is told of each try after the
    first. OpenEnv's own connect wraps the refusal in a ``ConnectionError``, and
    ``websockets`` raises it bare: ``handshake_delay`` reads either.
    """
    attempts = 0
    waited = 0.0
    while True:
        try:
            return await connect()
        except (ConnectionError, InvalidStatus) as error:
            delay = handshake_delay(error, attempts)
            if delay is None:
                raise
            attempts += 1
            if attempts > retries or waited + delay > wait_s:
                raise
        await asyncio.sleep(delay)
        waited += delay
        retried()
