"""The plugin manager: the framework's own plugins, then every ``seahaven.plugins`` entry point.

The framework's default implementations are modules listed in
``DEFAULT_PLUGINS`` and are registered exactly as an external plugin is, so
nothing in the framework calls them directly. An external plugin is any
object published under the ``seahaven.plugins`` entry-point group. One that
fails to load is recorded in ``load_problems`` and skipped, so a broken
package never takes the command line or the other plugins down with it.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass

import importlib_metadata
import pluggy

import seahaven.registry.hookspecs as hookspecs

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginManager",
    "PluginOrigin",
    "make_plugin_manager",
    "plugin_manager",
    "refresh",
]

ENTRY_POINT_GROUP = "seahaven.plugins"

# Modules of the framework's own that implement hooks: the built-in commands.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "seahaven.cli.worlds",
    "seahaven.cli.fixture",
    "seahaven.cli.docs",
    "seahaven.cli.episodes",
    "seahaven.cli.new",
    "seahaven.cli.scenarios",
    "seahaven.cli.evaluate",
    "seahaven.cli.report",
    "seahaven.check.plugin",
)


@dataclass(frozen=True, slots=True)
class PluginOrigin:
    """Where a registered plugin came from: the distribution that published it, if any."""

    name: str
    distribution: str | None = None
    version: str | None = None

    def describe(self) -> str:
        """How messages name the plugin: ``plugin 'x' (dist 1.0)``."""
        if self.distribution is None:
            return f"plugin {self.name!r}"
        return f"plugin {self.name!r} ({self.distribution} {self.version})"


class PluginManager(pluggy.PluginManager):
    """pluggy's manager for the ``seahaven`` project, remembering each plugin's origin."""

    def __init__(self) -> None:
        super().__init__("seahaven")
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, PluginOrigin] = {}
        # One line per plugin that could not be loaded, naming it and the fix.
        self.load_problems: list[str] = []

    def register_module(self, module_name: str) -> None:
        """Import ``module_name`` and register it under that name, as the defaults are."""
        self.register(importlib.import_module(module_name), name=module_name)
        self.origins[module_name] = PluginOrigin(module_name)

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Register every plugin published under ``group``; record each one that fails."""
        for entry_point in sorted(
            importlib_metadata.entry_points(group=group), key=lambda ep: ep.name
        ):
            dist = entry_point.dist
            origin = PluginOrigin(
                entry_point.name,
                dist.name if dist is not None else None,
                dist.version if dist is not None else None,
            )
            if self.is_blocked(entry_point.name):
                continue
            if self.has_plugin(entry_point.name):
                earlier = self.origins.get(entry_point.name, PluginOrigin(entry_point.name))
                self.load_problems.append(
                    f"{origin.describe()} was not loaded: {earlier.describe()} is registered "
                    "under the same name; uninstall one of them"
                )
                continue
            try:
                plugin = entry_point.load()
                self.register(plugin, name=entry_point.name)
            except Exception as error:
                self.load_problems.append(
                    f"{origin.describe()} failed to load ({entry_point.value}): "
                    f"{type(error).__name__}: {error}; fix or uninstall it"
                )
                continue
            self.origins[entry_point.name] = origin

    def check_hook_names(self) -> None:
        """Record each plugin implementing a hook that does not exist (a misspelling, usually)."""
        known = ", ".join(sorted(name for name in dir(hookspecs) if name.startswith("seahaven_")))
        for name, caller in sorted(vars(self.hook).items()):
            if name.startswith("_") or caller.has_spec():
                continue
            for implementation in caller.get_hookimpls():
                if implementation.optionalhook:
                    continue
                self.load_problems.append(
                    f"{self.origin(implementation.plugin_name).describe()} implements {name}, "
                    f"which is not a seahaven hook; the hooks are {known}"
                )

    def origin(self, plugin_name: str) -> PluginOrigin:
        """Where the plugin registered as ``plugin_name`` came from."""
        return self.origins.get(plugin_name, PluginOrigin(plugin_name))


def make_plugin_manager(
    *, defaults: tuple[str, ...] | None = None, entry_points: bool = True
) -> PluginManager:
    """A new manager: the default plugins, then (unless turned off) the installed ones."""
    manager = PluginManager()
    for module_name in DEFAULT_PLUGINS if defaults is None else defaults:
        try:
            manager.register_module(module_name)
        except Exception as error:
            # Like an external plugin's: reported, and the rest of the command line still works.
            manager.load_problems.append(
                f"the built-in plugin {module_name!r} failed to load: {type(error).__name__}: "
                f"{error}; reinstall seahaven"
            )
    if entry_points:
        manager.load_entry_points()
    manager.check_hook_names()
    return manager


_manager: PluginManager | None = None
_lock = threading.Lock()


def plugin_manager() -> PluginManager:
    """The process's plugin manager, built on first use."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = make_plugin_manager()
        return _manager


def refresh() -> None:
    """Forget the process's manager, so the next use sees plugins installed since."""
    global _manager
    with _lock:
        _manager = None
