"""Foreign hosts and origins are refused, on HTTP routes and WebSocket handshakes alike.

Every server here is real (uvicorn on a loopback port); the handshakes are real HTTP/1.1
upgrade requests, sent by hand where a test needs a ``Host`` no client library would send.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
from typing import Any

import payments_world
import pytest
from conftest import Serve
from openenv import GenericEnvClient
from seahaven_openenv.front.guard import Guard, bound_hosts
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import seahaven
from seahaven.errors import WorldBug
from seahaven.openenv import serve


def request(
    server: serve.RunningServer,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    *,
    address: str = "127.0.0.1",
) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP request; ``headers`` may set ``Host`` to anything."""
    connection = http.client.HTTPConnection(address, server.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        given = {"Host": f"{address}:{server.port}", **(headers or {})}
        for name, value in given.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def handshake(server: serve.RunningServer, path: str, headers: dict[str, str] | None = None) -> int:
    """The status a WebSocket opening handshake to ``path`` is answered with (101: accepted)."""
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
        **(headers or {}),
    }
    return request(server, "GET", path, upgrade)[0]


def detail(body: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(body)["detail"]
    return loaded


@pytest.mark.parametrize("path", ["/ws", "/mcp", "/worlds/beacon/ws"])
def test_a_handshake_from_a_page_of_another_origin_is_refused(
    served: serve.RunningServer, path: str
) -> None:
    url = served.base_url.replace("http://", "ws://") + path
    with pytest.raises(InvalidStatus) as refused:
        connect(url, origin="http://evil.example", open_timeout=10)  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    assert handshake(served, path, {"Origin": "http://evil.example"}) == 403
    # The server's own pages, and clients that send no Origin, get in.
    assert handshake(served, path, {"Origin": served.base_url}) == 101
    assert handshake(served, path) == 101


@pytest.mark.parametrize("path", ["/ws", "/mcp"])
def test_a_handshake_for_a_host_the_server_does_not_serve_is_refused(
    served: serve.RunningServer, path: str
) -> None:
    # DNS rebinding: a name the attacker controls, resolved to 127.0.0.1.
    assert handshake(served, path, {"Host": f"evil.example:{served.port}"}) == 403
    for host in ("localhost", "127.0.0.1", "[::1]"):
        assert handshake(served, path, {"Host": f"{host}:{served.port}"}) == 101, host


@pytest.mark.parametrize("path", ["/health", "/metadata", "/fixtures", "/console", "/schema"])
def test_http_routes_refuse_foreign_hosts_and_origins_naming_the_option(
    served: serve.RunningServer, path: str
) -> None:
    status, headers, body = request(served, "GET", path, {"Host": "evil.example"})
    assert status == 403
    assert headers["content-type"] == "application/json"
    assert detail(body)["code"] == "host_not_allowed"
    assert "--allow-host evil.example" in detail(body)["message"]

    status, _, body = request(served, "GET", path, {"Origin": "https://evil.example"})
    assert status == 403
    assert detail(body)["code"] == "origin_not_allowed"
    assert "--allow-origin https://evil.example" in detail(body)["message"]
    # A sandboxed page or a file says its origin is "null": refused too.
    assert request(served, "GET", path, {"Origin": "null"})[0] == 403

    assert request(served, "GET", path)[0] == 200
    assert request(served, "GET", path, {"Origin": served.base_url})[0] == 200


def test_allowed_hosts_and_origins_let_the_named_ones_in(
    serving: Serve, beacon_world: seahaven.World
) -> None:
    server = serving(
        beacon_world,
        allowed_hosts=["seahaven.test", "*.hf.space"],
        allowed_origins=["http://localhost:3000"],
    )
    for host in ("seahaven.test", "me-beacon.hf.space", "SEAHAVEN.TEST:8080"):
        assert request(server, "GET", "/health", {"Host": host})[0] == 200, host
    assert request(server, "GET", "/health", {"Host": "hf.space.evil.example"})[0] == 403
    assert handshake(server, "/ws", {"Origin": "http://localhost:3000"}) == 101
    assert handshake(server, "/ws", {"Origin": "http://localhost:3001"}) == 403
    # Behind a proxy that ends TLS the page is https and the request plain http: one origin.
    proxied = {"Host": "me-beacon.hf.space", "Origin": "https://me-beacon.hf.space"}
    assert handshake(server, "/ws", proxied) == 101


def test_the_environment_adds_hosts_and_origins_for_an_app_started_elsewhere(
    serving: Serve, beacon_world: seahaven.World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEAHAVEN_ALLOW_HOSTS", "*.hf.space, seahaven.test")
    monkeypatch.setenv("SEAHAVEN_ALLOW_ORIGINS", "https://studio.example")
    server = serving(beacon_world)
    assert request(server, "GET", "/health", {"Host": "a-b.hf.space"})[0] == 200
    assert request(server, "GET", "/health", {"Host": "seahaven.test"})[0] == 200
    assert handshake(server, "/ws", {"Origin": "https://studio.example"}) == 101
    assert request(server, "GET", "/health", {"Host": "evil.example"})[0] == 403


def test_a_server_on_every_interface_answers_the_address_it_was_reached_at(
    serving: Serve, beacon_world: seahaven.World
) -> None:
    everywhere = serving(beacon_world, host="0.0.0.0")
    # 127.0.0.2 is another address of this machine: reached there, it is answered there.
    reached = request(everywhere, "GET", "/health", address="127.0.0.2")
    assert reached[0] == 200
    assert request(everywhere, "GET", "/health", {"Host": "evil.example"})[0] == 403
    # A server bound to one address answers no other address's name.
    loopback = serving(beacon_world)
    assert request(loopback, "GET", "/health", {"Host": "127.0.0.2"})[0] == 403
    # Bound to one name or address, a server answers for it; every interface names none.
    assert bound_hosts("files.internal") == ["files.internal"]
    assert bound_hosts("0.0.0.0") == bound_hosts("::") == []


def test_the_stock_openenv_client_still_gets_in(served: serve.RunningServer) -> None:
    with GenericEnvClient(base_url=served.base_url) as env:
        env.reset(seed=3)
        result = env.step(
            {"type": "call_tool", "tool_name": "add_note", "arguments": {"text": "a"}}
        )
        assert result.observation["result"]["text"] == "a"


def test_a_host_or_origin_that_cannot_be_one_is_refused_when_the_app_is_made(
    beacon_world: seahaven.World,
) -> None:
    with pytest.raises(WorldBug, match="--allow-origin"):
        seahaven.openenv.app(beacon_world, allowed_hosts=["http://example.org"])
    with pytest.raises(WorldBug, match="not an origin"):
        seahaven.openenv.app(beacon_world, allowed_origins=["example.org"])
    with pytest.raises(WorldBug, match="list of strings"):
        seahaven.openenv.app(beacon_world, allowed_hosts="example.org")  # type: ignore[arg-type]


def test_a_request_without_host_comes_from_no_browser_and_is_answered(
    served: serve.RunningServer,
) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer


def test_the_guard_compares_names_as_hosts_are_written() -> None:
    guard = Guard.build(["Example.ORG."], ["HTTP://Localhost:3000/"], environ={})
    assert guard.host_allowed("example.org")
    assert not guard.host_allowed("sub.example.org")

    def scope(**headers: str) -> dict[str, Any]:
        pairs = [(name.encode(), value.encode()) for name, value in headers.items()]
        return {"type": "http", "headers": pairs, "server": ("127.0.0.1", 8000)}

    assert guard.refusal(scope(host="example.org:9", origin="http://localhost:3000")) is None
    assert guard.refusal(scope(host="127.0.0.1:8000", origin="http://127.0.0.1:8000")) is None
    # The same host on another port is another origin.
    assert guard.refusal(scope(host="127.0.0.1:8000", origin="http://127.0.0.1:8001")) is not None
    # The default port is the one the origin's scheme implies.
    assert guard.refusal(scope(host="example.org", origin="https://example.org")) is None
    assert guard.refusal(scope(host="example.org", origin="https://example.org:8443")) is not None
    assert guard.refusal(scope(host="bad host")) is not None


def test_a_server_of_several_worlds_guards_every_world(
    serving: Serve, beacon_world: seahaven.World
) -> None:
    server = serving([beacon_world, payments_world.world])
    for path in ("/worlds/payments/ws", "/worlds/beacon/ws", "/ws"):
        assert handshake(server, path, {"Origin": "http://evil.example"}) == 403, path
    assert request(server, "GET", "/worlds", {"Host": "evil.example"})[0] == 403
