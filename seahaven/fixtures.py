"""``seahaven.fixtures``: frozen starting states, for tools that work on fixture directories.

A fixture is a directory holding one frozen SQLite file per node and a
``fixture.yaml`` sidecar. This module holds the public names of both halves:
reading, verifying and writing fixtures on disk (``seahaven.fixture_store``),
and minting one from a live instance (``seahaven.freezing``). Import these
names from here; the modules behind them may change.
"""

from __future__ import annotations

from seahaven.fixture_store import Fixture, FixtureNode, load, load_all, verify
from seahaven.freezing import freeze

__all__ = ["Fixture", "FixtureNode", "freeze", "load", "load_all", "verify"]
