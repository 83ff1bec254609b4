"""``World`` and the type aliases of world code, at the path the reference documents.

The same objects as ``seahaven.declaration.world``, which holds them: ``World``,
the ``Handler``, ``Middleware``, ``StartupHook`` and ``StateFormatter``
aliases, ``AddedWorld``, ``StartupHookInfo`` and ``INSTANCE_OPTIONS``.
"""

from seahaven.declaration.world import (
    INSTANCE_OPTIONS,
    AddedWorld,
    Handler,
    Middleware,
    StartupHook,
    StartupHookInfo,
    StateFormatter,
    World,
)

__all__ = [
    "INSTANCE_OPTIONS",
    "AddedWorld",
    "Handler",
    "Middleware",
    "StartupHook",
    "StartupHookInfo",
    "StateFormatter",
    "World",
]
