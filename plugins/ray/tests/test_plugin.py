"""The plugin is found through its entry point and adds ``seahaven episodes``."""

from __future__ import annotations

import importlib_metadata
import pytest

from seahaven.cli import main
from seahaven.registry.plugins import make_plugin_manager


def test_the_entry_point_registers_the_plugin() -> None:
    [entry] = [
        ep for ep in importlib_metadata.entry_points(group="seahaven.plugins") if ep.name == "ray"
    ]
    assert entry.value == "seahaven_ray.plugin"
    manager = make_plugin_manager()
    assert manager.has_plugin("ray")
    assert manager.origin("ray").distribution == "seahaven-ray"
    assert not [problem for problem in manager.load_problems if "ray" in problem]


def test_seahaven_lists_the_episodes_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "episodes" in capsys.readouterr().out
    assert main(["episodes", "run", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("--episodes", "--out", "--ray", "--resume", "--workers"):
        assert option in shown


def test_the_plugin_gives_the_episode_file_runner_and_no_command_of_its_own() -> None:
    import seahaven_ray.plugin

    manager = make_plugin_manager()
    runner = manager.hook.seahaven_episode_file_runner(address="local")
    assert callable(runner)
    # The command is the core's: the plugin only runs the file elsewhere.
    assert not hasattr(seahaven_ray.plugin, "seahaven_cli")
