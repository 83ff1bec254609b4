"""Run every test session the project has: the framework's suite, each world's, each plugin's.

Each world and each first-party plugin is its own distribution with its own
project directory, so its tests run as their own pytest session from that
directory (where, for a world, the plugin's `world` fixture finds the world by
convention). Exits non-zero if any session
fails. Extra arguments are passed to every pytest session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sessions() -> list[tuple[str, Path, list[str]]]:
    found = [("framework", ROOT, ["tests"])]
    worlds = ROOT / "worlds"
    if worlds.is_dir():
        for project in sorted(worlds.iterdir()):
            if (project / "pyproject.toml").is_file() and (project / "tests").is_dir():
                found.append((f"world {project.name}", project, ["tests"]))
    plugins = ROOT / "plugins"
    if plugins.is_dir():
        for project in sorted(plugins.iterdir()):
            if (project / "pyproject.toml").is_file() and (project / "tests").is_dir():
                found.append((f"plugin {project.name}", project, ["tests"]))
    return found


def main(argv: list[str]) -> int:
    failed = []
    for label, directory, targets in sessions():
        print(
            f"\n=== {label}: pytest {' '.join(targets)} (in {directory.relative_to(ROOT) or '.'})",
            flush=True,
        )
        result = subprocess.run(
            [sys.executable, "-m", "pytest", *targets, *argv], cwd=directory, check=False
        )
        if result.returncode != 0:
            failed.append(label)
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("\nall test sessions passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
