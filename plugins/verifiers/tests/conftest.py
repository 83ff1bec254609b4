"""Helpers for the verifiers plugin's tests: the plugin's own environment, driven from outside.

verifiers 0.4 cannot share the main environment (it pins ``mcp==2.0.0``, which
OpenEnv and ``seahaven-mcp`` cannot take), so ``scripts/_venv.sh`` installs
the plugin into ``.venv-verifiers`` beside ``.venv``. These tests run from the
main environment and start ``vf-eval`` and Python from that one, as a user's
shell would; ``SEAHAVEN_VERIFIERS_VENV`` points elsewhere. Without it they
skip, and fail under ``CI=true``. Under tox (another interpreter's suite) they
skip: the environment is the 3.11 one, and they run once, from ``.venv``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
# A cold interpreter imports verifiers, the framework and the company world.
BOUND_SECONDS = 600


def verifiers_venv() -> Path:
    """The environment the plugin is installed in; a skip (CI: a failure) when there is none."""
    if os.environ.get("TOX_ENV_NAME"):
        pytest.skip("the verifiers plugin's tests run once, from .venv, not under tox")
    venv = Path(os.environ.get("SEAHAVEN_VERIFIERS_VENV", ROOT / ".venv-verifiers"))
    if (venv / "bin" / "vf-eval").is_file():
        return venv
    message = f"{venv} holds no vf-eval: scripts/_venv.sh makes it (the plugin's own environment)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def offline_env(tmp: Path, **extra: str) -> dict[str, str]:
    """This environment, offline, instances on disk under ``tmp/instances``, HOME in ``tmp``."""
    instances = tmp / "instances"
    instances.mkdir(exist_ok=True)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SEAHAVEN_")}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("VIRTUAL_ENV", None)
    env.update(SEAHAVEN_STORAGE="disk", TMPDIR=str(instances), HOME=str(home), NO_COLOR="1")
    env.update(extra)
    return env


def run_python(tmp: Path, code: str) -> Any:
    """Run ``code`` with the plugin's environment's Python; the JSON it prints last."""
    python = verifiers_venv() / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", code],
        cwd=tmp,
        env=offline_env(tmp),
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def instances_left(tmp: Path) -> list[Path]:
    """Every instance store left under the runs' temporary directory."""
    return sorted((tmp / "instances").rglob("*.sqlite"))
