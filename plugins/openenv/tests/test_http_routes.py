"""The HTTP routes beside /ws: health, metadata, schema, fixtures, capacity, and the refusals."""

from __future__ import annotations

import contextlib
import http.client as http_client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import payments_world
import pytest
from openenv.core.env_server.mcp_types import JsonRpcResponse
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    ServerCapacityStatus,
)
from seahaven_openenv.front import runner
from websockets.exceptions import ConnectionClosed

import seahaven


def http(server: Any, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
    """Make one request; answer the status and the decoded JSON body."""
    request = urllib.request.Request(server.base_url + path, data=body, method=method)
    if body is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_health(served) -> None:
    status, body = http(served, "GET", "/health")
    assert status == 200 and body == {"status": "healthy"}
    HealthResponse.model_validate(body)


def test_metadata_is_the_world_and_its_readme_is_the_card(serving) -> None:
    server = serving(payments_world.world)
    status, body = http(server, "GET", "/metadata")
    assert status == 200
    EnvironmentMetadata.model_validate(body)
    assert body["name"] == "payments" and body["version"] == payments_world.world.version
    assert body["description"] == payments_world.world.description
    # The README beside the world's pyproject.toml: worlds/payments/README.md in this checkout.
    readme = Path(payments_world.__file__).resolve().parents[2] / "README.md"
    assert body["readme_content"] == readme.read_text(encoding="utf-8")


def test_a_world_with_no_description_publishes_a_fallback(serving, tmp_path) -> None:
    world = seahaven.World(
        name="plain", version="0.1.0", schema="", state_format="seahaven.state/1", work_dir=tmp_path
    )
    status, body = http(serving(world), "GET", "/metadata")
    assert status == 200
    assert body["description"] == "Seahaven world plain"


def test_schema_publishes_three_models_with_every_field_described(served) -> None:
    status, body = http(served, "GET", "/schema")
    assert status == 200
    assert {"action", "observation", "state"} <= set(body)
    assert "tool_name" in body["action"]["properties"]
    assert {"result", "error", "tool_name"} <= set(body["observation"]["properties"])
    state = body["state"]
    expected = {
        "format",
        "seahaven_version",
        "world",
        "composition",
        "fixture",
        "episode_id",
        "seed",
        "now",
        "clock_mode",
        "startup",
        "setup_sql",
        "call_count",
        "state",
        "step_count",
    }
    assert expected <= set(state["properties"])

    def undescribed(schema: dict[str, Any], where: str) -> list[str]:
        missing = []
        for name, field in schema.get("properties", {}).items():
            if not field.get("description"):
                missing.append(f"{where}.{name}")
        for name, definition in schema.get("$defs", {}).items():
            missing.extend(undescribed(definition, name))
        return missing

    for key in ("action", "observation", "state"):
        assert undescribed(body[key], key) == []


def test_fixtures_lists_the_worlds_fixtures(serving) -> None:
    status, body = http(serving(payments_world.world), "GET", "/fixtures")
    assert status == 200
    assert [fixture["id"] for fixture in body] == [f.id for f in payments_world.world.fixtures()]
    assert all(fixture["description"] and fixture["now"] for fixture in body)


def test_capacity(serving, beacon_world, wire) -> None:
    server = serving(beacon_world, max_concurrent_envs=7)
    ws = wire(server)
    ws.reset()
    status, body = http(server, "GET", "/capacity")
    assert status == 200
    ServerCapacityStatus.model_validate(body)
    assert body == {"active_sessions": 1, "max_sessions": 7}


@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/reset"), ("POST", "/step"), ("GET", "/state")]
)
def test_episode_control_over_http_is_refused_naming_ws(served, method: str, path: str) -> None:
    status, body = http(served, method, path, b"{}" if method == "POST" else None)
    assert status == 501
    detail = body["detail"]
    assert detail["code"] == "http_episode_control_unsupported"
    assert detail["details"]["route"] == f"{method} {path}"
    assert detail["details"]["use_instead"] == "/ws"
    assert "/ws" in detail["message"]


def test_post_mcp_is_a_json_rpc_error_inside_a_200(served) -> None:
    request = {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}}
    status, body = http(served, "POST", "/mcp", json.dumps(request).encode())
    assert status == 200
    JsonRpcResponse.model_validate(body)
    assert body["id"] == 9 and body["error"]["code"] == -32601
    assert "seahaven mcp" in body["error"]["message"]
    # A body that is not JSON is JSON-RPC's parse error.
    status, body = http(served, "POST", "/mcp", b"not json")
    assert status == 200 and body["error"]["code"] == -32700 and body["id"] is None


def test_ws_mcp_is_refused_the_same_way(served, wire) -> None:
    ws = wire(served, "/mcp")
    reply = ws.ask({"jsonrpc": "2.0", "id": "a", "method": "tools/list"})
    assert reply["id"] == "a" and reply["error"]["code"] == -32601


def test_openapi_keeps_the_refused_paths(served) -> None:
    status, body = http(served, "GET", "/openapi.json")
    assert status == 200
    paths = body["paths"]
    assert "post" in paths["/reset"] and "post" in paths["/step"] and "get" in paths["/state"]
    assert "post" in paths["/mcp"]
    for path in ("/health", "/metadata", "/schema", "/fixtures"):
        assert "get" in paths[path]


# --- HEAD, and a listing that survives a bad fixture ---------------------------------------------


def raw(server: Any, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One request; the status, the headers (lower-cased names) and the body as sent."""
    parts = urllib.parse.urlsplit(server.base_url)
    connection = http_client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_head_is_answered_wherever_get_is(serving, beacon_world) -> None:
    server = serving([beacon_world, payments_world.world])
    paths = ["/", "/health", "/worlds", "/capacity", "/openapi.json", "/docs"]
    for world in ("beacon", "payments"):
        base = f"/worlds/{world}"
        paths += [f"{base}{path}" for path in ("/health", "/metadata", "/schema", "/fixtures")]
        paths += [f"{base}/capacity", f"{base}/console", f"{base}/console/console.js"]
    for path in paths:
        got_status, got_headers, got_body = raw(server, "GET", path)
        status, headers, body = raw(server, "HEAD", path)
        assert (status, body) == (got_status, b""), path
        assert headers.get("content-type") == got_headers.get("content-type"), path
        assert headers.get("content-length") == str(len(got_body)), path


def test_a_fixture_that_does_not_load_is_left_out_of_the_listing_and_logged(
    serving, tmp_path, server_log
) -> None:
    world = seahaven.World(
        name="cellar",
        version="0.1.0",
        schema="CREATE TABLE casks (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        fixtures_dir=tmp_path / "fixtures",
        work_dir=tmp_path,
    )
    with world.instance() as instance:
        instance.freeze("stocked", "Three casks in the cellar")
    # A link to a fixture under another name claims the same id twice; a dangling one is broken.
    (tmp_path / "fixtures" / "linked").symlink_to(tmp_path / "fixtures" / "stocked")
    (tmp_path / "fixtures" / "dangling").symlink_to(tmp_path / "nowhere")
    broken = tmp_path / "fixtures" / "broken"
    broken.mkdir()
    (broken / "fixture.yaml").write_text("format_version: [", encoding="utf-8")

    status, body = http(serving(world), "GET", "/fixtures")

    assert status == 200
    assert [fixture["id"] for fixture in body] == ["stocked"]
    logged = server_log.text()
    assert "linked" in logged and "broken" in logged
    assert str(tmp_path) not in json.dumps(body)


# --- a server of several worlds ------------------------------------------------------------------


def test_every_server_lists_its_worlds(serving, beacon_world) -> None:
    status, body = http(serving(beacon_world), "GET", "/worlds")
    assert status == 200
    assert body == [
        {
            "name": "beacon",
            "version": "2.1.0",
            "description": "A lighthouse log for the serving tests.",
            "base_path": "/worlds/beacon",
        }
    ]
    status, headers, _ = raw(serving(beacon_world), "GET", "/")
    assert (status, headers["location"]) == (308, "console")


def test_the_root_of_several_worlds_is_an_index_linking_each_console(serving, beacon_world) -> None:
    server = serving([beacon_world, payments_world.world])
    status, headers, body = raw(server, "GET", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"].startswith("default-src 'none'")
    page = body.decode()
    for world in ("beacon", "payments"):
        assert f'href="worlds/{world}/console"' in page
        assert f"/worlds/{world}/ws" in page
    status, headers, _ = raw(server, "GET", "/console")
    assert (status, headers["location"]) == (308, "./")
    assert [world["name"] for world in http(server, "GET", "/worlds")[1]] == ["beacon", "payments"]


def test_a_session_at_the_root_of_several_worlds_is_told_where_sessions_are(
    serving, beacon_world, wire
) -> None:
    server = serving([beacon_world, payments_world.world])
    ws = wire(server)
    reply = ws.reset()
    assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
    assert "/worlds/beacon/ws" in reply["data"]["message"]
    assert reply["data"]["worlds"] == ["/worlds/beacon/ws", "/worlds/payments/ws"]
    with pytest.raises(ConnectionClosed) as closed:
        ws.receive()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert "/worlds/payments/ws" in closed.value.rcvd.reason
    assert server.hub.active_sessions == 0


# --- half-sent requests --------------------------------------------------------------------------


def closed_by_server(sock: socket.socket) -> bytes:
    """Read until the server closes ``sock``; fail the test if it is still open after 30 s."""
    sock.settimeout(30)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except TimeoutError:
        pytest.fail(f"the server still holds the connection; it sent {answer!r}")
    except ConnectionResetError:
        pass
    return answer


@pytest.fixture
def quick_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers started in this test give a request, and a silent connection, half a second."""
    monkeypatch.setattr(runner, "REQUEST_READ_SECONDS", 0.5)
    monkeypatch.setattr(runner, "IDLE_CONNECTION_SECONDS", 0.5)


def head_answer(sock: socket.socket) -> bytes:
    """The status line and headers the server answers on ``sock`` (30 s at most)."""
    sock.settimeout(30)
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer


UPGRADE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def test_the_request_clock_starts_at_its_first_byte_not_at_accept(
    serving, beacon_world, monkeypatch
) -> None:
    # A client on a starved machine connects, then waits for the CPU before it writes: that
    # wait is not a slow request. Past the read time, its handshake and its GET are served.
    monkeypatch.setattr(runner, "REQUEST_READ_SECONDS", 0.3)
    monkeypatch.setattr(runner, "IDLE_CONNECTION_SECONDS", 60.0)
    server = serving(beacon_world)
    late = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
    try:
        time.sleep(1.0)  # three read times, with nothing sent
        late[0].sendall(UPGRADE)
        late[1].sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answers = [head_answer(sock) for sock in late]
    finally:
        for sock in late:
            sock.close()
    assert answers[0].startswith(b"HTTP/1.1 101"), answers[0]
    assert answers[1].startswith(b"HTTP/1.1 200"), answers[1]


def test_a_connection_that_never_sends_is_closed_after_the_idle_time(
    serving, beacon_world, monkeypatch
) -> None:
    monkeypatch.setattr(runner, "REQUEST_READ_SECONDS", 60.0)
    monkeypatch.setattr(runner, "IDLE_CONNECTION_SECONDS", 0.3)
    server = serving(beacon_world)
    with socket.create_connection(("127.0.0.1", server.port)) as silent:
        assert closed_by_server(silent) in (
            b"",
            b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )
    assert http(server, "GET", "/health")[0] == 200


def test_the_read_and_idle_times_must_be_seconds_above_zero(serving, beacon_world) -> None:
    for key, value in (("request_read_seconds", 0), ("idle_connection_seconds", -1.0)):
        with pytest.raises(seahaven.WorldBug, match=key):
            serving(beacon_world, **{key: value})


def test_a_request_that_stops_half_way_is_closed(serving, beacon_world, quick_reads) -> None:
    server = serving(beacon_world)
    partials = [
        b"",  # connected, and nothing sent
        b"GET /health HTTP/1.1\r\n",
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: yes",
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n",
        b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"jsonrpc":',
    ]
    sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in partials]
    try:
        for sock, partial in zip(sockets, partials, strict=True):
            sock.sendall(partial)
        answers = [closed_by_server(sock) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
    for answer in answers[:4]:
        assert answer in (
            b"",
            b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ), answer
    # The server goes on answering.
    assert http(server, "GET", "/health")[0] == 200


def test_a_request_after_an_idle_keep_alive_must_arrive_whole_too(
    serving, beacon_world, quick_reads
) -> None:
    server = serving(beacon_world)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert b"200" not in closed_by_server(sock)


def test_a_head_larger_than_the_limit_is_refused(serving, beacon_world) -> None:
    server = serving(beacon_world)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
        with contextlib.suppress(OSError):
            for _ in range(runner.HEAD_LIMIT_BYTES // len(filler) + 8):
                sock.sendall(filler)
        answer = closed_by_server(sock)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
