"""The plugin manager: the framework's own plugins, then every ``seahaven.plugins`` entry point.

The framework's default implementations are registered exactly as an external
plugin is, so nothing in the framework calls them directly.
"""

from __future__ import annotations

import importlib
import threading

import pluggy

from seahaven import hookspecs

__all__ = ["DEFAULT_PLUGINS", "plugin_manager"]

ENTRY_POINT_GROUP = "seahaven.plugins"

# Modules of the framework's own that implement hooks.
DEFAULT_PLUGINS: tuple[str, ...] = ()

_manager: pluggy.PluginManager | None = None
_lock = threading.Lock()


def plugin_manager() -> pluggy.PluginManager:
    """The process's plugin manager, built on first use."""
    global _manager
    with _lock:
        if _manager is None:
            manager = pluggy.PluginManager("seahaven")
            manager.add_hookspecs(hookspecs)
            for name in DEFAULT_PLUGINS:
                manager.register(importlib.import_module(name), name=name)
            manager.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
            _manager = manager
        return _manager
