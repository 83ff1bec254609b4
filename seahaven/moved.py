"""Module paths that moved: the old path names the new module, with a warning, for one release."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["MOVED", "SPLIT", "alias_module", "gather_module", "renamed_names"]

MOVED: dict[str, str] = {
    "seahaven.fixtures_dir": "seahaven.fixtures.location",
    "seahaven.freezing": "seahaven.fixtures.freezing",
    "seahaven.helpers": "seahaven.sql_tools",
    "seahaven.instances": "seahaven.concurrency",
    "seahaven_ray.episodes": "seahaven.episodes",
    "seahaven_ray.files": "seahaven.episode_files",
}
"""Old module path to new, for every module that moved whole; the old ones go next release."""

SPLIT: dict[str, tuple[str, ...]] = {
    "seahaven.fixture_store": (
        "seahaven.fixtures.sidecar",
        "seahaven.fixtures.listing",
        "seahaven.fixtures.verification",
        "seahaven.fixtures.preparation",
        "seahaven.fixtures.writing",
    ),
}
"""Old module path to the new modules its names went to, for every module split in several."""


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


def gather_module(old: str) -> ModuleType:
    """Give the module at ``old`` every public name of the modules it was split into, warning.

    The names are the very same objects, so ``from old import name`` keeps
    working; a module attribute set through the old path no longer reaches the
    code, which reads it in its new module.
    """
    module = sys.modules[old]
    gathered: list[str] = []
    for new in SPLIT[old]:
        part = importlib.import_module(new)
        for name in getattr(part, "__all__", ()):
            setattr(module, name, getattr(part, name))
            gathered.append(name)
    module.__all__ = sorted(gathered)  # type: ignore[attr-defined]
    warnings.warn(
        f"{old} is split into {', '.join(SPLIT[old])}; import each name from its new module "
        "(the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )
    return module


def renamed_names(
    module: str, renamed: dict[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """A module ``__getattr__`` giving each old name in ``renamed`` its new object, with a warning.

    ``namespace`` is the module's ``globals()``; a name that is neither there nor
    renamed raises ``AttributeError`` as a module does.
    """

    def __getattr__(name: str) -> object:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is now {module}.{new}; import that name instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return namespace[new]

    return __getattr__
