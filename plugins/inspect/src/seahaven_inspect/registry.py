"""What Inspect loads through the ``inspect_ai`` entry point named ``seahaven``.

``inspect eval seahaven/PACK`` looks the task up by that name, and Inspect
loads this module to find it. It registers one task per installed pack
(``seahaven.scenarios.pack_specs()``), each taking ``split`` and ``scenarios``
(``-T split=test``), and ``seahaven/pack``, which takes any pack with ``-T
pack=...`` (a name, a folder holding ``pack.yaml``, or ``module:attr``). It
also registers the model provider ``seahaven``, whose ``seahaven/solution``
plays each scenario's reference solution (``seahaven_inspect.testing``).

Inspect names a task by the top-level package of its function's module, so the
functions registered here say they are the ``seahaven`` package's: the tasks
are the project's, ``seahaven/company``, whichever distribution holds the code.
Packs are read only when a task is made, never while this module loads.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from inspect_ai import Task
from inspect_ai import task as inspect_task

from seahaven.scenarios import pack_specs
from seahaven_inspect import testing
from seahaven_inspect.task import task as pack_task

__all__ = ["pack", "register_packs", "registered"]

# The names Inspect can look up as PACKAGE/NAME: no dot (it would read a file path).
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# Inspect namespaces by this package (see the module's docstring).
_NAMESPACE = "seahaven"

registered: dict[str, Callable[..., Task]] = {}
"""Every task this module registered, by pack name (``pack`` for the one taking any pack)."""


def _published(factory: Callable[..., Task], name: str, doc: str) -> Callable[..., Task]:
    factory.__name__ = factory.__qualname__ = name
    factory.__module__ = _NAMESPACE
    factory.__doc__ = doc
    made: Callable[..., Task] = inspect_task(name=name)(factory)
    registered[name] = made
    return made


def _pack_task(name: str) -> Callable[..., Task]:
    def factory(split: str | None = None, scenarios: str | list[str] | None = None) -> Task:
        return pack_task(name, split=split, scenarios=_ids(scenarios))

    return _published(factory, name, f"The scenarios of the installed pack {name!r}.")


def _any_pack(
    pack: str, split: str | None = None, scenarios: str | list[str] | None = None
) -> Task:
    return pack_task(pack, split=split, scenarios=_ids(scenarios))


def _ids(scenarios: str | list[str] | None) -> list[str] | None:
    """``-T scenarios=a,b`` or a list: the scenario ids to run."""
    if scenarios is None:
        return None
    if isinstance(scenarios, str):
        return [part.strip() for part in scenarios.split(",") if part.strip()]
    return [str(part) for part in scenarios]


def register_packs() -> list[str]:
    """Register a task for every installed pack not registered yet; the names registered."""
    added = []
    for spec in pack_specs():
        if spec.name in registered or spec.name == "pack" or not _NAME.match(spec.name):
            continue
        _pack_task(spec.name)
        added.append(spec.name)
    return added


pack = _published(
    _any_pack, "pack", "The scenarios of any pack: -T pack=NAME, a pack folder, or module:attr."
)
register_packs()
testing.register()
