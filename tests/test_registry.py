"""The registry: entry-point and plugin worlds by name, found lazily, each problem on its own."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from world_packages import fresh_module, on_sys_path, write_dist_info, write_module, write_world

import seahaven
from seahaven import registry as registry_module
from seahaven.registry import Registry, WorldSpec
from seahaven.registry.discovery import find_world, import_world
from seahaven.registry.plugins import PluginManager, make_plugin_manager


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` that plays the part of site-packages."""
    directory = tmp_path / "site"
    directory.mkdir()
    with on_sys_path(directory):
        yield directory


def bare_manager() -> PluginManager:
    """A manager with no plugins at all, so only entry points are discovered."""
    return make_plugin_manager(defaults=(), entry_points=False)


class ProvidesWorlds:
    """A throwaway plugin whose ``seahaven_worlds`` returns what it was given."""

    def __init__(self, provided: object) -> None:
        self.provided = provided

    @seahaven.hookimpl
    def seahaven_worlds(self) -> object:
        return self.provided


def publish(site: Path, stem: str, *, requires: Sequence[str] = ()) -> tuple[str, str]:
    """Write a world package and a distribution publishing it; return (name, module)."""
    module = fresh_module(stem)
    write_world(site, module, name=stem)
    name = module.replace("_", "-")
    write_dist_info(site, f"dist-{module}", worlds={name: f"{module}:world"}, requires=requires)
    return name, module


# --- entry points --------------------------------------------------------------------------------


def test_an_entry_point_world_is_listed_with_its_distribution_and_version(site: Path) -> None:
    module = fresh_module("notes")
    write_world(site, module, name="notes")
    write_dist_info(site, f"notes-dist-{module}", "2.3.4", worlds={module: f"{module}:world"})

    found = Registry.discover(bare_manager())

    spec = found.get(module)
    assert spec is not None
    assert spec.name == module
    assert spec.value == f"{module}:world"
    assert spec.module == module
    assert spec.attribute == "world"
    assert spec.distribution == f"notes-dist-{module}"
    assert spec.version == "2.3.4"
    assert spec.provider == "entry point"
    assert module in found.names()
    assert found.names() == sorted(found.names())
    assert spec in found.specs()
    assert module in found


def test_listing_names_imports_no_world_and_load_imports_and_caches(site: Path) -> None:
    module = fresh_module("lazy")
    write_world(site, module, name="lazy")
    write_dist_info(site, f"lazy-{module}", worlds={module: f"{module}:world"})

    found = Registry.discover(bare_manager())
    assert module in found.names()
    assert module not in sys.modules

    spec = found.get(module)
    assert spec is not None
    world = spec.load()
    assert isinstance(world, seahaven.World)
    assert world.name == "lazy"
    assert module in sys.modules
    # The spec keeps the World it loaded, not just the import system's module.
    del sys.modules[module]
    assert spec.load() is world
    assert module not in sys.modules
    assert found.load(module) is world


def test_a_spec_is_frozen() -> None:
    spec = WorldSpec(name="notes", value="notes:world", distribution=None, version=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "other"  # type: ignore[misc]


def test_two_distributions_claiming_one_name_is_an_error_naming_both(site: Path) -> None:
    first, second = fresh_module("first"), fresh_module("second")
    write_world(site, first, name="first")
    write_world(site, second, name="second")
    name = fresh_module("shared")
    write_dist_info(site, f"alpha-{first}", "1.0", worlds={name: f"{first}:world"})
    write_dist_info(site, f"beta-{second}", "2.0", worlds={name: f"{second}:world"})
    ok_name, _ = publish(site, "bystander")

    found = Registry.discover(bare_manager())

    with pytest.raises(seahaven.WorldBug) as raised:
        found.get(name)
    message = str(raised.value)
    assert f"alpha-{first} 1.0" in message
    assert f"beta-{second} 2.0" in message
    assert "claimed twice" in message
    assert "uninstall one" in message
    with pytest.raises(seahaven.WorldBug, match="claimed twice"):
        found.load(name)
    assert name in found.names()
    assert all(spec.name != name for spec in found.specs())
    claimants = sorted(spec.distribution or "" for spec in found.conflicts()[name])
    assert claimants == [f"alpha-{first}", f"beta-{second}"]
    assert any(f"alpha-{first}" in problem for problem in found.problems)
    # The conflict hides nothing else.
    assert found.get(ok_name) is not None
    assert found.load(ok_name).name == "bystander"


def test_a_name_claimed_by_a_plugin_and_an_entry_point_is_the_same_error(site: Path) -> None:
    name, module = publish(site, "claimed")
    manager = bare_manager()
    manager.register(ProvidesWorlds([(name, f"{module}:world")]), name="claimer")

    found = Registry.discover(manager)

    with pytest.raises(seahaven.WorldBug) as raised:
        found.get(name)
    assert "plugin claimer" in str(raised.value)
    assert f"dist-{module}" in str(raised.value)


def test_a_broken_entry_is_reported_on_load_and_hides_none_of_the_others(site: Path) -> None:
    raising = fresh_module("raising")
    write_module(site, raising, "raise RuntimeError('the database URL is not set')\n")
    not_a_world = fresh_module("not_a_world")
    write_module(site, not_a_world, "world = 42\n")
    missing = fresh_module("missing")
    write_dist_info(
        site,
        f"broken-{raising}",
        worlds={
            f"{raising}-r": f"{raising}:world",
            f"{raising}-n": f"{not_a_world}:world",
            f"{raising}-m": f"{missing}:world",
            f"{raising}-a": f"{not_a_world}:nothing_here",
        },
    )
    good, _ = publish(site, "good")

    found = Registry.discover(bare_manager())

    spec = found.get(f"{raising}-r")
    assert spec is not None
    with pytest.raises(seahaven.WorldBug) as raised:
        spec.load()
    message = str(raised.value)
    assert f"{raising}-r" in message
    assert f"broken-{raising}" in message
    assert "RuntimeError" in message
    assert "the database URL is not set" in message
    with pytest.raises(seahaven.WorldBug, match=r"not a seahaven\.World"):
        found.load(f"{raising}-n")
    with pytest.raises(seahaven.WorldBug, match="cannot import"):
        found.load(f"{raising}-m")
    with pytest.raises(seahaven.WorldBug, match="has no attribute 'nothing_here'"):
        found.load(f"{raising}-a")
    assert found.load(good).name == "good"


def test_an_entry_point_with_no_attribute_fails_on_load_naming_the_form(site: Path) -> None:
    module = fresh_module("bare")
    write_world(site, module, name="bare")
    write_dist_info(site, f"bare-{module}", worlds={module: module})

    found = Registry.discover(bare_manager())

    with pytest.raises(seahaven.WorldBug, match="module:attr"):
        found.load(module)


# --- the requirement on seahaven -----------------------------------------------------------------


def test_a_world_requiring_another_seahaven_is_reported(site: Path) -> None:
    name, module = publish(site, "future", requires=["seahaven>=99"])

    found = Registry.discover(bare_manager())

    spec = found.get(name)
    assert spec is not None
    assert spec.requires_seahaven == "seahaven>=99"
    problem = spec.version_problem()
    assert problem is not None
    assert "seahaven>=99" in problem
    assert f"seahaven {seahaven.__version__} is running" in problem
    assert f"dist-{module}" in problem
    assert problem in found.problems
    # A mismatch is reported, not refused: the world still loads.
    assert found.load(name).name == "future"


def test_a_satisfied_or_conditional_requirement_is_no_problem(site: Path) -> None:
    ok, _ = publish(site, "current", requires=[f"seahaven=={seahaven.__version__}"])
    extra_only, _ = publish(site, "extra", requires=['seahaven>=99; extra == "dev"', "pyyaml"])
    none, _ = publish(site, "plain")

    found = Registry.discover(bare_manager())

    for name in (ok, extra_only, none):
        spec = found.get(name)
        assert spec is not None
        assert spec.version_problem() is None
        assert not any(name in problem for problem in found.problems)
    spec = found.get(extra_only)
    assert spec is not None and spec.requires_seahaven is None


def test_version_problem_checks_against_the_version_given() -> None:
    spec = WorldSpec(
        name="w",
        value="w:world",
        distribution="w-dist",
        version="1.0",
        requires_seahaven="seahaven>=0.2,<0.3",
    )
    assert spec.version_problem("0.2.5") is None
    problem = spec.version_problem("0.3.0")
    assert problem is not None and "seahaven 0.3.0 is running" in problem


# --- worlds a plugin provides --------------------------------------------------------------------


def test_a_plugin_world_is_listed_beside_the_entry_point_ones_and_loaded_lazily(
    site: Path,
) -> None:
    entry_name, _ = publish(site, "published")
    module = fresh_module("provided")
    write_world(site, module, name="provided")
    manager = bare_manager()
    manager.register(ProvidesWorlds([(module, f"{module}:world")]), name="provider")

    found = Registry.discover(manager)

    assert {entry_name, module} <= set(found.names())
    spec = found.get(module)
    assert spec is not None
    assert spec.provider == "plugin provider"
    assert spec.distribution is None
    assert module not in sys.modules
    assert spec.load().name == "provided"


def test_a_plugin_whose_hook_fails_is_a_problem_that_hides_no_other_world(site: Path) -> None:
    class Failing:
        @seahaven.hookimpl
        def seahaven_worlds(self) -> object:
            raise RuntimeError("cannot reach the catalogue")

    module = fresh_module("kept")
    write_world(site, module, name="kept")
    manager = bare_manager()
    manager.register(Failing(), name="failing")
    manager.register(ProvidesWorlds([(module, f"{module}:world")]), name="working")
    manager.register(ProvidesWorlds([("half",), 7]), name="malformed")
    manager.register(ProvidesWorlds(None), name="silent")

    found = Registry.discover(manager)

    assert found.get(module) is not None
    problems = "\n".join(found.problems)
    assert "plugin 'failing' failed to list its worlds" in problems
    assert "cannot reach the catalogue" in problems
    assert "plugin 'malformed' listed ('half',)" in problems
    assert "plugin 'malformed' listed 7" in problems
    assert "plugin 'silent' failed to list its worlds" in problems


# --- the process's registry ----------------------------------------------------------------------


def test_the_process_registry_is_built_once_and_refresh_sees_new_installs(site: Path) -> None:
    first = registry_module.registry()
    assert registry_module.registry() is first
    name, _ = publish(site, "late")
    assert name not in first.names()

    registry_module.refresh()

    again = registry_module.registry()
    assert again is not first
    assert name in again.names()


def test_find_world_takes_a_registered_name(site: Path) -> None:
    name, module = publish(site, "found")

    found = find_world(name, registry=Registry.discover(bare_manager()))

    assert found.world.name == "found"
    assert (found.module, found.attribute, found.project) == (module, "world", None)
    registry_module.refresh()
    assert find_world(name).world is not None


def test_find_world_names_the_registered_worlds_when_a_name_is_unknown(site: Path) -> None:
    name, _ = publish(site, "known")

    with pytest.raises(seahaven.WorldBug) as raised:
        find_world("no-such-world", registry=Registry.discover(bare_manager()))
    assert "no world is registered as 'no-such-world'" in str(raised.value)
    assert name in str(raised.value)
    assert "module:attr" in str(raised.value)


def test_importing_a_world_module_that_raises_is_a_world_bug(site: Path) -> None:
    module = fresh_module("explodes")
    write_module(site, module, "raise ValueError('bad config')\n")

    with pytest.raises(seahaven.WorldBug) as raised:
        import_world(f"{module}:world")
    assert f"importing {module!r} raised ValueError: bad config" in str(raised.value)
