"""Helpers for the MCP tests: ``seahaven mcp`` as a real subprocess, driven by the SDK's client.

Every server here is the console command run by this interpreter, with its
temporary directory (``TMPDIR``) pointed at a directory of the test's own, so a
test can see the instance directory appear while the client is connected and be
gone after. Every wait is bounded (``anyio.fail_after``, ``timeout=``), so a
server that hangs fails the test instead of holding it.

``raw_server`` writes bytes of the test's choosing to the server's stdin and
reads its answers line by line; ``RawClient.session()`` then hands the same pipes
to the SDK's ``ClientSession``, to show that the server still serves a real
client after whatever the test sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage

# These tests watch the directories instances on disk keep (made, removed, never left behind),
# so the run makes instances on disk unless SEAHAVEN_STORAGE names a storage for it.
os.environ.setdefault("SEAHAVEN_STORAGE", "disk")

# Long enough for a cold interpreter to import the SDK, the framework and a world.
BOUND_SECONDS = 60

# The console script an MCP client would be given, from this interpreter's environment.
_SCRIPT = Path(sys.executable).with_name("seahaven")
COMMAND = (
    [str(_SCRIPT), "mcp"] if _SCRIPT.is_file() else [sys.executable, "-m", "seahaven.cli", "mcp"]
)


@dataclass
class Server:
    """One ``seahaven mcp`` run: its temporary directory and, once it exits, its stderr."""

    tmp: Path
    cwd: Path
    stderr_path: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8")

    def instance_dirs(self) -> list[Path]:
        """Every instance directory under the server's temporary directory."""
        return sorted(path.parent for path in self.tmp.rglob("state.sqlite"))

    def files(self) -> list[Path]:
        """Every file left under the server's temporary directory."""
        return sorted(path for path in self.tmp.rglob("*") if not path.is_dir())


def environment(tmp: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: this one without SEAHAVEN_* but the storage; TMPDIR ``tmp``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SEAHAVEN_")}
    env["SEAHAVEN_STORAGE"] = os.environ["SEAHAVEN_STORAGE"]
    env.pop("PYTEST_ADDOPTS", None)
    env["TMPDIR"] = str(tmp)
    env.update(extra or {})
    return env


@pytest.fixture
def server_dirs(tmp_path: Path) -> Callable[[], Server]:
    """Make a fresh ``Server`` record (temporary dir, working dir, stderr file) per call."""
    made = 0

    def make() -> Server:
        nonlocal made
        made += 1
        root = tmp_path / f"server{made}"
        tmp, cwd = root / "tmp", root / "cwd"
        tmp.mkdir(parents=True)
        cwd.mkdir()
        return Server(tmp=tmp, cwd=cwd, stderr_path=root / "stderr.txt")

    return make


@asynccontextmanager
async def connected(
    server: Server, args: Sequence[str], env: Mapping[str, str] | None = None
) -> AsyncIterator[tuple[ClientSession, Any]]:
    """Start ``seahaven mcp ARGS``, initialize a client session; yield it and the handshake."""
    parameters = StdioServerParameters(
        command=COMMAND[0],
        args=[*COMMAND[1:], *args],
        env=environment(server.tmp, env),
        cwd=str(server.cwd),
    )
    with server.stderr_path.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(BOUND_SECONDS):
                handshake = await session.initialize()
            yield session, handshake


def run_command(
    args: Sequence[str], server: Server, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``seahaven mcp ARGS`` to completion with no client (for options that fail early)."""
    return subprocess.run(
        [*COMMAND, *args],
        cwd=server.cwd,
        env=environment(server.tmp, env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=False,
    )


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}

# The longest answer line a raw client reads.
_ANSWER_BYTES = 1 << 24


def message(**fields: Any) -> bytes:
    """One JSON-RPC 2.0 message as a line of bytes."""
    return (json.dumps({"jsonrpc": "2.0", **fields}) + "\n").encode()


@dataclass
class RawClient:
    """The pipes of one ``seahaven mcp`` process, for bytes the SDK's client would not send."""

    process: Process
    answers: BufferedByteReceiveStream

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the server's stdin as it is."""
        assert self.process.stdin is not None
        with anyio.fail_after(BOUND_SECONDS):
            await self.process.stdin.send(data)

    async def answer(self) -> dict[str, Any]:
        """The next line the server writes, as JSON."""
        with anyio.fail_after(BOUND_SECONDS):
            line = await self.answers.receive_until(b"\n", _ANSWER_BYTES)
        found: dict[str, Any] = json.loads(line)
        return found

    async def request(self, id: int | str, method: str, params: Any = None) -> dict[str, Any]:
        """Send one well-formed request and read the answer, which must be to it."""
        fields: dict[str, Any] = {"id": id, "method": method}
        if params is not None:
            fields["params"] = params
        await self.send(message(**fields))
        answer = await self.answer()
        assert answer.get("id") == id, answer
        return answer

    async def initialize(self) -> dict[str, Any]:
        """The handshake: ``initialize``, then the ``initialized`` notification."""
        answer = await self.request("init", "initialize", INITIALIZE)
        await self.send(message(method="notifications/initialized"))
        return answer

    async def close_stdin(self) -> None:
        """Close the server's stdin, as a client does to shut the server down."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        """The SDK's client session over these same pipes, initialized."""
        read_send, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def pump_answers() -> None:
            async with read_send:
                while True:
                    try:
                        line = await self.answers.receive_until(b"\n", _ANSWER_BYTES)
                    except (anyio.EndOfStream, anyio.IncompleteRead):
                        return
                    parsed = types.JSONRPCMessage.model_validate_json(line)
                    await read_send.send(SessionMessage(parsed))

        async def pump_requests() -> None:
            async with write_receive:
                async for outgoing in write_receive:
                    text = outgoing.message.model_dump_json(by_alias=True, exclude_none=True)
                    await self.send(text.encode() + b"\n")

        async with anyio.create_task_group() as group:
            group.start_soon(pump_answers)
            group.start_soon(pump_requests)
            async with ClientSession(read, write) as session:
                with anyio.fail_after(BOUND_SECONDS):
                    await session.initialize()
                yield session
            group.cancel_scope.cancel()


@asynccontextmanager
async def raw_server(
    server: Server, args: Sequence[str], env: Mapping[str, str] | None = None
) -> AsyncIterator[RawClient]:
    """Start ``seahaven mcp ARGS`` on pipes of the test's own; stopped (killed) at the end."""
    with server.stderr_path.open("w", encoding="utf-8") as errlog:
        process = await anyio.open_process(
            [*COMMAND, *args],
            cwd=server.cwd,
            env=environment(server.tmp, env),
            stderr=errlog,
        )
        async with process:
            assert process.stdout is not None
            try:
                yield RawClient(process, BufferedByteReceiveStream(process.stdout))
            finally:
                if process.returncode is None:
                    process.kill()
                with anyio.fail_after(BOUND_SECONDS), anyio.CancelScope(shield=True):
                    await process.wait()
