"""Many concurrent sessions against ``seahaven serve --workers 2``: served, lost, wrong, latency.

Every session opens a raw WebSocket (RFC 6455 frames written here, masking in
``websockets``' C helper, callbacks with no task per frame, on uvloop), resets
from ``small_shop``, lists the tools, makes four calls (two writes, a read of
what it wrote, a balance), reads its state document and checks that it holds
exactly its own calls and row, and closes. All start at once.

A server past its capacity answers a new session with ``CAPACITY_REACHED`` and
``retry_after``, after holding it in its admission queue or at once; the client
here does what ``SeahavenClient`` does: waits those seconds and starts the
session again on a new connection, at most ``--retries`` times. A session
counts as served when its episode ran to the end with the right answers, wrong
when an answer was not its own, lost when it failed any other way (refused at
the handshake, a closed connection, out of retries or out of time).

Reported: sessions served / wrong / lost, the retries, p50 and p99 of a frame's
round trip (a reset's from its last attempt, so including the time it waited in
the admission queue), p50 and p99 of a session from its first connect to its
close (including its retries), and the server's resident memory (front and
workers, at its peak and after the load).

    .venv/bin/python benchmarks/many_sessions.py --sessions 4096 8192 16384
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import struct
import tempfile
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import serving_load
from lean_client import CLOSE, PING, PONG, TEXT, frame, opening, read_upgrade, take_frame

FIXTURE = "small_shop"
# A session's episode: yields frames, is sent each parsed reply, returns what was wrong.
Script = Generator[dict[str, Any], dict[str, Any], list[str]]


_CLOSE_FRAMES = frame(TEXT, b'{"type": "close"}') + frame(CLOSE, struct.pack("!H", 1000))


def _call(name: str, /, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": name, "arguments": arguments},
    }


def episode(index: int) -> Script:
    """Reset from ``small_shop``, list the tools, four calls, the state checked to be its own."""
    problems: list[str] = []
    episode_id = f"many-{index}"
    reply = yield {
        "type": "reset",
        "data": {"fixture": FIXTURE, "seed": index, "episode_id": episode_id},
    }
    if reply.get("type") != "observation":
        return [f"reset answered {str(reply)[:200]}"]
    reply = yield {"type": "step", "data": {"type": "list_tools"}}
    tools = {tool["name"] for tool in reply["data"]["observation"]["tools"]}
    if "create_customer" not in tools:
        problems.append("the tool list lacks create_customer")
    email = f"many{index}@example.com"
    reply = yield _call("create_customer", email=email, name=f"S{index}")
    created = reply["data"]["observation"]["result"]["id"]
    yield _call("update_customer", customer_id=created, name=f"U{index}")
    reply = yield _call("get_customer", customer_id=created)
    result = reply["data"]["observation"]["result"]
    if result["id"] != created or result["name"] != f"U{index}" or result["email"] != email:
        problems.append(f"get_customer answered {result}")
    yield _call("get_balance")
    reply = yield {"type": "state"}
    document = reply["data"]
    if document["episode_id"] != episode_id or document["call_count"] != 4:
        problems.append(
            f"state has episode {document['episode_id']}, {document['call_count']} calls"
        )
    log = document["state"]["db"]["log"]
    mine = sorted((r["op"], r["key"]["id"]) for r in log if r["table"] == "customers")
    if mine != [("insert", created), ("update", created)] or len(log) != 2:
        problems.append(f"state log is not this session's own: {log}")
    return problems


class Refused(Exception):
    """The server answered ``CAPACITY_REACHED`` with a retry time."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"at capacity; retry after {retry_after} s")
        self.retry_after = retry_after


class _Session(asyncio.Protocol):
    """One attempt at one session's episode over one connection, from the loop's callbacks."""

    def __init__(self, opening: bytes, script: Script, done: asyncio.Future[Any]) -> None:
        self.opening, self.script, self.done = opening, script, done
        self.buffer = bytearray()
        self.upgraded = False
        self.sent_at = 0.0
        self.latencies: list[float] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.opening)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            if not self.upgraded:
                if not read_upgrade(self.buffer):
                    return
                self.upgraded = True
                self._send(next(self.script))
            self._read()
        except StopIteration as finished:
            assert self.transport is not None
            self.transport.write(_CLOSE_FRAMES)
            self.transport.close()
            if not self.done.done():
                self.done.set_result((self.latencies, finished.value))
        except BaseException as error:  # the attempt's failure is its result
            if self.transport is not None:
                self.transport.abort()
            if not self.done.done():
                self.done.set_exception(error)

    def _read(self) -> None:
        buffer = self.buffer
        while (taken := take_frame(buffer)) is not None:
            first, payload = taken
            opcode = first & 0x0F
            if opcode == PING:
                assert self.transport is not None
                self.transport.write(frame(PONG, payload))
                continue
            if opcode == CLOSE:
                raise ConnectionError(f"the server closed the connection: {payload!r}")
            reply: Any = json.loads(payload)
            data = reply.get("data") if isinstance(reply, dict) else None
            if (
                isinstance(data, dict)
                and reply.get("type") == "error"
                and data.get("code") == "CAPACITY_REACHED"
                and data.get("retry_after")
            ):
                raise Refused(float(data["retry_after"]))
            self.latencies.append(time.perf_counter() - self.sent_at)
            self._send(self.script.send(reply))

    def _send(self, outgoing: dict[str, Any]) -> None:
        assert self.transport is not None
        self.sent_at = time.perf_counter()
        self.transport.write(frame(TEXT, json.dumps(outgoing).encode()))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(exc or ConnectionError("the connection closed mid-session"))


@dataclass
class Outcome:
    """One session: its frames' round trips, what was wrong, why it was lost, its retries."""

    latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: str | None = None
    retries: int = 0
    seconds: float = 0.0


async def _session(port: int, index: int, retries: int, start: asyncio.Event) -> Outcome:
    loop = asyncio.get_running_loop()
    outcome = Outcome()
    await start.wait()
    began = time.perf_counter()
    while True:
        handshake = opening("127.0.0.1", port, "/ws")
        done: asyncio.Future[Any] = loop.create_future()
        try:
            await loop.create_connection(
                functools.partial(_Session, handshake, episode(index), done), "127.0.0.1", port
            )
            outcome.latencies, outcome.problems = await done
            break
        except Refused as refusal:
            if outcome.retries >= retries:
                outcome.lost = f"still at capacity after {retries} retries"
                break
            outcome.retries += 1
            await asyncio.sleep(refusal.retry_after)
        except Exception as error:
            outcome.lost = f"{type(error).__name__}: {error}"
            break
    outcome.seconds = time.perf_counter() - began
    return outcome


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def _tree_rss_mib(root: int) -> float:
    """The resident MiB of ``root`` and every process under it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
    return total / 2**20


@dataclass
class Report:
    """The whole run at one size."""

    sessions: int
    served: int
    wrong: int
    lost: int
    lost_reasons: dict[str, int]
    retries: int
    retried_sessions: int
    most_retries: int
    seconds: float
    frame_p50: float
    frame_p99: float
    reset_p99: float
    session_p50: float
    session_p99: float
    peak_mib: float
    after_mib: float

    def line(self) -> str:
        """One line of figures."""
        return (
            f"{self.sessions:>6} sessions: served {self.served}, wrong {self.wrong}, lost "
            f"{self.lost}; retries {self.retries} ({self.retried_sessions} sessions, at most "
            f"{self.most_retries} one); "
            f"{self.seconds:.1f} s; frame p50 {self.frame_p50:.2f} s p99 {self.frame_p99:.2f} s "
            f"(reset p99 {self.reset_p99:.2f} s); session p50 {self.session_p50:.1f} s p99 "
            f"{self.session_p99:.1f} s; server {self.peak_mib:.0f} MiB at peak, "
            f"{self.after_mib:.0f} after"
        )


def run(
    sessions: int, extra: tuple[str, ...], retries: int, timeout: float, world: str = "payments"
) -> Report:
    """Serve ``sessions`` at once from a new ``seahaven serve`` with ``extra`` options."""
    import uvloop

    with (
        tempfile.TemporaryDirectory() as scratch,
        serving_load.start_server(Path(scratch), world=world, extra=extra, timeout=120) as server,
    ):
        peak = [0.0]
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.5):
                peak[0] = max(peak[0], _tree_rss_mib(server.process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()

        async def load() -> tuple[list[Outcome | BaseException], float]:
            start = asyncio.Event()
            tasks = [
                asyncio.create_task(_session(server.port, index, retries, start))
                for index in range(sessions)
            ]
            await asyncio.sleep(0)
            began = time.perf_counter()
            start.set()
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            outcomes: list[Outcome | BaseException] = []
            for task in tasks:
                if task in pending:
                    outcomes.append(TimeoutError(f"not done in {timeout:g} s"))
                elif task.exception() is not None:
                    outcomes.append(cast(BaseException, task.exception()))
                else:
                    outcomes.append(task.result())
            return outcomes, time.perf_counter() - began

        outcomes, seconds = uvloop.run(load())
        sampling.set()
        sampler.join()
        time.sleep(1)
        after = _tree_rss_mib(server.process.pid)
    latencies: list[float] = []
    resets: list[float] = []
    session_seconds: list[float] = []
    reasons: dict[str, int] = {}
    served = wrong = lost = retries_made = retried = most = 0
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            lost += 1
            reason = f"{type(outcome).__name__}: {outcome}"[:80]
            reasons[reason] = reasons.get(reason, 0) + 1
            continue
        retries_made += outcome.retries
        retried += outcome.retries > 0
        most = max(most, outcome.retries)
        if outcome.lost is not None:
            lost += 1
            reason = outcome.lost[:80]
            reasons[reason] = reasons.get(reason, 0) + 1
            continue
        latencies.extend(outcome.latencies)
        resets.append(outcome.latencies[0])
        session_seconds.append(outcome.seconds)
        if outcome.problems:
            wrong += 1
        else:
            served += 1
    return Report(
        sessions=sessions,
        served=served,
        wrong=wrong,
        lost=lost,
        lost_reasons=reasons,
        retries=retries_made,
        retried_sessions=retried,
        most_retries=most,
        seconds=seconds,
        frame_p50=_percentile(latencies, 0.5),
        frame_p99=_percentile(latencies, 0.99),
        reset_p99=_percentile(resets, 0.99),
        session_p50=_percentile(session_seconds, 0.5),
        session_p99=_percentile(session_seconds, 0.99),
        peak_mib=peak[0],
        after_mib=after,
    )


def raise_open_files() -> int:
    """Raise this process's soft limit on open files to its hard limit; answer the new soft one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else 1 << 20
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> None:
    """Run each size on a new server and print a line (and a Markdown row) for each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[4096, 8192, 16384])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--retries", type=int, default=50, help="capacity retries a session may make"
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds a size may take")
    parser.add_argument(
        "--server", default="", help="more `seahaven serve` options, one string (split on spaces)"
    )
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    limit = raise_open_files()
    extra = ("--workers", str(args.workers), "--log-level", "warning", *args.server.split())
    print(f"client open-file limit {limit}; server options: {' '.join(extra)}", flush=True)
    reports = []
    for sessions in args.sessions:
        report = run(sessions, extra, args.retries, args.timeout)
        reports.append(report)
        print(report.line(), flush=True)
        for reason, count in sorted(report.lost_reasons.items(), key=lambda item: -item[1])[:5]:
            print(f"    lost {count}: {reason}", flush=True)
    if args.markdown:
        print(
            "\n| sessions | served | wrong | lost | retries (most of one) | wall | frame p50 "
            "| frame p99 "
            "| reset p99 | session p99 | server memory, peak |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in reports:
            print(
                f"| {r.sessions:,} | {r.served:,} | {r.wrong} | {r.lost:,} | {r.retries:,} "
                f"({r.most_retries}) "
                f"| {r.seconds:.0f} s | {r.frame_p50:.2f} s | {r.frame_p99:.2f} s "
                f"| {r.reset_p99:.2f} s | {r.session_p99:.1f} s | {r.peak_mib:,.0f} MiB |"
            )


if __name__ == "__main__":
    main()
