"""Run every test session the project has: the framework's suite, each world's, each plugin's.

Each first-party plugin, each world and each example extension is its own
distribution with its own project directory, so its tests run as their own
pytest session from that directory (where the pytest plugin's `world` fixture
finds a world by convention). Exits non-zero if any session fails. Extra
arguments are passed to every pytest session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sessions() -> list[tuple[str, Path, list[str]]]:
    found = [("framework", ROOT, ["tests"])]
    for folder, label in (("plugins", "plugin"), ("worlds", "world"), ("examples", "example")):
        projects = ROOT / folder
        if not projects.is_dir():
            continue
        for project in sorted(projects.iterdir()):
            if (project / "pyproject.toml").is_file() and (project / "tests").is_dir():
                found.append((f"{label} {project.name}", project, ["tests"]))
    return found


def main(argv: list[str]) -> int:
    failed = []
    for label, directory, targets in sessions():
        print(
            f"\n=== {label}: pytest {' '.join(targets)} (in {directory.relative_to(ROOT) or '.'})",
            flush=True,
        )
        result = subprocess.run(
            # -rs: every skip is listed with its reason, so a run shows what it left out.
            [sys.executable, "-m", "pytest", "-rs", *targets, *argv],
            cwd=directory,
            check=False,
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
