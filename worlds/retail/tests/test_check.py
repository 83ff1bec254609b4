"""``seahaven check`` finds nothing to fix in the retail world: schema, tools, fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from seahaven import check

PROJECT = Path(__file__).resolve().parent.parent


def test_check_is_clean_for_the_world() -> None:
    findings = check.run(None, PROJECT)
    assert [(finding.code, finding.message) for finding in findings] == []


def test_the_check_command_exits_zero_naming_the_world() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seahaven.cli", "check", "retail"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "no findings: every lint passed\n",
        "",
    )
