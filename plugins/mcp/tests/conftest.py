"""Helpers for the MCP tests: ``seahaven mcp`` as a real subprocess, driven by the SDK's client.

Every server here is the console command run by this interpreter, with its
temporary directory (``TMPDIR``) pointed at a directory of the test's own, so a
test can see the instance directory appear while the client is connected and be
gone after. Every wait is bounded (``anyio.fail_after``, ``timeout=``), so a
server that hangs fails the test instead of holding it.
"""

from __future__ import annotations

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
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

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
    """The server's environment: this one without SEAHAVEN_*, TMPDIR pointed at ``tmp``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SEAHAVEN_")}
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
