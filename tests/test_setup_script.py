"""``scripts/_venv.sh`` installs again only when something pip reads has changed.

The script is run as the demo and the tests run it, sourced by bash, in a copy of this
checkout's ``scripts/`` and of every ``pyproject.toml``, with a stand-in for the venv's
interpreter that records each ``pip install`` it is asked for. What is under test is the
script's decision to install or not, so the stand-in is all the interpreter it needs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent

# The stand-in interpreter: it appends its arguments to `asked`, one line per run, and
# exits with the status in `status` when that file exists (a failing pip).
STAND_IN = """#!/bin/sh
here=$(dirname "$0")
echo "$@" >> "$here/asked"
if [ -f "$here/status" ]; then exit "$(cat "$here/status")"; fi
"""


def make_checkout(root: Path) -> Path:
    """A copy of the scripts and the build files of every project, and a stand-in .venv."""
    checkout = root / "checkout"
    shutil.copytree(REPOSITORY / "scripts", checkout / "scripts")
    for pyproject in [REPOSITORY / "pyproject.toml", *REPOSITORY.glob("*/*/pyproject.toml")]:
        copy = checkout / pyproject.relative_to(REPOSITORY)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pyproject, copy)
    # .venv, and a .venv-NAME for each plugin that asks for an environment of its own.
    venvs = [checkout / ".venv"] + [
        checkout / f".venv-{pyproject.parent.name}"
        for pyproject in checkout.glob("plugins/*/pyproject.toml")
        if "\nown-environment = true" in pyproject.read_text(encoding="utf-8")
    ]
    for venv in venvs:
        python = venv / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text(STAND_IN, encoding="utf-8")
        python.chmod(0o755)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n", "utf-8")
    return checkout


def bash(checkout: Path, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in ``checkout``, in this environment without the variables the setup
    reads (so each test sets its own) and with ``env``."""
    ours = {"SEAHAVEN_REINSTALL", "PYTHON", "SEAHAVEN_INSTALLER"}
    return subprocess.run(
        ["bash", "-c", script],
        cwd=checkout,
        env={**{key: value for key, value in os.environ.items() if key not in ours}, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def source_setup(checkout: Path, **env: str) -> tuple[int, str]:
    """Source the copied ``_venv.sh`` as the scripts do; its exit status and stderr.

    The installs go to pip, whose stand-in counts them: which installer runs is
    tests/test_cli_usability.py's business, when an install runs is this file's.
    """
    env = {"SEAHAVEN_INSTALLER": "pip", **env}
    result = bash(checkout, "set -euo pipefail; source scripts/_venv.sh", **env)
    return result.returncode, result.stderr


def installs(checkout: Path, venv: str = ".venv") -> list[str]:
    """Every ``pip install`` the stand-in interpreter of ``venv`` was asked for, in order."""
    asked = checkout / venv / "bin" / "asked"
    return asked.read_text(encoding="utf-8").splitlines() if asked.exists() else []


def test_the_install_runs_once_then_again_only_when_a_pyproject_changes(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)

    status, stderr = source_setup(checkout)
    assert status == 0, stderr
    [first] = installs(checkout)
    assert first.startswith("-m pip install ") and "-e .[dev]" in first
    assert "-e plugins/openenv[test]" in first and "-e worlds/company/" in first
    assert "setup: .venv is ready" in stderr

    [own] = installs(checkout, ".venv-verifiers")
    assert own.startswith("-m pip install ") and own.endswith("-e plugins/verifiers")

    status, stderr = source_setup(checkout)
    assert status == 0, stderr
    assert len(installs(checkout)) == 1
    assert "setup: .venv is up to date" in stderr and "SEAHAVEN_REINSTALL=1" in stderr
    assert installs(checkout, ".venv-verifiers") == [own]

    # A new dependency (or entry point) is written in a pyproject.toml: pip must run again.
    pyproject = checkout / "worlds" / "company" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n# changed\n", "utf-8")
    status, stderr = source_setup(checkout)
    assert status == 0, stderr
    assert installs(checkout)[1:] == [first]

    status, _ = source_setup(checkout)
    assert status == 0 and len(installs(checkout)) == 2


def test_reinstall_is_forced_by_the_variable(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    assert source_setup(checkout)[0] == 0
    status, stderr = source_setup(checkout, SEAHAVEN_REINSTALL="1")
    assert status == 0, stderr
    assert len(installs(checkout)) == 2
    assert source_setup(checkout)[0] == 0 and len(installs(checkout)) == 2


def test_another_interpreter_or_a_new_project_installs_again(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    assert source_setup(checkout)[0] == 0
    (checkout / ".venv" / "pyvenv.cfg").write_text(
        "home = /usr/bin\nversion = 3.11.9\n", encoding="utf-8"
    )
    assert source_setup(checkout)[0] == 0
    assert len(installs(checkout)) == 2

    project = checkout / "plugins" / "newcomer"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "newcomer"\n', encoding="utf-8")
    assert source_setup(checkout)[0] == 0
    assert len(installs(checkout)) == 3 and "-e plugins/newcomer/" in installs(checkout)[-1]

    # A setup.py beside a pyproject.toml is read by pip too.
    (project / "setup.py").write_text("from setuptools import setup\nsetup()\n", encoding="utf-8")
    assert source_setup(checkout)[0] == 0
    assert len(installs(checkout)) == 4


def test_a_failed_install_is_run_again_next_time(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    assert source_setup(checkout)[0] == 0
    (checkout / "pyproject.toml").write_text(
        (checkout / "pyproject.toml").read_text(encoding="utf-8") + "\n# changed\n", "utf-8"
    )
    (checkout / ".venv" / "bin" / "status").write_text("3", encoding="utf-8")
    status, stderr = source_setup(checkout)
    assert status == 3
    assert "setup: pip could not install into .venv (exit status 3)" in stderr
    assert not (checkout / ".venv" / ".seahaven-install").exists()

    (checkout / ".venv" / "bin" / "status").unlink()
    assert source_setup(checkout)[0] == 0
    assert len(installs(checkout)) == 3
    assert source_setup(checkout)[0] == 0 and len(installs(checkout)) == 3


def test_a_failed_install_stops_a_script_that_does_not_stop_on_errors(tmp_path: Path) -> None:
    """Sourced with no ``set -e``, a failed install still returns its status and leaves no stamp."""
    checkout = make_checkout(tmp_path)
    (checkout / ".venv" / "bin" / "status").write_text("2", encoding="utf-8")
    result = bash(checkout, "source scripts/_venv.sh; echo after $?")
    assert result.stdout == "after 2\n"
    assert not (checkout / ".venv" / ".seahaven-install").exists()
