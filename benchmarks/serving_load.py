"""Many OpenEnv sessions against a served world: the load test's and the benchmark's.

``start_server`` runs ``seahaven serve`` in a child process on a free loopback
port. ``run_load`` opens many sessions at once over raw WebSockets. The
``payments`` load (the default) resets each from the ``small_shop`` fixture,
makes ten calls (writes, reads and one call the world refuses), reads its state
document and closes; the ``company`` load resets from ``acme`` and makes
``company_episode``'s ten calls on its rows, across four stores. Every frame's
round trip is timed, and each session checks that its state document holds
exactly its own calls and rows.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import company_episode
import lean_client
import native_client
from websockets.asyncio.client import connect

FIXTURE = "small_shop"
CALLS_PER_SESSION = 10


@dataclass
class Server:
    """A ``seahaven serve`` child process and where it listens."""

    process: subprocess.Popen[str]
    port: int
    tmpdir: Path

    @property
    def base_url(self) -> str:
        """The HTTP base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        """The session endpoint."""
        return f"ws://127.0.0.1:{self.port}/ws"

    def get(self, path: str) -> Any:
        """GET a JSON route."""
        with urllib.request.urlopen(self.base_url + path, timeout=10) as response:
            return json.loads(response.read())

    def instance_directories(self) -> list[Path]:
        """Every instance directory the server process has on disk now."""
        root = self.tmpdir / f"seahaven-{os.getuid()}"
        return sorted(p for p in root.glob(f"*/{self.process.pid}-*/*") if p.is_dir())


@contextmanager
def start_server(
    tmpdir: Path, *, world: str = "payments", extra: tuple[str, ...] = (), timeout: float = 60
) -> Iterator[Server]:
    """Run ``seahaven serve --port 0`` with its temp directory in ``tmpdir``; stop it after.

    The server's output goes to ``tmpdir/serve.log``: a pipe nobody reads would fill
    and stall the server's event loop on its next log line.
    """
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "seahaven.cli", "serve", "--world", world, "--port", "0"]
    log_path = tmpdir / "serve.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*argv, "--no-console", *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
    try:
        port = None
        deadline = time.monotonic() + timeout
        while port is None:
            found = re.search(r"at http://127\.0\.0\.1:(\d+)", log_path.read_text())
            if found:
                port = int(found.group(1))
            elif process.poll() is not None:
                raise RuntimeError(
                    f"seahaven serve exited with {process.returncode} before listening:\n"
                    + log_path.read_text()
                )
            elif time.monotonic() > deadline:
                raise RuntimeError("seahaven serve did not print its address in time")
            else:
                time.sleep(0.05)
        server = Server(process, port, tmpdir)
        while server.get("/health") != {"status": "healthy"}:
            time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class SessionOutcome:
    """What one session saw: its frame latencies, and what was wrong, if anything."""

    latencies: list[float] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# A session's episode is written without I/O, as a ``lean_client.Script``: it yields each
# frame to send, is sent the reply (parsed), and returns what was wrong. Every client
# below drives the same scripts.
Script = lean_client.Script


def _call(name: str, /, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": name, "arguments": arguments},
    }


def payments_script(index: int) -> Script:
    """The ``payments`` episode: ``small_shop``, ten calls, its state checked to be its own."""
    problems: list[str] = []
    episode = f"load-{index}"
    reply = yield {
        "type": "reset",
        "data": {"fixture": FIXTURE, "seed": index, "episode_id": episode},
    }
    if reply.get("type") != "observation":
        return [f"reset answered {reply}"]
    emails = [f"load{index}.{n}@example.com" for n in range(2)]
    created = []
    for email in emails:
        reply = yield _call("create_customer", email=email, name=f"S{index}")
        created.append(reply["data"]["observation"]["result"]["id"])
    yield _call("update_customer", customer_id=created[0], name=f"U{index}")
    for customer in (created[0], created[1], created[0]):
        reply = yield _call("get_customer", customer_id=customer)
        if reply["data"]["observation"]["result"]["id"] != customer:
            problems.append(f"get_customer({customer}) answered another customer")
    yield _call("list_customers", email=emails[1])
    yield _call("get_balance")
    reply = yield _call("get_customer", customer_id="cus_doesnotexist")
    if reply["data"]["observation"]["error"] is None:
        problems.append("a missing customer was found")
    yield _call("update_customer", customer_id=created[1], name=f"V{index}")
    reply = yield {"type": "state"}
    document = reply["data"]
    if document["episode_id"] != episode or document["call_count"] != CALLS_PER_SESSION:
        problems.append(
            f"state has episode {document['episode_id']} and {document['call_count']} calls"
        )
    log = document["state"]["db"]["log"]
    inserted = sorted(
        r["key"]["id"] for r in log if r["op"] == "insert" and r["table"] == "customers"
    )
    updated = sorted(
        r["key"]["id"] for r in log if r["op"] == "update" and r["table"] == "customers"
    )
    if inserted != sorted(created) or updated != sorted(created) or len(log) != 4:
        problems.append(f"state log is not this session's own: {log}")
    return problems


def company_script(index: int) -> Script:
    """The ``company`` episode: ``company_episode``'s calls from ``acme``, its state checked.

    Every call must succeed, and the state document must hold this session's ten
    calls and exactly one new invoice, its own.
    """
    problems: list[str] = []
    episode = f"company-{index}"
    reset = {
        "fixture": company_episode.FIXTURE,
        "seed": index,
        "episode_id": episode,
        "clock_mode": "tick",
        "startup": company_episode.PRINCIPAL,
    }
    reply = yield {"type": "reset", "data": reset}
    if reply.get("type") != "observation":
        return [f"reset answered {reply}"]
    for tool, arguments in company_episode.CALLS:
        reply = yield _call(tool, **arguments)
        error = reply.get("data", {}).get("observation", {}).get("error", "no observation")
        if error is not None:
            problems.append(f"{tool} answered {error}")
    reply = yield {"type": "state"}
    document = reply["data"]
    if document["episode_id"] != episode or document["call_count"] != len(company_episode.CALLS):
        problems.append(
            f"state has episode {document['episode_id']} and {document['call_count']} calls"
        )
    invoices = [
        record
        for record in document["state"]["db"]["log"]
        if record["table"] == "invoices" and record["op"] == "insert"
    ]
    if len(invoices) != 1:
        problems.append(f"state log has {len(invoices)} new invoices, not 1")
    return problems


# The frame that ends every session, after its script.
CLOSE = json.dumps({"type": "close"})


def _connect(url: str, client: str) -> Any:
    if client == "lean":
        return lean_client.connect(url)
    return connect(url, compression=None, max_size=None, ping_interval=None)


async def drive(
    url: str, script: Script, start: asyncio.Event, client: str = "websockets"
) -> SessionOutcome:
    """Play one session's script over one connection, timing every frame's round trip.

    ``client`` is ``websockets`` (the library's client) or ``lean``
    (``lean_client``'s streams, for loads whose clients share the server's CPUs).
    """
    outcome = SessionOutcome()
    await start.wait()
    async with _connect(url, client) as ws:
        try:
            frame = next(script)
            while True:
                started = time.perf_counter()
                await ws.send(json.dumps(frame))
                reply = json.loads(await ws.recv())
                outcome.latencies.append(time.perf_counter() - started)
                outcome.kinds.append(frame["type"])
                frame = script.send(reply)
        except StopIteration as finished:
            outcome.problems.extend(finished.value)
        await ws.send(CLOSE)
    return outcome


# Each load's script, by the name of the world it is served from.
SESSIONS: dict[str, Callable[[int], Script]] = {
    "payments": payments_script,
    "company": company_script,
}


@dataclass
class LoadResult:
    """The whole load: frames, wall time and every latency."""

    sessions: int
    frames: int
    seconds: float
    latencies: list[float]
    kinds: list[str]
    problems: list[str]
    client_cpu: float | None = None
    """CPU seconds the load generator used, when it ran in a process of its own (``native``)."""

    @property
    def frames_per_second(self) -> float:
        """Frames answered per second of wall time."""
        return self.frames / self.seconds

    def percentile(self, fraction: float, kind: str | None = None) -> float:
        """A latency percentile, in seconds, of every frame or of one kind (``reset``, ...)."""
        chosen = (
            self.latencies
            if kind is None
            else [
                latency for latency, k in zip(self.latencies, self.kinds, strict=True) if k == kind
            ]
        )
        ordered = sorted(chosen)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    @property
    def p50(self) -> float:
        """The median frame latency."""
        return statistics.median(self.latencies)

    @property
    def p99(self) -> float:
        """The 99th-percentile frame latency."""
        return self.percentile(0.99)


async def _played(url: str, script: Script, start: asyncio.Event) -> SessionOutcome:
    await start.wait()
    latencies, kinds, problems = await lean_client.play(url, script, CLOSE)
    return SessionOutcome(latencies, kinds, problems)


async def _run(url: str, sessions: int, client: str, load: str) -> LoadResult:
    start = asyncio.Event()
    scripts = [SESSIONS[load](index) for index in range(sessions)]
    tasks = [
        asyncio.create_task(
            _played(url, script, start)
            if client == "protocol"
            else drive(url, script, start, client)
        )
        for script in scripts
    ]
    await asyncio.sleep(0)
    started = time.perf_counter()
    start.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    seconds = time.perf_counter() - started
    latencies: list[float] = []
    kinds: list[str] = []
    problems: list[str] = []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            problems.append(f"session {index} failed: {type(outcome).__name__}: {outcome}")
            continue
        latencies.extend(outcome.latencies)
        kinds.extend(outcome.kinds)
        problems.extend(f"session {index}: {problem}" for problem in outcome.problems)
    return LoadResult(sessions, len(latencies), seconds, latencies, kinds, problems)


def run_load(
    url: str,
    sessions: int,
    *,
    timeout: float = 300,
    loop: str = "asyncio",
    client: str = "websockets",
    load: str = "payments",
) -> LoadResult:
    """Run ``sessions`` sessions at once against ``url``; bounded by ``timeout`` seconds.

    ``load`` names the episode each session plays (``SESSIONS``), and the world
    the server must serve.

    ``loop="uvloop"`` runs the clients on uvloop (which ``uvicorn[standard]``
    installs with the serving plugin). ``client`` is ``websockets`` (the
    library's client), ``lean`` (``lean_client``'s streams), ``protocol``
    (``lean_client.play``, callbacks with no task per frame) or ``native``
    (``native_client``: ``wsload``, in C, in a process of its own, its answers
    checked by the same scripts after the run): the same frames and checks for
    less client CPU each, which matters where the clients share the server's CPUs.
    """
    if client == "native":
        measured = native_client.run(
            url, lambda: [SESSIONS[load](index) for index in range(sessions)], timeout
        )
        return LoadResult(
            sessions,
            len(measured.latencies),
            measured.seconds,
            measured.latencies,
            measured.kinds,
            measured.problems,
            measured.cpu_seconds,
        )

    async def bounded() -> LoadResult:
        return await asyncio.wait_for(_run(url, sessions, client, load), timeout)

    if loop == "uvloop":
        import uvloop

        return uvloop.run(bounded())
    return asyncio.run(bounded())
