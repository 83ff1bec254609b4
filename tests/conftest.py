"""What the project's own tests share: ``on_disk``, for a test about an instance's files.

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
