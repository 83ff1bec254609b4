"""The HTTP routes beside /ws: health, metadata, schema, fixtures, capacity, and the refusals."""

from __future__ import annotations

import json
import urllib.error
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
