"""Finding worlds and plugins: the registry, discovery, the plugin manager and its hooks.

``worlds`` (every installed world by name: ``Registry``, ``registry()``,
``import_world``), ``discovery`` (a world from ``module:attr``, a registered
name or the project's convention), ``targets`` (the object a ``module:attr``
string names), ``plugins`` (the plugin manager) with ``hookspecs`` (the hooks
a plugin implements), and ``extras`` (the ``seahaven.<plugin>`` import paths).
It sits on the declaration: it imports worlds, never instances.

This package's face re-exports what the other layers and plugins use; the
framework's own modules import each module by its path.
"""

from seahaven.registry.hookspecs import hookimpl
from seahaven.registry.worlds import (
    WORLDS_GROUP,
    Registry,
    WorldSpec,
    import_world,
    refresh,
    registry,
)

__all__ = [
    "WORLDS_GROUP",
    "Registry",
    "WorldSpec",
    "hookimpl",
    "import_world",
    "refresh",
    "registry",
]
