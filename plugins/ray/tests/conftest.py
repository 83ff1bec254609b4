"""Shared by the plugin's tests: Ray when it is installed (required under CI), a local cluster.

Outside CI a missing Ray skips the tests that need it; with ``CI=true`` it
fails them, so a broken install never passes as a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def need_ray() -> Any:
    """The ``ray`` module; a skip when it is missing, a failure when CI is set."""
    if os.environ.get("CI", "").lower() == "true":
        import ray

        return ray
    return pytest.importorskip("ray", reason="Ray is not installed: pip install 'seahaven[ray]'")


def worker_env(*extra: Path) -> dict[str, str]:
    """Environment for Ray workers: this folder importable, so policies unpickle by reference.

    ``extra`` folders go on the workers' path too (an installed distribution a test made).
    """
    parts = (*(str(path) for path in extra), str(HERE), os.environ.get("PYTHONPATH"))
    return {"PYTHONPATH": os.pathsep.join(part for part in parts if part)}


@pytest.fixture(scope="module")
def worker_paths() -> list[Path]:
    """Folders the module's Ray workers import from beside this one; a module may override it."""
    return []


@pytest.fixture(scope="module")
def ray_cluster(worker_paths: list[Path]) -> Iterator[Any]:
    """A local Ray cluster for one test module: 2 CPUs, no dashboard; shut down afterwards."""
    ray = need_ray()
    if ray.is_initialized():
        ray.shutdown()
    # A cluster of the test run's own, never one a developer started with ``ray start``.
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        runtime_env={"env_vars": worker_env(*worker_paths)},
    )
    try:
        yield ray
    finally:
        ray.shutdown()
