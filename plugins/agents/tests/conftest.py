"""What the agents plugin's tests share: the company pack, and a scripted server per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from seahaven_agents.testing import Script, ScriptedChatServer

from seahaven.scenarios import ScenarioSet, load_pack


@pytest.fixture(scope="session")
def company() -> ScenarioSet:
    """The company world's pack, loaded once."""
    return load_pack("company")


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedChatServer]]:
    """Start a scripted Chat Completions server (``scripted(script, delay=...)``); stopped after."""
    started: list[ScriptedChatServer] = []

    def start(script: Script, **options: float) -> ScriptedChatServer:
        server = ScriptedChatServer(script, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
