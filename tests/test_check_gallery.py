"""``seahaven check`` over the gallery: one tiny broken project per lint code.

Each directory under ``check_gallery/`` is a project of its own (a
``pyproject.toml`` and a package with a unique name) and ``expected.txt``
holds the code, severity and location of every finding it must produce, in
printed order; the clean project expects none. A case with ``setup_case.py``
freezes a fixture first and then breaks it, so no fixture is committed with a
hash that a change to the framework's schema hashing would silently stale.
Every case runs the real command in a subprocess of its own, so no two
gallery packages ever share ``sys.modules``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seahaven.check.plugin import BUILTIN_RULES

GALLERY = Path(__file__).parent / "check_gallery"
CLEAN = "no findings: every lint passed"
CASES = sorted(folder.name for folder in GALLERY.iterdir() if (folder / "pyproject.toml").is_file())


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # Nothing the gallery imports may leave bytecode behind in the copy, or reach the
    # developer's own site customisations.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def run_case(case: str, workspace: Path) -> subprocess.CompletedProcess[str]:
    """Copy a gallery project, prepare it, and run ``seahaven check`` in it."""
    project = workspace / case
    shutil.copytree(GALLERY / case, project)
    setup = project / "setup_case.py"
    if setup.is_file():
        prepared = subprocess.run(
            [sys.executable, str(setup)],
            cwd=project,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert prepared.returncode == 0, prepared.stderr
    return subprocess.run(
        [sys.executable, "-m", "seahaven.cli", "check"],
        cwd=project,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def expected_lines(case: str) -> list[str]:
    """The case's findings as ``CODE severity location``, in the order they print."""
    return (GALLERY / case / "expected.txt").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("case", CASES)
def test_gallery_case_reports_exactly_its_findings(case: str, tmp_path: Path) -> None:
    result = run_case(case, tmp_path)
    printed = result.stdout.splitlines()
    if not expected_lines(case):
        # A clean world says so, in one line, and says nothing else.
        assert printed == [CLEAN]
        printed = []

    assert result.stderr == ""
    # Every line is code, severity and location, then the message, then the fix.
    heads = [line.split("  ", 1)[0] for line in printed]
    assert heads == expected_lines(case)
    for line in printed:
        _, message, fix = line.split("  ", 2)
        assert message.strip() and "\n" not in message
        assert fix.startswith("fix: ") and len(fix) > len("fix: ")
    errors = [head for head in heads if head.split(" ")[1] == "error"]
    assert result.returncode == (1 if errors else 0)


def test_every_code_has_a_case_that_reports_it_alone() -> None:
    codes = {rule.code for rule in BUILTIN_RULES} | {"SH501"}
    alone = {
        lines[0].split(" ")[0]
        for lines in (expected_lines(case) for case in CASES)
        if lines and len({line.split(" ")[0] for line in lines}) == 1
    }
    assert codes - alone == set()
    assert any(not expected_lines(case) for case in CASES), "the gallery needs a clean world"


def test_gallery_packages_never_share_a_name() -> None:
    packages = [
        package.name
        for case in CASES
        for package in (GALLERY / case / "src").iterdir()
        if package.is_dir()
    ]
    assert len(packages) == len(set(packages))
