"""Argument errors reach a harness as ``invalid_args`` from every world, over a real server.

A shipped world's error handler restates the framework's refusal in the world's
own words (``INVALID_INPUT``); the category OpenEnv's ``error_type`` carries is
still the call's, so a harness keying on it behaves the same for every world.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import payments_world
from conftest import Serve, Wire

from seahaven.openenv import serve


def observation(reply: dict[str, Any]) -> dict[str, Any]:
    """The observation of a step's reply."""
    assert reply["type"] == "observation", reply
    body: dict[str, Any] = reply["data"]["observation"]
    return body


def test_a_restated_argument_error_is_invalid_args_on_the_wire(
    serving: Serve, wire: Callable[..., Wire]
) -> None:
    server: serve.RunningServer = serving(payments_world.world)
    socket = wire(server)
    socket.reset(fixture="empty")
    nested: list[Any] = []
    # Just past the argument limit (64), well inside any limit on a frame's own nesting.
    for _ in range(65):
        nested = [nested]
    for arguments in ({"email": 5}, {"email": "deep@example.com", "metadata": {"k": nested}}):
        refused = observation(socket.call("create_customer", **arguments))
        assert refused["error"]["error_type"] == "invalid_args", refused
        assert refused["metadata"]["seahaven_error"]["code"] == "INVALID_INPUT"
    missing = observation(socket.call("get_customer", customer_id="cus_missing"))
    assert missing["error"]["error_type"] == "execution_error"
    created = observation(socket.call("create_customer", email="ada@example.com"))
    assert created["error"] is None
    document = socket.state()
    assert document["call_count"] == 4
    assert [record["table"] for record in document["state"]["db"]["log"]] == ["customers"]
