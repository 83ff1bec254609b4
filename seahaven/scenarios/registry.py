"""Every installed pack of scenarios, by name, found through entry points.

A distribution publishes its packs under the ``seahaven.scenarios`` entry-point
group (``name = "module:attr"``), where ``attr`` is a ``ScenarioSet`` or a
function returning one. Listing packs reads metadata only; a pack is imported
when it is first asked for. ``load_pack`` also takes ``module:attr`` and a
folder holding ``pack.yaml`` written as a path, and loads the worlds a pack
runs on as it loads the pack. ``find_scenario("pack/id")`` is how the wire, the
command line and the adapters name one scenario.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import importlib_metadata

from seahaven.errors import WorldBug
from seahaven.registry.targets import import_target
from seahaven.scenarios.model import Scenario
from seahaven.scenarios.pack import PACK_FILE, ScenarioSet

__all__ = [
    "SCENARIOS_GROUP",
    "PackSpec",
    "find_scenario",
    "load_pack",
    "pack_folder",
    "pack_specs",
    "refresh_packs",
    "split_reference",
]

SCENARIOS_GROUP = "seahaven.scenarios"


@dataclass(frozen=True, slots=True)
class PackSpec:
    """One published pack: its name, where it lives, and which distribution published it."""

    name: str
    value: str
    distribution: str | None
    version: str | None
    _loaded: list[ScenarioSet] = field(default_factory=list, repr=False, compare=False)

    def describe(self) -> str:
        """How messages name this entry."""
        source = f"{self.distribution} {self.version}, " if self.distribution else ""
        return f"pack {self.name!r} ({source}entry point {self.value})"

    def load(self) -> ScenarioSet:
        """Import the pack on first use, check that its worlds load, and keep it."""
        if self._loaded:
            return self._loaded[0]
        pack = import_pack(self.value, self.describe())
        if pack.name != self.name:
            raise WorldBug(
                f"{self.describe()} holds a pack named {pack.name!r}; publish it under its own name"
            )
        _check_worlds(pack, self.describe())
        pack.source = self.name
        self._loaded.append(pack)
        return pack


def import_pack(target: str, what: str | None = None) -> ScenarioSet:
    """The ``ScenarioSet`` at ``module:attr`` (or what calling it returns), its ``source`` set.

    Its worlds are not loaded here (a caller may hold the world itself);
    ``load_pack`` loads them.
    """
    label = what or target
    found = import_target(target, label=label, what="a pack", example="my_tasks:pack")
    if not isinstance(found, ScenarioSet) and callable(found):
        found = found()
    if not isinstance(found, ScenarioSet):
        raise WorldBug(f"{label}: {target} is a {type(found).__name__}, not a seahaven.ScenarioSet")
    found.source = target
    return found


def pack_folder(path: str | Path) -> ScenarioSet:
    """The pack in a folder holding ``pack.yaml``; its ``source`` is the folder's full path."""
    folder = Path(path).expanduser()
    if not (folder / PACK_FILE).is_file():
        raise WorldBug(
            f"{path} is not a folder holding {PACK_FILE}; give a pack's folder, an installed "
            "pack's name, or module:attr"
        )
    pack = ScenarioSet.from_directory(folder)
    _check_worlds(pack, str(path))
    pack.source = str(folder.resolve())
    return pack


def is_pack_path(name: str) -> bool:
    """Whether ``name`` is written as a path: ``./shop``, ``packs/shop``, ``/srv/shop``, ``~/shop``.

    A bare word is a pack's registered name, never a folder: a name a client
    sends a server can then never make it read a folder of its choosing.
    """
    return "/" in name or os.sep in name or name.startswith(("~", "."))


def _check_worlds(pack: ScenarioSet, label: str) -> None:
    """Load every world the pack's scenarios name; a ``WorldBug`` naming the first that fails."""
    seen: set[str] = set()
    for scenario in pack:
        name = scenario.world_name
        if name in seen:
            continue
        seen.add(name)
        try:
            scenario.resolve_world()
        except WorldBug as error:
            raise WorldBug(
                f"{label}: pack {pack.name!r} cannot run, as its world does not load ({error}); "
                "install the world, or correct the world the pack names"
            ) from None


_specs: dict[str, PackSpec] | None = None
_conflicts: dict[str, list[PackSpec]] = {}
_lock = threading.Lock()


def _discover() -> dict[str, PackSpec]:
    global _specs
    with _lock:
        if _specs is None:
            claims: dict[str, list[PackSpec]] = {}
            for entry_point in importlib_metadata.entry_points(group=SCENARIOS_GROUP):
                dist = entry_point.dist
                spec = PackSpec(
                    name=entry_point.name,
                    value=entry_point.value.split("[", 1)[0].strip(),
                    distribution=dist.name if dist is not None else None,
                    version=dist.version if dist is not None else None,
                )
                claims.setdefault(spec.name, []).append(spec)
            _conflicts.clear()
            _conflicts.update({name: found for name, found in claims.items() if len(found) > 1})
            _specs = {name: found[0] for name, found in claims.items() if len(found) == 1}
        return _specs


def pack_specs() -> list[PackSpec]:
    """Every installed pack, sorted by name, none of them imported."""
    specs = _discover()
    return [specs[name] for name in sorted(specs)]


def refresh_packs() -> None:
    """Forget what was discovered; the next lookup reads the entry points again."""
    global _specs
    importlib.invalidate_caches()
    with _lock:
        _specs = None


def load_pack(name: str) -> ScenarioSet:
    """The installed pack ``name``, the pack at ``module:attr``, or a folder holding ``pack.yaml``.

    A folder is written as a path (``./shop``; see ``is_pack_path``). Each way,
    the worlds the pack's scenarios run on are loaded now, so a pack naming a
    world that cannot be imported fails here.
    """
    if is_pack_path(name):
        return pack_folder(name)
    if ":" in name:
        pack = import_pack(name)
        _check_worlds(pack, name)
        return pack
    specs = _discover()
    if name in _conflicts:
        claimants = " and ".join(spec.describe() for spec in _conflicts[name])
        raise WorldBug(f"the pack name {name!r} is claimed twice: {claimants}; uninstall one")
    spec = specs.get(name)
    if spec is None:
        known = ", ".join(sorted(specs)) or "none are installed"
        raise WorldBug(
            f"no pack of scenarios is registered as {name!r} (installed: {known}); install the "
            "world that publishes it, or pass module:attr"
        )
    return spec.load()


def split_reference(reference: str) -> tuple[str, str]:
    """``"pack/id"`` as ``(pack, id)``; a ``WorldBug`` for anything else."""
    if not isinstance(reference, str) or reference.count("/") != 1:
        raise WorldBug(
            f"a scenario is named pack/id, as company/refund-duplicate; got {reference!r}"
        )
    pack, _, scenario_id = reference.partition("/")
    if not pack or not scenario_id:
        raise WorldBug(f"a scenario is named pack/id; got {reference!r}")
    return pack, scenario_id


def find_scenario(reference: str) -> tuple[ScenarioSet, Scenario]:
    """The pack and the scenario ``"pack/id"`` names."""
    pack_name, scenario_id = split_reference(reference)
    pack = load_pack(pack_name)
    return pack, pack.get(scenario_id)
