"""The ``seahaven`` app itself: ``--version``, help, usage errors, ``docs``, and ``main``."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import seahaven
from seahaven import cli
from seahaven.cli.docs import docs_directory
from seahaven.registry import plugins

runner = CliRunner()


def app() -> typer.Typer:
    """The command line with the default plugins and nothing installed beside them."""
    return cli.build_app(plugins.make_plugin_manager(entry_points=False))


def test_version_prints_the_installed_version() -> None:
    result = runner.invoke(app(), ["--version"])

    assert result.exit_code == 0
    assert result.stdout == f"seahaven {seahaven.__version__}\n"
    assert result.stderr == ""


def test_help_lists_the_commands_in_their_order_with_whole_summaries() -> None:
    from seahaven.cli import COMMAND_ORDER

    result = runner.invoke(app(), ["-h"])

    assert result.exit_code == 0
    listing = result.stdout.split("Commands:", 1)[1]
    names = [
        line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line[2] != " "
    ]
    # Every command is listed, the built-in ones in their deliberate order (not by name).
    assert names == [name for name in COMMAND_ORDER if name in names]
    assert names.index("worlds") < names.index("episodes") < names.index("docs")
    assert "episode" not in names  # the old name is gone
    assert "..." not in listing
    # A summary is its command's whole first paragraph, wrapped rather than cut.
    assert (
        "Scaffold a world: a package with a table, two tools, a test, a generator and a "
        "server app." in " ".join(listing.split())
    )


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--no-such-option"],
        ["no-such-command"],
        ["worlds"],
        ["worlds", "show", "payments", "--world", "chat"],
        ["fixture", "create", "notes"],
        ["docs", "extra"],
    ],
)
def test_a_usage_error_exits_2(argv: list[str]) -> None:
    result = runner.invoke(app(), argv)

    assert result.exit_code == 2
    assert "Usage: " in result.output
    assert "Traceback" not in result.output


def test_docs_prints_the_bundled_docs_directory_and_nothing_else() -> None:
    result = runner.invoke(app(), ["docs"])

    assert result.exit_code == 0
    assert result.stderr == ""
    printed = Path(result.stdout.rstrip("\n"))
    assert result.stdout == f"{printed}\n"
    assert printed.is_absolute()
    assert printed == docs_directory()
    # The docs this project writes are in it.
    assert (printed / "cli.md").is_file()
    assert (printed / "publishing.md").is_file()


def test_docs_fails_with_one_line_when_the_docs_are_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import seahaven.cli.docs

    monkeypatch.setattr(seahaven.cli.docs, "__file__", str(tmp_path / "cli" / "docs.py"))

    result = runner.invoke(app(), ["docs"])

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: the bundled docs are missing")
    assert "reinstall seahaven" in result.stderr


# --- main ----------------------------------------------------------------------------------------


def test_main_returns_zero_on_success(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"seahaven {seahaven.__version__}\n"


def test_main_returns_two_on_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--no-such-option"]) == 2
    captured = capsys.readouterr()
    assert "No such option: --no-such-option" in captured.err
    assert "Traceback" not in captured.err


def test_main_returns_one_with_one_line_on_a_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert cli.main(["fixture", "list"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("error: no pyproject.toml at or above")
    assert "--world" in captured.err


def test_main_reports_a_plugin_that_breaks_the_app_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        @seahaven.hookimpl
        def seahaven_cli(self, app: typer.Typer) -> None:
            raise RuntimeError("the plugin is broken")

    manager = plugins.make_plugin_manager(entry_points=False)
    manager.register(Broken(), name="broken")
    monkeypatch.setattr(cli, "plugin_manager", lambda: manager)

    assert cli.main(["--version"]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert "RuntimeError: the plugin is broken" in captured.err
    assert "Traceback" not in captured.err


def test_find_world_is_reachable_from_the_cli_module() -> None:
    from seahaven.registry.discovery import find_world

    assert cli.find_world is find_world


def test_a_first_party_plugins_command_without_the_plugin_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from typer.testing import CliRunner

    from seahaven.cli import build_app
    from seahaven.registry.plugins import make_plugin_manager

    real_find_spec = importlib.util.find_spec
    missing = {"seahaven_openenv", "seahaven_mcp", "seahaven_ray"}
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name in missing else real_find_spec(name, *args),
    )
    app = build_app(make_plugin_manager(entry_points=False))
    for argv, plugin, extra in (
        (["serve", "--world", "payments", "--port", "9"], "seahaven-openenv", "serve"),
        (["mcp", "--fixture", "x"], "seahaven-mcp", "mcp"),
    ):
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 1, result.output
        assert result.output.strip().splitlines() == [
            f"error: seahaven {argv[0]} comes with the {plugin} plugin, which is not installed; "
            f'install it with: pip install "seahaven[{extra}]"'
        ]


def test_an_installed_plugin_that_lacks_a_command_says_to_upgrade() -> None:
    from typer.testing import CliRunner

    from seahaven.cli import build_app
    from seahaven.registry.plugins import make_plugin_manager

    # The plugins' packages are installed here, but no entry points are loaded.
    result = CliRunner().invoke(build_app(make_plugin_manager(entry_points=False)), ["mcp"])
    assert result.exit_code == 1
    assert "pip install --upgrade" in result.output
