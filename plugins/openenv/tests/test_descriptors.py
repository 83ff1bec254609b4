"""File descriptors: the server raises its soft limit, sizes its capacity from it, runs out well.

Each test runs ``seahaven serve`` in a process of its own with a lowered limit
on open files, as a machine's default of 1024 (or less) would give it.
"""

from __future__ import annotations

import json
import resource
import socket
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from seahaven_openenv.sessions.descriptors import RESERVED_DESCRIPTORS
from test_serve_command import serving
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


@contextmanager
def limited_server(tmp_path: Path, soft: int, hard: int, *argv: str) -> Iterator[dict[str, Any]]:
    """``seahaven serve ARGV --port 0`` with the open-file limit set to (soft, hard)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    with serving(tmp_path, *argv, preexec_fn=limit) as server:
        [url] = server["urls"].values()
        yield {**server, "url": url}


def capacity(url: str) -> dict[str, int]:
    with urllib.request.urlopen(url + "/capacity", timeout=10) as response:
        answer: dict[str, int] = json.loads(response.read())
        return answer


def test_the_soft_limit_is_raised_and_the_capacity_sized_from_it(tmp_path: Path) -> None:
    # A soft limit of 128 holds 20 payments sessions; the hard limit of 1024, 244.
    with limited_server(tmp_path, 128, 1024, "--world", "payments") as server:
        assert capacity(server["url"])["max_sessions"] == (1024 - RESERVED_DESCRIPTORS) // 4


def test_a_world_of_five_stores_fits_fewer_sessions(tmp_path: Path) -> None:
    # Each company session holds 16 descriptors: its socket and three files per store.
    with limited_server(tmp_path, 1024, 1024, "--world", "company") as server:
        assert capacity(server["url"])["max_sessions"] == (1024 - RESERVED_DESCRIPTORS) // 16


def test_out_of_descriptors_a_reset_is_capacity_reached(tmp_path: Path) -> None:
    argv = ("--world", "payments", "--max_concurrent_envs", "500")
    with limited_server(tmp_path, 96, 96, *argv) as server, ExitStack() as held:
        url = server["url"].replace("http://", "ws://") + "/ws"
        answers: list[dict[str, Any]] = []
        # Sessions one after another until a reset finds no descriptor left (bounded: each
        # session holds at least its socket).
        for _ in range(96):
            ws = held.enter_context(connect(url, open_timeout=10))
            ws.send(json.dumps({"type": "reset", "data": {"fixture": "small_shop"}}))
            answer = json.loads(ws.recv(timeout=30))
            answers.append(answer)
            if answer["type"] == "error":
                break
        refusal = answers[-1]
        assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED", refusal
        assert all(answer["type"] == "observation" for answer in answers[:-1])
        # The refused connection is closed, freeing its socket.
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        assert "Traceback" not in server["log"].read_text()


def test_out_of_descriptors_the_log_says_so_once(tmp_path: Path) -> None:
    with limited_server(tmp_path, 64, 64, "--world", "payments") as server, ExitStack() as held:
        host, port = server["url"].removeprefix("http://").split(":")
        # Connections past the last descriptor cannot be accepted (bounded: 64 of them).
        for _ in range(64):
            held.enter_context(socket.create_connection((host, int(port)), timeout=10))
        time.sleep(3)  # what the log gathers meanwhile is what is counted
        text = server["log"].read_text()
        assert "out of system resource" not in text
        assert text.count("cannot accept a connection") == 1, text
        assert "Traceback" not in text
        held.close()
        # Once the connections are gone, the server answers again.
        assert capacity(server["url"])["active_sessions"] == 0
