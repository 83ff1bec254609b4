"""The registry: every installed world, by name, found without importing any of them.

A distribution publishes its worlds under the ``seahaven.worlds`` entry-point
group (``name = "module:attr"``); a plugin may provide more through the
``seahaven_worlds`` hook. Building the registry reads metadata only: a world's
module is imported when its spec is loaded, and the loaded ``World`` is kept.
Problems are collected rather than raised, so one broken package never hides
the others: a name claimed twice, a world distribution whose requirement on
``seahaven`` the running version does not satisfy, or a plugin whose hook
failed. ``get`` refuses a name claimed twice, naming both claimants.
``import_world`` is how any ``module:attr`` becomes a ``World``, for an entry
point here and for ``--world module:attr`` in ``seahaven.discovery``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import importlib_metadata
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.registry.targets import import_target
from seahaven.version import VERSION

if TYPE_CHECKING:
    from seahaven.registry.plugins import PluginManager

__all__ = ["WORLDS_GROUP", "Registry", "WorldSpec", "import_world", "refresh", "registry"]

WORLDS_GROUP = "seahaven.worlds"


@dataclass(frozen=True, slots=True)
class WorldSpec:
    """One registered world: its name, where it lives, and who published it."""

    name: str
    # Where the World is: ``module:attr``.
    value: str
    # The distribution that publishes it, and that distribution's version; None for a
    # world a plugin registered directly on a manager.
    distribution: str | None
    version: str | None
    # ``entry point``, or ``plugin <name>`` for a world provided through the hook.
    provider: str = "entry point"
    # The publishing distribution's requirement on seahaven, as written, if it has one.
    requires_seahaven: str | None = None
    _loaded: list[World] = field(default_factory=list, repr=False, compare=False)

    @property
    def module(self) -> str:
        """The module the world is built in."""
        return self.value.partition(":")[0]

    @property
    def attribute(self) -> str:
        """The attribute of ``module`` holding the world."""
        return self.value.partition(":")[2]

    def describe(self) -> str:
        """How messages name this entry: ``world 'x' (dist 1.0, entry point mod:attr)``."""
        source = f"{self.distribution} {self.version}, " if self.distribution else ""
        return f"world {self.name!r} ({source}{self.provider} {self.value})"

    def load(self) -> World:
        """Import the world on first use and keep it; a ``WorldBug`` names a broken entry."""
        if self._loaded:
            return self._loaded[0]
        try:
            world, _, _ = import_world(self.value)
        except WorldBug as error:
            raise WorldBug(f"{self.describe()} cannot be loaded: {error}") from None
        self._loaded.append(world)
        return world

    def version_problem(self, running: str | None = None) -> str | None:
        """Why the running seahaven does not satisfy this world's requirement, or ``None``."""
        if self.requires_seahaven is None:
            return None
        running = VERSION if running is None else running
        requirement = Requirement(self.requires_seahaven)
        try:
            satisfied = requirement.specifier.contains(Version(running), prereleases=True)
        except InvalidVersion:
            return None
        if satisfied:
            return None
        return (
            f"{self.describe()} requires {self.requires_seahaven}, and seahaven {running} is "
            f"running; install a seahaven that satisfies it, or a release of "
            f"{self.distribution} made for seahaven {running}"
        )


def import_world(spec: str) -> tuple[World, str, str]:
    """Import ``module:attr`` and return the ``World`` there, its module and attribute."""
    target = import_target(
        spec,
        what="a world",
        example="notes:world",
        import_fix="install the package, or run from its project",
        attribute_fix="give the package a world, or point at the one it has",
    )
    module_name, _, attribute = spec.partition(":")
    if not isinstance(target, World):
        raise WorldBug(
            f"{module_name}:{attribute} is a {type(target).__name__}, not a seahaven.World; "
            "name the World object itself with --world module:attr"
        )
    return target, module_name, attribute


def _seahaven_requirement(dist: importlib_metadata.Distribution | None) -> str | None:
    """The requirement a distribution declares on seahaven, unconditional ones only."""
    if dist is None:
        return None
    for line in dist.requires or ():
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != "seahaven":
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        return str(requirement)
    return None


def _entry_point_specs(group: str) -> list[WorldSpec]:
    specs = []
    for entry_point in importlib_metadata.entry_points(group=group):
        dist = entry_point.dist
        if dist is not None and canonicalize_name(dist.name) == "seahaven":
            requirement = None
        else:
            requirement = _seahaven_requirement(dist)
        value = entry_point.value.split("[", 1)[0].strip()
        specs.append(
            WorldSpec(
                name=entry_point.name,
                value=value,
                distribution=dist.name if dist is not None else None,
                version=dist.version if dist is not None else None,
                requires_seahaven=requirement,
            )
        )
    return specs


def _plugin_specs(manager: PluginManager) -> tuple[list[WorldSpec], list[str]]:
    """Worlds every plugin provides, each plugin called on its own so one failure hides none."""
    specs: list[WorldSpec] = []
    problems: list[str] = []
    for implementation in manager.hook.seahaven_worlds.get_hookimpls():
        origin = manager.origin(implementation.plugin_name)
        dist = _distribution(origin.distribution)
        try:
            returned = implementation.function()
            if returned is None or isinstance(returned, str | bytes):
                raise TypeError(f"it returned {returned!r}, not a list of pairs")
            if not isinstance(returned, Iterable):
                raise TypeError(f"it returned a {type(returned).__name__}, not a list of pairs")
            provided: list[object] = list(returned)
        except Exception as error:
            problems.append(
                f"{origin.describe()} failed to list its worlds: {type(error).__name__}: "
                f"{error}; fix or uninstall it"
            )
            continue
        for item in provided:
            if (
                not isinstance(item, tuple)
                or len(item) != 2
                or not all(isinstance(part, str) for part in item)
            ):
                problems.append(
                    f"{origin.describe()} listed {item!r} as a world; seahaven_worlds returns "
                    '("name", "module:attr") pairs'
                )
                continue
            name, value = item
            specs.append(
                WorldSpec(
                    name=name,
                    value=value,
                    distribution=origin.distribution,
                    version=origin.version,
                    provider=f"plugin {implementation.plugin_name}",
                    requires_seahaven=_seahaven_requirement(dist),
                )
            )
    return specs, problems


def _distribution(name: str | None) -> importlib_metadata.Distribution | None:
    if name is None:
        return None
    try:
        found = importlib_metadata.distribution(name)
        return found if isinstance(found, importlib_metadata.Distribution) else None
    except importlib_metadata.PackageNotFoundError:
        return None


class Registry:
    """Every world found, by name, with the problems found on the way."""

    def __init__(self, specs: Iterable[WorldSpec], problems: Iterable[str] = ()) -> None:
        claims: dict[str, list[WorldSpec]] = {}
        for spec in specs:
            claims.setdefault(spec.name, []).append(spec)
        self._specs = {name: found[0] for name, found in claims.items() if len(found) == 1}
        self._conflicts = {name: found for name, found in claims.items() if len(found) > 1}
        found_problems = list(problems)
        for name in sorted(self._conflicts):
            found_problems.append(self.conflict_message(name))
        for spec in self.specs():
            problem = spec.version_problem()
            if problem is not None:
                found_problems.append(problem)
        self._problems = tuple(found_problems)

    @classmethod
    def discover(
        cls, manager: PluginManager | None = None, *, group: str = WORLDS_GROUP
    ) -> Registry:
        """Read every entry point in ``group`` and ask every plugin; import no world."""
        if manager is None:
            from seahaven.registry.plugins import plugin_manager

            manager = plugin_manager()
        specs = _entry_point_specs(group)
        plugin_specs, problems = _plugin_specs(manager)
        return cls([*specs, *plugin_specs], problems)

    def conflict_message(self, name: str) -> str:
        """The error for a name claimed more than once, naming every claimant."""
        claimants = " and ".join(spec.describe() for spec in self._conflicts[name])
        return (
            f"the world name {name!r} is claimed twice: {claimants}; uninstall one, or publish "
            "one under another name"
        )

    def names(self) -> list[str]:
        """Every registered name, sorted, including names claimed more than once."""
        return sorted([*self._specs, *self._conflicts])

    def specs(self) -> list[WorldSpec]:
        """Every usable entry, sorted by name. A name claimed twice is not among them."""
        return [self._specs[name] for name in sorted(self._specs)]

    def conflicts(self) -> dict[str, tuple[WorldSpec, ...]]:
        """Every name claimed more than once, with all of its claimants."""
        return {name: tuple(found) for name, found in sorted(self._conflicts.items())}

    @property
    def problems(self) -> tuple[str, ...]:
        """One line per problem found while building: conflicts, version mismatches, plugins."""
        return self._problems

    def get(self, name: str) -> WorldSpec | None:
        """The entry registered as ``name``, or ``None``; a ``WorldBug`` if it is claimed twice."""
        if name in self._conflicts:
            raise WorldBug(self.conflict_message(name))
        return self._specs.get(name)

    def load(self, name: str) -> World:
        """The world registered as ``name``, imported; a ``WorldBug`` naming the fix if none is."""
        spec = self.get(name)
        if spec is None:
            known = ", ".join(self.names()) or "none are installed"
            raise WorldBug(
                f"no world is registered as {name!r} (registered: {known}); install its "
                "package, or pass module:attr"
            )
        return spec.load()

    def __contains__(self, name: object) -> bool:
        return name in self._specs or name in self._conflicts

    def __iter__(self) -> Iterator[WorldSpec]:
        return iter(self.specs())

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Registry({self.names()!r})"


_registry: Registry | None = None
_lock = threading.Lock()


def registry() -> Registry:
    """The process's registry, built on first use from the installed distributions."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = Registry.discover()
        return _registry


def refresh() -> None:
    """Forget what was discovered, plugins included; the next ``registry()`` looks again."""
    global _registry
    import seahaven.registry.plugins as plugins

    importlib.invalidate_caches()
    plugins.refresh()
    with _lock:
        _registry = None
