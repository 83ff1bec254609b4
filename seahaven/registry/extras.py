"""Import paths inside ``seahaven`` for the first-party plugins, each a distribution of its own.

The serving plugin is the distribution ``seahaven-openenv`` with the import
package ``seahaven_openenv``, yet a world's app file says
``import seahaven.openenv``. Each such path is a one-line module in the core
(``seahaven/openenv.py``, ...) that calls ``expose``: the plugin's package is
imported and installed in ``sys.modules`` under the ``seahaven.`` name, so both
names are one module object. Without the plugin, the import fails with an
``ImportError`` that names the command installing it, and the core never needs
the plugin's dependencies.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from types import ModuleType

__all__ = ["EXTRAS", "Extra", "expose"]


@dataclass(frozen=True, slots=True)
class Extra:
    """A first-party plugin: its import path under ``seahaven``, its package and its extra."""

    alias: str
    package: str
    distribution: str
    extra: str
    # The ``seahaven`` commands the plugin adds, answered with the install command without it.
    commands: tuple[str, ...] = ()

    @property
    def install_command(self) -> str:
        """The command that installs the plugin."""
        return f'pip install "seahaven[{self.extra}]"'


EXTRAS: dict[str, Extra] = {
    extra.alias: extra
    for extra in (
        Extra(
            "seahaven.openenv", "seahaven_openenv", "seahaven-openenv", "serve", ("serve", "hub")
        ),
        Extra("seahaven.http", "seahaven_openenv.web.http", "seahaven-openenv", "serve"),
        Extra("seahaven.mcp", "seahaven_mcp", "seahaven-mcp", "mcp", ("mcp",)),
        Extra("seahaven.ray", "seahaven_ray", "seahaven-ray", "ray"),
        Extra("seahaven.inspect", "seahaven_inspect", "seahaven-inspect", "inspect"),
        Extra("seahaven.verifiers", "seahaven_verifiers", "seahaven-verifiers", "verifiers"),
        Extra("seahaven.agents", "seahaven_agents", "seahaven-agents", "agents"),
    )
}


def expose(alias: str) -> ModuleType:
    """Import the plugin behind ``alias`` and make ``alias`` name the same module object.

    Raises ``ImportError`` naming the install command when the plugin's
    distribution is not installed. An import error from inside an installed
    plugin (one of its own dependencies missing) propagates as it is.
    """
    extra = EXTRAS[alias]
    try:
        module = importlib.import_module(extra.package)
    except ModuleNotFoundError as error:
        top_level = extra.package.partition(".")[0]
        if error.name not in (top_level, extra.package):
            raise
        raise ImportError(
            f"{alias} needs the {extra.distribution} plugin, which is not installed; "
            f"install it with: {extra.install_command}",
            name=alias,
        ) from None
    sys.modules[alias] = module
    return module
