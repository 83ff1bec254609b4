"""A session that ends gives its memory back, large refused frames included.

A served process raises the collector's first threshold and freezes its
start-up heap, so garbage in reference cycles could sit for minutes: these
tests run the server with the collector switched off, and count what is left.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections.abc import Iterator
from typing import Any

import payments_world
import pytest
from conftest import wait_until

import seahaven

BIG = 4 << 20  # a refused argument of 4 MiB


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def one_session(server: Any, wire: Any) -> weakref.ref[seahaven.Instance]:
    """A session with large refused frames, closed; answer a weak reference to its instance."""
    ws = wire(server)
    ws.reset(fixture="small_shop")
    [session] = server.hub.sessions
    assert session.instance is not None
    ended = weakref.ref(session.instance)
    refused = ws.call("create_customer", email="x" * BIG, name=1)["data"]["observation"]
    assert refused["error"] is not None
    unknown = ws.call("y" * (1 << 20))["data"]["observation"]
    assert unknown["error"]["error_type"] == "tool_not_found"
    ws.send({"type": "close"})
    wait_until(lambda: server.hub.active_sessions == 0)
    return ended


def test_closed_sessions_leave_no_instance_behind(serving, wire, collector_off) -> None:
    server = serving(payments_world.world)
    ended = [one_session(server, wire) for _ in range(3)]
    wait_until(lambda: all(ref() is None for ref in ended))


def test_closed_sessions_give_their_memory_back(serving, wire, collector_off) -> None:
    server = serving(payments_world.world)
    one_session(server, wire)  # what is built once (caches, first imports) is built here
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ended = [one_session(server, wire) for _ in range(3)]
        wait_until(lambda: all(ref() is None for ref in ended))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Each session sent 5 MiB of refused frames; a leak of any of it would show many times over.
    assert kept < BIG, f"{kept} bytes kept after three sessions"
