"""The event loop's error handler for connections it cannot accept for want of descriptors."""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ACCEPT_WARNING_SECONDS", "AcceptFailures"]

_log = logging.getLogger("seahaven.openenv")

# How often, at most, the log says connections cannot be accepted.
ACCEPT_WARNING_SECONDS = 10.0
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class AcceptFailures:
    """The event loop's error handler, saying once in a while that it cannot accept connections.

    asyncio reports every ``accept()`` that fails for want of descriptors, with a
    traceback, and retries a hundred times a tick: out of descriptors, a server
    would write megabytes of log a second. One warning per interval is enough.
    """

    def __init__(self) -> None:
        self.refused = 0
        self._warned_at = -ACCEPT_WARNING_SECONDS

    def handler(
        self, previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None
    ) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
        """A handler for ``loop.set_exception_handler``, passing on what it does not own."""

        def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            error = context.get("exception")
            if (
                isinstance(error, OSError)
                and error.errno in _OUT_OF_RESOURCES
                and "accept" in str(context.get("message", ""))
            ):
                self.refused += 1
                now = time.monotonic()
                if now - self._warned_at >= ACCEPT_WARNING_SECONDS:
                    self._warned_at = now
                    _log.warning(
                        "cannot accept a connection: %s; new connections wait until sessions "
                        "end (said once every %g s)",
                        error.strerror,
                        ACCEPT_WARNING_SECONDS,
                    )
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        return handle
