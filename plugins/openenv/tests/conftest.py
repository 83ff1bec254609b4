"""Fixtures for the serving tests: real uvicorn servers on loopback ports, and raw WebSockets.

Every server here is ``seahaven.openenv.serve.running(...)``: uvicorn on a
background thread, on a free port of 127.0.0.1, stopped when the test ends.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beacon import make_beacon

import seahaven
from seahaven.openenv import serve

# These tests watch the directories instances on disk keep (made, removed, never left behind),
# so the run makes instances on disk unless SEAHAVEN_STORAGE names a storage for it.
os.environ.setdefault("SEAHAVEN_STORAGE", "disk")

Serve = Callable[..., serve.RunningServer]


@pytest.fixture
def beacon_world(tmp_path: Path) -> seahaven.World:
    """A beacon world of this test's own, its instances in a directory the test can look in."""
    work_dir = tmp_path / "instances"
    work_dir.mkdir()
    return make_beacon(work_dir)


@pytest.fixture
def serving() -> Iterator[Serve]:
    """Start a server with ``serving(world, **options)``; every one stops with the test."""
    with ExitStack() as stack:

        def start(worlds: Any, **options: Any) -> serve.RunningServer:
            return stack.enter_context(serve.running(worlds, **options))

        yield start


@pytest.fixture
def served(serving: Serve, beacon_world: seahaven.World) -> serve.RunningServer:
    """A server of the beacon world with its defaults."""
    return serving(beacon_world)


class Wire:
    """A raw WebSocket to a server, speaking JSON frames."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    def send(self, frame: Any) -> None:
        """Send a frame (a dict is encoded as JSON; a str or bytes goes as it is)."""
        self.connection.send(frame if isinstance(frame, str | bytes) else json.dumps(frame))

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        """The next frame, decoded."""
        reply: dict[str, Any] = json.loads(self.connection.recv(timeout=timeout))
        return reply

    def ask(self, frame: Any) -> dict[str, Any]:
        """Send a frame and return the reply."""
        self.send(frame)
        return self.receive()

    def reset(self, **data: Any) -> dict[str, Any]:
        """Send a reset frame."""
        return self.ask({"type": "reset", "data": data})

    def call(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        """Send a call_tool step."""
        return self.ask(
            {
                "type": "step",
                "data": {"type": "call_tool", "tool_name": tool, "arguments": arguments},
            }
        )

    def state(self) -> dict[str, Any]:
        """Send a state frame; return the document (that of no episode too, when there is none)."""
        reply = self.ask({"type": "state", "data": {"allow_no_episode": True}})
        assert reply["type"] == "state", reply
        document: dict[str, Any] = reply["data"]
        return document


@pytest.fixture
def wire(request: pytest.FixtureRequest) -> Iterator[Callable[..., Wire]]:
    """Open raw WebSockets with ``wire(server, path="/ws")``; each closes with the test."""
    with ExitStack() as stack:

        def open_wire(server: serve.RunningServer, path: str = "/ws") -> Wire:
            url = server.base_url.replace("http://", "ws://") + path
            connection = stack.enter_context(connect(url, compression=None, open_timeout=10))
            return Wire(connection)

        yield open_wire


class Records(logging.Handler):
    """Every log record at WARNING or above, from the loggers it is attached to."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        """Every record, formatted with its traceback."""
        formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
        return "\n".join(formatter.format(record) for record in self.records)


@pytest.fixture
def server_log() -> Iterator[Records]:
    """What the server logged at WARNING or above, on uvicorn's loggers and the framework's."""
    handler = Records()
    names = ("uvicorn", "uvicorn.error", "uvicorn.asgi", "seahaven", "seahaven.openenv")
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def instance_dirs(world: seahaven.World) -> list[Path]:
    """The instance directories of a world whose work_dir a test set."""
    assert world.work_dir is not None
    return sorted(path for path in world.work_dir.iterdir() if path.is_dir())


def spin(seconds: float) -> str:
    """Hold a CPU, and the interpreter lock, for ``seconds`` of this thread's CPU time.

    Answers the name of the thread that ran it.
    """
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass
    return threading.current_thread().name


def wait_until(condition: Callable[[], Any], timeout: float = 30) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the condition did not come true in time")
        time.sleep(0.05)


def post_mcp(host: str, port: int, request: dict[str, Any]) -> dict[str, Any]:
    """``POST /mcp`` with one JSON-RPC request; the answer, which must come with a 200."""
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.request(
            "POST", "/mcp", body=json.dumps(request), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        assert response.status == 200
        answer: dict[str, Any] = json.loads(response.read())
        return answer
    finally:
        connection.close()


def allow_open_files(wanted: int) -> None:
    """Raise this process's open-file limit to ``wanted``; fail when the machine allows fewer."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.fail(f"the load needs {wanted} open files and this machine allows {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
