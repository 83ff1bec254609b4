"""The tests' Ray cluster is their own, whatever cluster the environment names.

A developer who ran ``ray start`` (or exported ``RAY_ADDRESS``) must not have the test
run join that cluster: ``ray.init()`` with no address would. Here ``RAY_ADDRESS`` names
another "cluster", a listener of the test's, before ``ray_cluster`` starts; the cluster
the tests get is the one the fixture started, and nothing connected to the other.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def other_cluster() -> Iterator[socket.socket]:
    """A listener standing for a cluster someone else started, named by ``RAY_ADDRESS``."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    with listener, pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_ADDRESS", f"127.0.0.1:{listener.getsockname()[1]}")
        yield listener


@pytest.fixture(scope="module")
def worker_paths(other_cluster: socket.socket) -> list[Path]:
    """No extra folders; asking for ``other_cluster`` sets RAY_ADDRESS before the cluster starts.

    ``ray_cluster`` asks for this fixture first, so the variable is in place when it calls
    ``ray.init``.
    """
    return []


def _worker_pid() -> int:
    return os.getpid()


def test_the_cluster_is_the_tests_own_whatever_ray_address_names(
    other_cluster: socket.socket, ray_cluster: Any
) -> None:
    ray = ray_cluster
    assert os.environ["RAY_ADDRESS"] == f"127.0.0.1:{other_cluster.getsockname()[1]}"
    assert ray.get_runtime_context().gcs_address != os.environ["RAY_ADDRESS"]
    # The cluster the fixture started: its CPU count, and a task that runs on its worker.
    assert ray.cluster_resources()["CPU"] == 2
    assert ray.get(ray.remote(_worker_pid).remote(), timeout=120) != os.getpid()
    with pytest.raises(BlockingIOError):
        other_cluster.accept()  # nothing ever connected to the other cluster
