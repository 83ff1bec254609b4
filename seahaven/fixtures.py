"""``seahaven.fixtures``: frozen starting states, for tools that work on fixture directories.

A fixture is a directory holding one frozen SQLite file per node and a
``fixture.yaml`` sidecar. This module is the public face of two layers:
reading, verifying and writing fixtures on disk is ``seahaven.fixture_store``
(below the instance, which copies fixtures when it is made), and minting one
from a live instance is ``seahaven.freezing`` (above it). Import these names
from here; the modules beneath may change.
"""

from __future__ import annotations

from seahaven.fixture_store import Fixture, FixtureNode, load, load_all, verify
from seahaven.freezing import freeze

__all__ = ["Fixture", "FixtureNode", "freeze", "load", "load_all", "verify"]
