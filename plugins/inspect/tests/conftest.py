"""Helpers for the Inspect plugin's tests: ``inspect eval`` as a real command, offline.

Every run writes its log under the test's temporary directory and keeps its
instances on disk under a temporary directory of its own (``TMPDIR``), so a
test can see that none is left behind. Inspect must not reach the network:
``mockllm/model`` counts tokens with tiktoken's ``o200k_base``, which tiktoken
downloads unless it finds the file in ``TIKTOKEN_CACHE_DIR``; litellm's wheel
(the plugin's test extra) ships that file as such a cache, and the runs point
there. Without it the tests that need it skip, and fail under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

HERE = Path(__file__).resolve().parent

# A cold interpreter imports Inspect, the framework and the company world.
BOUND_SECONDS = 600

_INSPECT = Path(sys.executable).with_name("inspect")


def tiktoken_cache() -> Path:
    """A folder holding tiktoken's o200k_base as a cache file; a skip (CI: a failure) if none."""
    found = importlib.util.find_spec("litellm")  # located, not imported: it fetches on import
    if found is not None and found.submodule_search_locations:
        folder = Path(next(iter(found.submodule_search_locations)))
        cache = folder / "litellm_core_utils" / "tokenizers"
        if (cache / "fb374d419588a4632f3f557e76b4b70aebbca790").is_file():
            return cache
    message = (
        "litellm (the plugin's test extra) is not installed: pip install -e 'plugins/inspect[test]'"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def offline_env(tmp: Path, **extra: str) -> dict[str, str]:
    """This environment, offline, with instances on disk under ``tmp/instances``."""
    instances = tmp / "instances"
    instances.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SEAHAVEN_")}
    env.pop("PYTEST_ADDOPTS", None)
    env.update(
        SEAHAVEN_STORAGE="disk",
        TMPDIR=str(instances),
        HF_HUB_OFFLINE="1",
        INSPECT_LOG_DIR=str(tmp / "logs"),
        INSPECT_DISPLAY="plain",
        HOME=str(tmp / "home"),
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def inspect_eval(tmp: Path, *args: str, **env: str) -> EvalLog:
    """Run ``inspect eval ARGS`` as a command; the one log it wrote."""
    logs = tmp / "logs"
    command = [str(_INSPECT), "eval", *args, "--log-dir", str(logs), "--log-format", "json"]
    done = subprocess.run(
        command,
        cwd=tmp,
        env=offline_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    written = sorted(logs.glob("*.json"))
    assert len(written) == 1, (written, done.stdout[-2000:])
    return read_eval_log(str(written[0]))


def instances_left(tmp: Path) -> list[Path]:
    """Every instance store left under the runs' temporary directory."""
    return sorted((tmp / "instances").rglob("*.sqlite"))
