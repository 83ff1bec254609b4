"""What the project's own tests share: ``on_disk``, and the order the slowest files run in.

The suite runs under either storage (``--seahaven-storage memory|disk``, or
``SEAHAVEN_STORAGE``); a test that is about the files an instance on disk
keeps (its directory, descriptors, modes, the sweep) asks for ``on_disk``, and
every instance it makes without naming a storage is made on disk.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every instance the test makes without naming a storage keep its stores on disk."""
    monkeypatch.setenv("SEAHAVEN_STORAGE", "disk")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the files holding a ``once_per_run`` test (an install, an image) first.

    They are the session's slowest by far; spread over processes (``SEAHAVEN_TEST_WORKERS``,
    a file per process at a time), they then start at once instead of ending the run alone.
    Each file keeps its order, so its module fixtures are still made once.
    """
    first = {item.path for item in items if item.get_closest_marker("once_per_run")}
    items.sort(key=lambda item: item.path not in first)
