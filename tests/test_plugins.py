"""Plugins: the default ones, a throwaway one on a fresh manager, and one published by a package."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner
from world_packages import fresh_module, on_sys_path, write_dist_info, write_module, write_world

import seahaven
from seahaven.cli import build_app
from seahaven.registry import Registry, plugins


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` that plays the part of site-packages."""
    directory = tmp_path / "site"
    directory.mkdir()
    with on_sys_path(directory):
        yield directory


def publish_plugin(site: Path, source: str, *, plugin_name: str | None = None) -> tuple[str, str]:
    """Write a plugin module and a distribution publishing it; return (plugin name, dist)."""
    module = fresh_module("plugin")
    write_module(site, module, source)
    name = plugin_name or module
    distribution = f"seahaven-plugin-{module}"
    write_dist_info(site, distribution, "0.4.2", plugins={name: module})
    return name, distribution


# --- the defaults --------------------------------------------------------------------------------


def test_the_default_plugins_are_registered_like_any_other() -> None:
    manager = plugins.make_plugin_manager(entry_points=False)

    assert plugins.DEFAULT_PLUGINS
    for name in plugins.DEFAULT_PLUGINS:
        assert manager.get_plugin(name) is importlib.import_module(name)
        assert manager.origin(name).distribution is None
    implementers = {impl.plugin_name for impl in manager.hook.seahaven_cli.get_hookimpls()}
    assert {"seahaven.cli.worlds", "seahaven.cli.fixture", "seahaven.cli.docs"} <= implementers
    assert manager.load_problems == []


def test_a_manager_can_start_without_defaults_or_entry_points() -> None:
    manager = plugins.make_plugin_manager(defaults=(), entry_points=False)

    assert manager.get_plugins() == set()
    assert manager.hook.seahaven_worlds() == []


def test_the_process_manager_is_built_once_and_refresh_rebuilds_it() -> None:
    first = plugins.plugin_manager()
    assert plugins.plugin_manager() is first
    plugins.refresh()
    try:
        assert plugins.plugin_manager() is not first
    finally:
        plugins.refresh()


# --- a throwaway plugin on a fresh manager -------------------------------------------------------


class Greeter:
    """A plugin adding one command and one lint rule."""

    @seahaven.hookimpl
    def seahaven_cli(self, app: typer.Typer) -> None:
        @app.command("greet")
        def greet(name: str) -> None:
            """Say hello."""
            typer.echo(f"hello, {name}")

    @seahaven.hookimpl
    def seahaven_lint_rules(self) -> list[str]:
        return ["no-greetings-in-schemas"]


def test_a_throwaway_plugin_adds_a_command_and_lint_rules() -> None:
    manager = plugins.make_plugin_manager(entry_points=False)
    manager.register(Greeter(), name="greeter")

    result = CliRunner().invoke(build_app(manager), ["greet", "ada"])

    assert result.exit_code == 0, result.output
    assert result.stdout == "hello, ada\n"
    assert ["no-greetings-in-schemas"] in manager.hook.seahaven_lint_rules()
    # The built-in commands are there beside it.
    help_text = CliRunner().invoke(build_app(manager), ["--help"]).stdout
    for command in ("greet", "worlds", "fixture", "docs"):
        assert command in help_text


def test_a_command_is_absent_without_its_plugin() -> None:
    result = CliRunner().invoke(
        build_app(plugins.make_plugin_manager(entry_points=False)), ["greet"]
    )

    assert result.exit_code == 2
    assert "No such command 'greet'" in result.stderr


def test_a_hook_implementation_with_a_misspelt_name_is_reported() -> None:
    class Misspelt:
        @seahaven.hookimpl
        def seahaven_world(self) -> list[tuple[str, str]]:
            return []

    manager = plugins.make_plugin_manager(defaults=(), entry_points=False)
    manager.register(Misspelt(), name="misspelt")
    manager.check_hook_names()

    assert len(manager.load_problems) == 1
    problem = manager.load_problems[0]
    assert "plugin 'misspelt' implements seahaven_world" in problem
    assert "seahaven_worlds" in problem


# --- a plugin published through an entry point ---------------------------------------------------


def test_an_entry_point_plugin_adds_worlds_and_commands(site: Path) -> None:
    world_module = fresh_module("plugged")
    write_world(site, world_module, name="plugged")
    world_name = world_module.replace("_", "-")
    plugin_name, distribution = publish_plugin(
        site,
        f'''
        import typer

        import seahaven


        @seahaven.hookimpl
        def seahaven_worlds():
            return [({world_name!r}, "{world_module}:world")]


        @seahaven.hookimpl
        def seahaven_cli(app):
            @app.command("wave")
            def wave() -> None:
                """Wave."""
                typer.echo("the plugin waves")
        ''',
    )

    manager = plugins.make_plugin_manager()

    assert manager.get_plugin(plugin_name) is sys.modules[plugin_name]
    origin = manager.origin(plugin_name)
    assert (origin.distribution, origin.version) == (distribution, "0.4.2")
    assert manager.load_problems == []
    spec = Registry.discover(manager).get(world_name)
    assert spec is not None
    assert (spec.distribution, spec.version) == (distribution, "0.4.2")
    assert spec.provider == f"plugin {plugin_name}"
    assert spec.load().name == "plugged"
    result = CliRunner().invoke(build_app(manager), ["wave"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "the plugin waves\n"


def test_a_plugin_that_fails_to_load_is_recorded_and_the_others_still_load(site: Path) -> None:
    broken_name, broken_dist = publish_plugin(site, "raise ImportError('needs libfoo')\n")
    working_name, _ = publish_plugin(
        site,
        """
        import seahaven


        @seahaven.hookimpl
        def seahaven_lint_rules():
            return ["rule"]
        """,
    )

    manager = plugins.make_plugin_manager()

    assert manager.get_plugin(working_name) is not None
    assert manager.get_plugin(broken_name) is None
    assert len(manager.load_problems) == 1
    problem = manager.load_problems[0]
    assert f"plugin {broken_name!r} ({broken_dist} 0.4.2) failed to load" in problem
    assert "needs libfoo" in problem
    assert "fix or uninstall it" in problem


def test_a_plugin_with_a_bad_hook_signature_is_recorded(site: Path) -> None:
    name, _ = publish_plugin(
        site,
        """
        import seahaven


        @seahaven.hookimpl
        def seahaven_cli(application):
            pass
        """,
    )

    manager = plugins.make_plugin_manager()

    assert manager.get_plugin(name) is None
    assert any(name in problem and "failed to load" in problem for problem in manager.load_problems)


def test_two_plugins_under_one_name_load_the_first_and_report_the_second(site: Path) -> None:
    shared = fresh_module("shared")
    publish_plugin(site, "", plugin_name=shared)
    publish_plugin(site, "", plugin_name=shared)

    manager = plugins.make_plugin_manager()

    assert manager.get_plugin(shared) is not None
    assert len([p for p in manager.load_problems if "same name" in p]) == 1


def test_a_blocked_plugin_is_not_loaded(site: Path) -> None:
    name, _ = publish_plugin(site, "raise RuntimeError('must not be imported')\n")
    manager = plugins.make_plugin_manager(entry_points=False)
    manager.set_blocked(name)

    manager.load_entry_points()

    assert manager.get_plugin(name) is None
    assert manager.load_problems == []


def test_a_broken_plugin_is_a_warning_on_every_command(site: Path) -> None:
    publish_plugin(site, "raise ImportError('needs libfoo')\n")

    result = CliRunner().invoke(build_app(plugins.make_plugin_manager()), ["docs"])

    assert result.exit_code == 0
    assert result.stderr.startswith("warning: plugin ")
    assert "needs libfoo" in result.stderr
    assert result.stdout.strip() != ""


def test_a_default_plugin_that_fails_to_import_is_recorded_not_raised() -> None:
    manager = plugins.make_plugin_manager(
        defaults=("seahaven.cli.docs", "seahaven.no_such_module"), entry_points=False
    )

    assert manager.get_plugin("seahaven.cli.docs") is not None
    assert len(manager.load_problems) == 1
    assert (
        "the built-in plugin 'seahaven.no_such_module' failed to load" in manager.load_problems[0]
    )
