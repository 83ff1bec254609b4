"""The repository holds what it ships: no leftovers of a patch applied by hand."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a patch tool leaves beside the file it patched: the original, and the hunks it refused.
LEFTOVERS = ("*.orig", "*.rej")
# Folders that are made, not written: environments, caches and builds.
MADE = {".git", ".venv", ".tox", "build", "dist", "node_modules", "__pycache__"}


def test_no_patch_leftovers_are_in_the_tree() -> None:
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if name not in MADE and not name.endswith((".egg-info", "_cache"))
        ]
        found += [
            str(Path(folder, name).relative_to(ROOT))
            for name in files
            if any(Path(name).match(pattern) for pattern in LEFTOVERS)
        ]
    assert found == []


def test_git_ignores_patch_leftovers() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert set(LEFTOVERS) <= set(ignored)
