"""Admission past capacity: a bounded queue in arrival order, refusals with a retry time, retries.

Every server is real uvicorn on 127.0.0.1 started by the test; the clients are raw
WebSockets, ``SeahavenClient`` and OpenEnv's own ``GenericEnvClient``. No assertion
is timed: a test waits for what the server reports (``/metrics``, the pool's
queue) with generous bounds, and only then acts.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import payments_world
import pytest
from conftest import Wire, wait_until
from openenv import GenericEnvClient
from websockets.exceptions import ConnectionClosed

import seahaven
from seahaven.errors import WorldBug
from seahaven.openenv import AtCapacity, SeahavenClient, ServerError, app, serve

Serve = Callable[..., serve.RunningServer]
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["type"] == "error", reply
    data: dict[str, Any] = reply["data"]
    return data


def closed_code(wire: Wire) -> tuple[int, str]:
    """The close code and reason the server ended ``wire`` with, once it has."""
    with pytest.raises(ConnectionClosed) as closed:
        wire.receive(timeout=30)
    received = closed.value.rcvd
    assert received is not None
    return received.code, received.reason


def queued(server: serve.RunningServer, n: int) -> Callable[[], bool]:
    return lambda: server.hub.admission.waiting == n


def test_a_connection_past_capacity_waits_and_gets_the_seat_that_frees(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1)
    holder = wire(server)
    holder.reset(episode_id="first")
    waiter = wire(server)
    # Sent while the connection waits: held for its session, answered once it has one.
    waiter.send({"type": "reset", "data": {"episode_id": "second"}, "id": 1})
    wait_until(queued(server, 1))
    assert server.hub.active_sessions == 1
    with urllib.request.urlopen(f"{server.base_url}/metrics", timeout=30) as answer:
        metrics = json.loads(answer.read())
    assert metrics["waiting"] == 1 and metrics["workers"][0]["waiting"] == 1
    holder.send({"type": "close"})
    reply = waiter.receive()
    assert reply["type"] == "observation" and reply["id"] == 1, reply
    assert waiter.state()["episode_id"] == "second"
    assert server.hub.admission.waiting == 0 and server.hub.active_sessions == 1


def test_queued_connections_get_seats_in_the_order_they_came(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1)
    holder = wire(server)
    holder.reset()
    first, second = wire(server), None
    first.send({"type": "reset", "data": {"episode_id": "first"}})
    wait_until(queued(server, 1))
    second = wire(server)
    second.send({"type": "reset", "data": {"episode_id": "second"}})
    wait_until(queued(server, 2))
    holder.send({"type": "close"})
    assert first.receive()["type"] == "observation"
    # The second still waits: the seat went to the one that came first.
    assert server.hub.admission.waiting == 1
    first.send({"type": "close"})
    assert second.receive()["type"] == "observation"
    assert second.state()["episode_id"] == "second"


def test_a_full_queue_refuses_with_a_retry_time(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1, admission_queue=1, retry_after=7)
    holder = wire(server)
    holder.reset()
    waiter = wire(server)
    waiter.send({"type": "reset", "data": {}})
    wait_until(queued(server, 1))
    refused = wire(server)
    error = error_of(refused.receive())
    assert error["code"] == "CAPACITY_REACHED"
    assert error["retry_after"] == 7
    assert error["active_sessions"] == 1 and error["max_sessions"] == 1
    assert error["waiting"] == 1
    assert "retry after 7 s" in error["message"]
    assert closed_code(refused) == (1013, "at capacity; retry after 7 s")
    # The one in the queue keeps its place, and gets the seat.
    holder.send({"type": "close"})
    assert waiter.receive()["type"] == "observation"


def test_a_wait_that_runs_out_is_refused_with_a_retry_time(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1, admission_wait=0.2, retry_after=3)
    holder = wire(server)
    holder.reset()
    waiter = wire(server)
    waiter.send({"type": "reset", "data": {}})
    error = error_of(waiter.receive())
    assert error["code"] == "CAPACITY_REACHED" and error["retry_after"] == 3
    assert "no seat freed in the 0.2 s" in error["message"]
    assert closed_code(waiter)[0] == 1013
    assert server.hub.admission.waiting == 0
    # The session that held the seat never noticed.
    assert holder.call("add_note", text="still here")["type"] == "observation"


def test_no_queue_refuses_at_once_with_a_retry_time(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1, admission_queue=0)
    wire(server).reset()
    refused = wire(server)
    error = error_of(refused.receive())
    assert error["code"] == "CAPACITY_REACHED" and error["retry_after"] == 5
    assert "queues no new session" in error["message"]
    assert closed_code(refused) == (1013, "at capacity; retry after 5 s")


def test_a_queued_connection_that_leaves_gives_up_its_place(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1, admission_queue=1)
    holder = wire(server)
    holder.reset()
    leaver = wire(server)
    leaver.send({"type": "reset", "data": {}})
    wait_until(queued(server, 1))
    leaver.connection.close()
    wait_until(queued(server, 0))
    # Its place is free: the next connection queues rather than being refused, and the seat,
    # when it frees, is the next one's.
    stayer = wire(server)
    stayer.send({"type": "reset", "data": {"episode_id": "stayer"}})
    wait_until(queued(server, 1))
    holder.send({"type": "close"})
    assert stayer.receive()["type"] == "observation"
    assert stayer.state()["episode_id"] == "stayer"
    assert server.hub.active_sessions == 1


def test_what_a_queued_connection_sends_is_answered_in_order_once_it_is_in(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world, max_concurrent_envs=1)
    holder = wire(server)
    holder.reset()
    waiter = wire(server)
    garbage: list[str | bytes] = [b"\xff\xfe", "{not json", "[]", '{"type": "dance"}'] * 6
    for frame in garbage:
        waiter.send(frame)
    waiter.send({"type": "reset", "data": {"episode_id": "after the garbage"}, "id": "last"})
    wait_until(queued(server, 1))
    holder.send({"type": "close"})
    codes = [error_of(waiter.receive())["code"] for _ in garbage]
    assert set(codes) <= {"INVALID_JSON", "VALIDATION_ERROR", "UNKNOWN_TYPE"}, codes
    reply = waiter.receive()
    assert reply["type"] == "observation" and reply["id"] == "last", reply
    assert waiter.state()["episode_id"] == "after the garbage"


def test_seahaven_client_retries_a_refused_session_and_gets_in(
    serving: Serve,
) -> None:
    server = serving(payments_world.world, max_concurrent_envs=1, admission_queue=0, retry_after=1)
    holder = SeahavenClient(base_url=server.base_url)
    holder.reset(fixture="small_shop")
    clients: list[SeahavenClient] = []
    results: list[Any] = []

    def play() -> None:
        with SeahavenClient(base_url=server.base_url, capacity_retries=1000) as latecomer:
            clients.append(latecomer)
            result = latecomer.reset(fixture="small_shop", episode_id="late")
            results.append((result.observation.metadata["episode_id"], latecomer.state()))

    player = threading.Thread(target=play)
    player.start()
    try:
        wait_until(lambda: bool(clients) and clients[0].capacity_retries_made >= 1, timeout=60)
    finally:
        holder.close()
    player.join(timeout=120)
    assert not player.is_alive()
    [(episode_id, state)] = results
    assert episode_id == "late" and state.episode_id == "late"


def test_seahaven_client_raises_at_capacity_once_its_retries_run_out(serving: Serve) -> None:
    server = serving(payments_world.world, max_concurrent_envs=1, admission_queue=0, retry_after=1)
    with SeahavenClient(base_url=server.base_url) as holder:
        holder.reset(fixture="small_shop")
        with SeahavenClient(base_url=server.base_url, capacity_retries=1) as latecomer:
            with pytest.raises(AtCapacity) as raised:
                latecomer.reset(fixture="small_shop")
            assert raised.value.code == "CAPACITY_REACHED"
            assert raised.value.attempts == 2 and raised.value.waited >= 1
            assert raised.value.data["retry_after"] == 1
            assert "stayed at capacity" in str(raised.value)
            assert "capacity_retries" in str(raised.value)
            assert latecomer.capacity_retries_made == 1
        # Not retrying at all is a choice too; the refusal is still AtCapacity, a ServerError.
        impatient = SeahavenClient(base_url=server.base_url, capacity_retries=0)
        with impatient, pytest.raises(ServerError, match="CAPACITY_REACHED"):
            impatient.reset(fixture="small_shop")
        # The holder's episode went on throughout.
        assert holder.call("get_balance").error is None


def test_seahaven_eval_against_a_full_server_waits_and_retries_until_it_gets_in(
    serving: Serve, wire: Any
) -> None:
    import depot

    from seahaven.evaluation import evaluate, solution_policy
    from seahaven.openenv import trial_runner

    world = depot.make_depot()
    pack = depot.make_pack(world)
    server = serving(
        world, scenarios=[pack], max_concurrent_envs=1, admission_wait=2, retry_after=1
    )
    holder = wire(server)
    holder.reset()
    results: list[Any] = []
    runner = threading.Thread(
        target=lambda: results.append(
            evaluate(pack, solution_policy, trials=1, runner=trial_runner(server.base_url))
        )
    )
    runner.start()
    try:
        # Its first connection waits, is refused when the wait runs out, and comes back.
        wait_until(queued(server, 1), timeout=60)
        wait_until(queued(server, 0), timeout=60)
        wait_until(queued(server, 1), timeout=60)
    finally:
        holder.send({"type": "close"})
    runner.join(timeout=300)
    assert not runner.is_alive()
    [(_, trials)] = results
    assert trials and all(trial.error is None and trial.score == 1.0 for trial in trials)


def test_seahaven_client_options_are_checked() -> None:
    with pytest.raises(ValueError, match="capacity_retries"):
        SeahavenClient(base_url="http://127.0.0.1:9", capacity_retries=-1)
    with pytest.raises(ValueError, match="capacity_wait_s"):
        SeahavenClient(base_url="http://127.0.0.1:9", capacity_wait_s=float("nan"))


def test_the_stock_openenv_client_waits_its_turn_or_hears_why_not(serving: Serve) -> None:
    server = serving(payments_world.world, max_concurrent_envs=1)
    holder = GenericEnvClient(base_url=server.base_url).sync()
    holder.__enter__()
    holder.reset()
    answers: list[Any] = []

    def queue_up() -> None:
        with GenericEnvClient(base_url=server.base_url).sync() as stock:
            answers.append(stock.reset())

    waiting = threading.Thread(target=queue_up)
    waiting.start()
    try:
        wait_until(queued(server, 1))
    finally:
        holder.__exit__(None, None, None)
    waiting.join(timeout=60)
    assert not waiting.is_alive() and answers[0].done is False
    # With no queue it is refused at once, in words it raises, never left hanging.
    refusing = serving(payments_world.world, max_concurrent_envs=1, admission_queue=0)
    with GenericEnvClient(base_url=refusing.base_url).sync() as first:
        first.reset()
        with GenericEnvClient(base_url=refusing.base_url).sync() as stock:
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED") as raised:
                stock.reset()
            assert "retry after 5 s" in str(raised.value)


def test_a_session_made_over_http_at_capacity_says_when_to_retry(serving: Serve, wire: Any) -> None:
    server = serving(payments_world.world, max_concurrent_envs=1, retry_after=9)
    holder = wire(server)
    holder.reset()

    def create() -> tuple[int, str | None, dict[str, Any]]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        body = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
        connection.request("POST", "/mcp", json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        return response.status, response.getheader("Retry-After"), answer

    status, retry_after, answer = create()
    assert status == 200 and retry_after == "9"
    assert answer["error"]["code"] == -32000
    assert answer["error"]["data"]["code"] == "CAPACITY_REACHED"
    assert answer["error"]["data"]["retry_after"] == 9
    holder.send({"type": "close"})
    wait_until(lambda: server.hub.active_sessions == 0)
    status, retry_after, answer = create()
    assert status == 200 and retry_after is None and "session_id" in answer["result"]


def test_bad_admission_options_are_refused_naming_the_option(
    beacon_world: seahaven.World,
) -> None:
    for keywords, option in (
        ({"admission_queue": -1}, "admission_queue"),
        ({"admission_queue": True}, "admission_queue"),
        ({"admission_wait": -1.0}, "admission_wait"),
        ({"admission_wait": float("nan")}, "admission_wait"),
        ({"retry_after": 0}, "retry_after"),
        ({"retry_after": 2.5}, "retry_after"),
    ):
        with pytest.raises(WorldBug, match=option):
            app(beacon_world, **keywords)


def test_under_two_workers_a_seat_freed_in_one_goes_to_a_connection_waiting_in_either(
    tmp_path: Path,
) -> None:
    from serving_load import start_server
    from websockets.sync.client import connect

    extra = ("--workers", "2", "--max_concurrent_envs", "1")
    with start_server(tmp_path, extra=extra) as server, ExitStack() as sockets:
        url = f"ws://127.0.0.1:{server.port}/ws"

        def opened() -> Any:
            return sockets.enter_context(connect(url, open_timeout=30))

        holder = opened()
        holder.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(holder.recv(timeout=60))["type"] == "observation"
        # Two connections: the front hands them to the workers in turn, so one waits in each
        # worker's queue (or both in one); the order holds either way.
        first = opened()
        first.send(json.dumps({"type": "reset", "data": {"episode_id": "first"}}))
        wait_until(lambda: server.get("/metrics")["waiting"] == 1, timeout=60)
        second = opened()
        second.send(json.dumps({"type": "reset", "data": {"episode_id": "second"}}))
        wait_until(lambda: server.get("/metrics")["waiting"] == 2, timeout=60)
        holder.send(json.dumps({"type": "close"}))
        assert json.loads(first.recv(timeout=60))["type"] == "observation"
        wait_until(lambda: server.get("/metrics")["waiting"] == 1, timeout=60)
        assert server.get("/capacity")["active_sessions"] == 1
        first.send(json.dumps({"type": "close"}))
        assert json.loads(second.recv(timeout=60))["type"] == "observation"
        second.send(json.dumps({"type": "close"}))
        wait_until(lambda: server.get("/capacity")["active_sessions"] == 0, timeout=60)


def test_by_default_a_crowd_past_capacity_waits_rather_than_being_refused(
    serving: Serve, wire: Any, beacon_world: seahaven.World
) -> None:
    """The default queue holds a crowd (it once refused all but 100, each to come back later)."""
    import inspect

    from seahaven_openenv.plugin import serve_command
    from seahaven_openenv.sessions import admission

    defaults = inspect.signature(serve_command).parameters
    assert defaults["admission_queue"].default == admission.DEFAULT_ADMISSION_QUEUE
    assert defaults["admission_wait"].default == admission.DEFAULT_ADMISSION_WAIT_SECONDS
    # A reset admitted after the longest wait is still answered within 30 s.
    assert admission.DEFAULT_ADMISSION_WAIT_SECONDS < 30
    # The default queue, but a wait no loaded machine outlasts while the crowd gathers: the
    # waiters that joined first must still be waiting when the seat frees.
    server = serving(beacon_world, max_concurrent_envs=1, admission_wait=600)
    assert server.hub.admission.queue == admission.DEFAULT_ADMISSION_QUEUE >= 1000
    holder = wire(server)
    holder.reset()
    crowd = [wire(server) for _ in range(150)]
    for index, waiter in enumerate(crowd):
        waiter.send({"type": "reset", "data": {"episode_id": f"w{index}"}, "id": index})
    wait_until(queued(server, 150))
    holder.send({"type": "close"})
    reply = crowd[0].receive()
    assert reply["type"] == "observation" and reply["id"] == 0, reply
    assert server.hub.admission.waiting == 149


class RefusingProxy:
    """A TCP proxy on 127.0.0.1 answering its first connections' handshakes with refusals.

    What a load balancer, or a server starved of CPU, does: the first
    ``len(answers)`` connections read their request head and get the next
    answer (a status line and headers) and a close; every later one is relayed
    to ``port``, byte for byte both ways. ``arrivals`` holds when each came.
    """

    def __init__(self, port: int, answers: list[bytes]) -> None:
        self.port = port
        self.answers = list(answers)
        self.arrivals: list[float] = []
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0)
        )
        self.bound = self.server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.arrivals.append(time.monotonic())
        if self.answers:
            answer = self.answers.pop(0)
            with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
                await reader.readuntil(b"\r\n\r\n")
                writer.write(answer + b"content-length: 0\r\nconnection: close\r\n\r\n")
                await writer.drain()
            writer.close()
            return
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture
def refusing(serving: Serve) -> Iterator[Callable[[list[bytes]], RefusingProxy]]:
    server = serving(payments_world.world)
    proxies: list[RefusingProxy] = []

    def start(answers: list[bytes]) -> RefusingProxy:
        proxies.append(RefusingProxy(server.port, answers))
        return proxies[-1]

    yield start
    for proxy in proxies:
        proxy.close()


def test_seahaven_client_connects_again_after_a_408_or_503_handshake(refusing: Any) -> None:
    proxy = refusing(
        [
            b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n",
            b"HTTP/1.1 408 Request Timeout\r\n",
        ]
    )
    with SeahavenClient(base_url=f"http://127.0.0.1:{proxy.bound}") as client:
        result = client.reset(fixture="small_shop", episode_id="after two refusals")
        assert result.observation.metadata["episode_id"] == "after two refusals"
        assert client.call("get_balance").error is None
        assert client.handshake_retries_made == 2
    # Three connections: the 503's Retry-After was waited before the second.
    assert len(proxy.arrivals) == 3
    assert proxy.arrivals[1] - proxy.arrivals[0] >= 1.0


def test_seahaven_client_stops_connecting_again_once_its_retries_run_out(refusing: Any) -> None:
    proxy = refusing([b"HTTP/1.1 408 Request Timeout\r\n"] * 5)
    client = SeahavenClient(base_url=f"http://127.0.0.1:{proxy.bound}", capacity_retries=1)
    with pytest.raises(ConnectionError, match="408"), client:
        client.reset(fixture="small_shop")
    assert len(proxy.arrivals) == 2 and client.handshake_retries_made == 1


def test_seahaven_client_does_not_retry_a_handshake_refused_for_good(refusing: Any) -> None:
    proxy = refusing([b"HTTP/1.1 403 Forbidden\r\n"] * 5)
    client = SeahavenClient(base_url=f"http://127.0.0.1:{proxy.bound}")
    with pytest.raises(ConnectionError, match="403"), client:
        client.reset(fixture="small_shop")
    assert len(proxy.arrivals) == 1 and client.handshake_retries_made == 0
