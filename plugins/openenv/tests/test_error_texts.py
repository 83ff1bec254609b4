"""What a remote client reads of a failure: what to fix, and never a path on the server."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from conftest import Serve

import seahaven


@pytest.fixture
def cellar(tmp_path: Path) -> seahaven.World:
    """A world with one fixture, frozen in a directory of this test's own."""
    world = seahaven.World(
        name="cellar",
        version="0.1.0",
        schema="CREATE TABLE casks (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        fixtures_dir=tmp_path / "deep" / "private" / "fixtures",
        work_dir=tmp_path,
    )
    with world.instance() as instance:
        instance.freeze("stocked", "Three casks")
    return world


def test_an_unknown_fixture_is_named_with_the_ones_there_are_and_no_path(
    serving: Serve, cellar: seahaven.World, wire, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="seahaven.openenv")
    ws = wire(serving(cellar))

    reply = ws.reset(fixture="vintage")

    assert reply["type"] == "error" and reply["data"]["code"] == "EXECUTION_ERROR"
    message = reply["data"]["message"]
    assert "'vintage'" in message and "stocked" in message
    assert "private" not in message and "/" not in message
    # The operator's log has the directory the client was not told.
    assert any(str(cellar.fixtures_dir) in record.getMessage() for record in caplog.records)
    # The session goes on.
    assert ws.reset(fixture="stocked")["type"] == "observation"


def test_any_other_reset_failure_reaches_the_client_without_a_path(
    serving: Serve, cellar: seahaven.World, wire
) -> None:
    # A fixture whose sidecar no longer loads: the core's message names the file.
    sidecar = cellar.fixtures_dir / "stocked" / "fixture.yaml"
    sidecar.write_text("format_version: 9\n", encoding="utf-8")
    ws = wire(serving(cellar))

    reply = ws.reset(fixture="stocked")

    assert reply["type"] == "error"
    assert "private" not in reply["data"]["message"]
    assert "fixture.yaml" in reply["data"]["message"]
