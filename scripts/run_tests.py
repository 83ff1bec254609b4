"""Run every test session the project has: the framework's suite, each world's, each plugin's.

Each first-party plugin, each world and each example extension is its own
distribution with its own project directory, so its tests run as their own
pytest session from that directory (where the pytest plugin's `world` fixture
finds a world by convention). Exits non-zero if any session fails. Extra
arguments are passed to every pytest session.

A plugin whose ``pyproject.toml`` says ``own-environment = true`` (its
dependencies cannot share the main environment) runs its tests with the
interpreter of ``.venv-NAME``, which ``scripts/_venv.sh`` makes, once: under tox
(another interpreter's suite) it is left out, and said so.
"""

from __future__ import annotations

import os
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


def own_environment(project: Path) -> bool:
    """Whether a project's tests run in an environment of its own (``.venv-NAME``)."""
    text = (project / "pyproject.toml").read_text(encoding="utf-8")
    return any(line.strip() == "own-environment = true" for line in text.splitlines())


def interpreter(label: str, directory: Path) -> str | None:
    """The Python a session runs with; ``None`` (said why) when it does not run here."""
    if directory == ROOT or not own_environment(directory):
        return sys.executable
    if os.environ.get("TOX_ENV_NAME"):
        print(f"{label}: runs once, in .venv-{directory.name}, not under tox", flush=True)
        return None
    python = ROOT / f".venv-{directory.name}" / "bin" / "python"
    if python.is_file():
        return str(python)
    message = f"{label}: .venv-{directory.name} is missing; scripts/_venv.sh makes it"
    if os.environ.get("CI", "").lower() == "true":
        raise SystemExit(message)
    print(message, flush=True)
    return None


def main(argv: list[str]) -> int:
    failed = []
    for label, directory, targets in sessions():
        print(
            f"\n=== {label}: pytest {' '.join(targets)} (in {directory.relative_to(ROOT) or '.'})",
            flush=True,
        )
        python = interpreter(label, directory)
        if python is None:
            continue
        result = subprocess.run(
            # -rs: every skip is listed with its reason, so a run shows what it left out.
            [python, "-m", "pytest", "-rs", *targets, *argv],
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
