"""Moved to ``seahaven_openenv.http.server`` and ``seahaven_openenv.http.launch``.

Importing this path warns; each of its names gives the object of the module it
lives in now. The path goes in the next release.
"""

from __future__ import annotations

import warnings
from typing import Any

from seahaven_openenv.http import launch, server

__all__: list[str] = []

#: Each name this module held, with the module that holds it now.
MOVED_NAMES = {
    "RESET_OPTION_KEYS": server,
    "HttpWorldApp": server,
    "check_reset_options": server,
    "layered": server,
    "DEFAULT_CLOCK_MODE": server,
    "RunningHttpServer": launch,
    "command_line": launch,
    "run_in_background": launch,
    "serve_forever": launch,
}

warnings.warn(
    "seahaven_openenv.http_server is now seahaven_openenv.http.server (the app) and "
    "seahaven_openenv.http.launch (running it); import those instead (the old path goes in "
    "the next release)",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    """A name of the old module: the object its new module holds."""
    module = MOVED_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)
