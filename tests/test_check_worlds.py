"""``seahaven check`` is clean on the project's own worlds: payments, chat, company, projecttracker.

Each world is checked the way its author would check it: ``seahaven check``
run in the world's own directory, in a process of its own, from the checkout
rather than an installed copy. A world that is not in the tree yet is skipped
with the reason, never passed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORLDS = Path(__file__).resolve().parent.parent / "worlds"


@pytest.mark.parametrize("name", ["payments", "chat", "company", "projecttracker"])
def test_check_is_clean_on_the_world(name: str) -> None:
    directory = WORLDS / name
    if not (directory / "pyproject.toml").is_file():
        pytest.skip(f"worlds/{name} has no pyproject.toml yet, so there is no world to check")
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "seahaven.cli", "check"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.stdout, result.stderr, result.returncode) == (
        "no findings: every lint passed\n",
        "",
        0,
    )
