"""``seahaven check`` finds nothing to fix in the company world."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import company_world
import pytest

from seahaven import check

PROJECT = Path(__file__).resolve().parent.parent


def test_check_is_clean_for_the_world() -> None:
    findings = check.run(None, PROJECT)
    assert [finding.code for finding in findings] == []


def test_the_check_command_exits_zero_from_the_world_s_directory() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seahaven.cli", "check"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "no findings: every lint passed\n",
        "",
    )


def test_check_would_report_a_damaged_fixture_of_this_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same rules over a copy of the world whose fixtures were damaged: a clean run
    # above means clean, not unlooked-at.
    fixtures = tmp_path / "fixtures"
    shutil.copytree(company_world.world.fixtures_dir, fixtures)
    state = fixtures / "acme" / "state.payments.sqlite"
    state.chmod(0o644)
    state.write_bytes(state.read_bytes() + b"\0")
    (tmp_path / "damaged_company.py").write_text(
        "import copy\n"
        "import company_world\n"
        "world = copy.copy(company_world.world)\n"
        f"world.fixtures_dir = {str(fixtures)!r}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    findings = check.run("damaged_company:world", tmp_path)
    damaged = [finding for finding in findings if finding.code == "SH402"]
    assert len(damaged) == 1
    assert "payments" in damaged[0].message
