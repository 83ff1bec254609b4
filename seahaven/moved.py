"""Module paths that moved: the old path names the new module, with a warning, for one release."""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "alias_module"]

MOVED: dict[str, str] = {
    "seahaven.helpers": "seahaven.sql_tools",
    "seahaven.instances": "seahaven.concurrency",
    "seahaven_ray.episodes": "seahaven.episodes",
    "seahaven_ray.files": "seahaven.episode_files",
}
"""Old module path to new, for every module that moved; the old ones go in the next release."""


def alias_module(old: str) -> ModuleType:
    """Make the module path ``old`` name its new module, warning the importer that it moved.

    The old path becomes the very same module object, so whatever is read,
    set or patched through it reaches the module the framework uses.
    """
    new = MOVED[old]
    module = importlib.import_module(new)
    sys.modules[old] = module
    warnings.warn(
        f"{old} is now {new}; import {new} instead (the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )
    return module
