"""``seahaven.agents`` is the seahaven-agents plugin; without it, ``--model`` names the install."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import seahaven
from seahaven import cli

runner = CliRunner()


def plugin_installed() -> bool:
    try:
        importlib.import_module("seahaven_agents")
    except ModuleNotFoundError:
        return False
    return True


def test_without_the_plugin_the_import_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "seahaven.agents", raising=False)
    monkeypatch.delattr(seahaven, "agents", raising=False)
    monkeypatch.setitem(sys.modules, "seahaven_agents", None)  # as if it were not installed
    with pytest.raises(ImportError) as raised:
        importlib.import_module("seahaven.agents")
    assert 'pip install "seahaven[agents]"' in str(raised.value)
    assert raised.value.name == "seahaven.agents"


def test_eval_with_a_model_but_no_plugin_is_one_line_naming_the_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delitem(sys.modules, "seahaven.agents", raising=False)
    monkeypatch.delattr(seahaven, "agents", raising=False)
    monkeypatch.setitem(sys.modules, "seahaven_agents", None)
    out = tmp_path / "r.jsonl"
    ran = runner.invoke(
        cli.build_app(),
        [
            "eval",
            "company",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            str(out),
        ],
    )
    assert ran.exit_code == 1
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pip install -e plugins/agents" in lines[0] and "seahaven[agents]" in lines[0]
    assert not out.exists()


def test_the_agent_options_go_with_a_model_and_the_agent_is_one_of_two(tmp_path: Path) -> None:
    out = str(tmp_path / "r.jsonl")
    policy = ["--policy", "seahaven.evaluation:solution_policy"]
    both = runner.invoke(
        cli.build_app(), ["eval", "company", *policy, "--model", "m", "--out", out]
    )
    assert both.exit_code == 2 and "one of them, not both" in both.output
    neither = runner.invoke(cli.build_app(), ["eval", "company", "--out", out])
    assert neither.exit_code == 2 and "--policy MODULE:FUNCTION, or --model NAME" in neither.output
    stray = runner.invoke(
        cli.build_app(), ["eval", "company", *policy, "--temperature", "0.5", "--out", out]
    )
    assert stray.exit_code == 2 and "--temperature configure --model" in stray.output
    served = runner.invoke(
        cli.build_app(),
        ["eval", "company", *policy, "--url", "http://127.0.0.1:9", "-j", "4", "--out", out],
    )
    assert served.exit_code == 2 and "--concurrency runs trials at once" in served.output
    kept = runner.invoke(
        cli.build_app(),
        [
            "eval",
            "company",
            *policy,
            "--ray",
            "local",
            "--transcripts",
            str(tmp_path / "t.jsonl"),
            "--out",
            out,
        ],
    )
    assert kept.exit_code == 2 and "transcripts are kept for trials in this process" in kept.output
    assert not Path(out).exists()


def test_the_command_line_does_not_import_openai() -> None:
    # Building the command line is on every command's path: the model's SDK is imported only
    # when --model runs.
    probe = "import sys, seahaven.cli; seahaven.cli.build_app(); print('openai' in sys.modules)"
    found = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert found.stdout.strip() == "False"


def test_with_the_plugin_seahaven_agents_is_its_package() -> None:
    if not plugin_installed():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("seahaven-agents is not installed; CI installs plugins/agents")
        pytest.skip("seahaven-agents is not installed: pip install -e plugins/agents")
    module = importlib.import_module("seahaven.agents")
    import seahaven_agents

    assert module is seahaven_agents
    assert module.ChatAgent is seahaven_agents.ChatAgent
