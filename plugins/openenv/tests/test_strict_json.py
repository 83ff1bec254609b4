"""JSON Python reads but no reply can carry: NaN, Infinity, 1e999, and their kin (issue 38).

Python's parser takes ``NaN`` and ``Infinity``, and reads ``1e999`` as infinity;
a value holding one can never be encoded again, so a server that accepted it
failed its own reply (a plain-text 500, a closed socket). Every door refuses
such text with its protocol's error instead, as it refuses text nested too
deeply, a lone surrogate or an integer of more digits than Python reads, and
the session goes on.
"""

from __future__ import annotations

import http.client
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Wire, post_mcp
from openenv.core.env_server.types import WSErrorResponse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shelf import handle, make_shelf

import seahaven.http
from seahaven.http import HttpRequest

HUGE_INTEGER = "9" * 5000
# Each body holds one value no reply could carry, or that Python cannot read at all.
HOSTILE = {
    "overflow": '{"jsonrpc": "2.0", "id": 1e999, "method": "tools/list"}',
    "overflow-bare": '{"id": 1e999}',
    "overflow-negative": '{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": -1e400}}',
    "nan": '{"jsonrpc": "2.0", "id": NaN, "method": "tools/list"}',
    "infinity": '{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": Infinity}}',
    "minus-infinity": '{"jsonrpc": "2.0", "id": -Infinity, "method": "x"}',
    "huge-integer": '{"jsonrpc": "2.0", "id": ' + HUGE_INTEGER + ', "method": "x"}',
    "lone-surrogate": '{"jsonrpc": "2.0", "id": "\\ud800", "method": "x"}',
    "deep": "[" * 10_000,
}


def post(server: Any, body: str) -> tuple[int, str, Any]:
    """POST ``body`` to /mcp; the status, the content type and the decoded answer."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request(
            "POST", "/mcp", body=body.encode(), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        text = response.read()
        return response.status, response.getheader("content-type") or "", json.loads(text)
    finally:
        connection.close()


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_post_mcp_answers_a_json_rpc_parse_error_never_a_500(served, body: str) -> None:
    status, content_type, answer = post(served, body)
    assert status == 200 and content_type == "application/json"
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert answer["error"]["data"] == {"code": "INVALID_JSON"}


@pytest.mark.parametrize(
    "params",
    ['{"seed": 1e999}', '{"seed": NaN}', '{"seed": ' + HUGE_INTEGER + "}"],
    ids=["overflow", "nan", "huge-integer"],
)
def test_a_session_made_over_post_mcp_goes_on_after_a_hostile_request(served, params) -> None:
    created = post_mcp(
        served.host,
        served.port,
        {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}},
    )
    session_id = created["result"]["session_id"]
    for method in ("openenv/session/create", "tools/call"):
        body = (
            f'{{"jsonrpc": "2.0", "id": 2, "method": "{method}", "params": '
            f'{{"session_id": "{session_id}", "name": "add_note", "arguments": {params}}}}}'
        )
        status, _, answer = post(served, body)
        assert status == 200 and answer["error"]["code"] == -32700
    call = post_mcp(
        served.host,
        served.port,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"session_id": session_id, "name": "add_note", "arguments": {"text": "on"}},
        },
    )
    assert call["result"]["isError"] is False
    # The refused create made no session: the one made first is the only one.
    assert served.hub.active_sessions == 1


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_ws_mcp_answers_a_parse_error_and_goes_on(served, wire, body: str) -> None:
    ws = wire(served, "/mcp")
    ws.connection.send(body)
    answer = json.loads(ws.connection.recv(timeout=30))
    assert answer["id"] is None and answer["error"]["code"] == -32700
    again = ws.ask({"jsonrpc": "2.0", "id": "a", "method": "tools/list"})
    assert again["id"] == "a" and again["error"]["code"] == -32601


# --- /ws frames ----------------------------------------------------------------------------------

FRAMES = {
    "reset-overflow": '{"type": "reset", "data": {"seed": 1e999}}',
    "reset-nan": '{"type": "reset", "data": {"seed": NaN}}',
    "reset-huge-integer": '{"type": "reset", "data": {"seed": ' + HUGE_INTEGER + "}}",
    "id-overflow": '{"type": "state", "id": 1e999}',
    "id-minus-infinity": '{"type": "state", "id": -Infinity}',
    "argument-overflow": (
        '{"type": "step", "data": {"type": "call_tool", "tool_name": "wait", '
        '"arguments": {"seconds": 1e400}}}'
    ),
    "argument-infinity": (
        '{"type": "step", "data": {"type": "call_tool", "tool_name": "wait", '
        '"arguments": {"seconds": Infinity}}}'
    ),
    "mcp-id-overflow": '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1e999, "method": "ping"}}',
    "mcp-argument-nan": (
        '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "wait", "arguments": {"seconds": NaN}}}}'
    ),
}


def assert_session_goes_on(ws: Wire) -> None:
    """The episode kept before the hostile frame is still there, and answers a call."""
    document = ws.state()
    assert document["episode_id"] == "kept" and document["call_count"] == 0
    assert ws.call("add_note", text="still here")["data"]["observation"]["error"] is None


@pytest.mark.parametrize("frame", FRAMES.values(), ids=FRAMES.keys())
def test_a_ws_frame_holding_what_json_cannot_carry_is_invalid_json(
    served, wire, server_log, frame: str
) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    ws.connection.send(frame)
    reply = json.loads(ws.connection.recv(timeout=30))
    WSErrorResponse.model_validate(reply)
    assert reply["data"]["code"] == "INVALID_JSON", reply
    assert len(reply["data"]["message"]) < 500
    assert_session_goes_on(ws)
    # Refused as the client's mistake: nothing for the operator to read.
    assert "Traceback" not in server_log.text()


# --- seahaven.http -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        '{"seed": 1e999}',
        '{"seed": NaN}',
        '{"now": Infinity}',
        '{"seed": ' + HUGE_INTEGER + "}",
        '{"fixture": "\\ud800"}',
        "[" * 100_000,
    ],
    ids=["overflow", "nan", "infinity", "huge-integer", "lone-surrogate", "deep"],
)
def test_a_put_holding_what_json_cannot_carry_is_a_400(tmp_path: Path, body: str) -> None:
    shelf = make_shelf(tmp_path / "fixtures")
    with seahaven.http.running(shelf, handle) as server, httpx.Client(timeout=30) as client:
        client.post(server.url("t") + "/v1/books", json={"title": "Kept"})
        refused = client.put(server.url("t"), content=body.encode())
        assert refused.status_code == 400
        assert refused.headers["content-type"] == "application/json"
        assert len(refused.json()["seahaven_error"]) < 1000
        titles = [row["title"] for row in client.get(server.url("t") + "/v1/books").json()]
        assert titles == ["Kept"]


@pytest.mark.parametrize(
    "body",
    [
        b'{"title": 1e999}',
        b'{"title": NaN}',
        b"[" * 100_000,
        b'{"n": ' + HUGE_INTEGER.encode() + b"}",
    ],
    ids=["overflow", "nan", "deep", "huge-integer"],
)
def test_a_request_body_json_cannot_carry_is_a_value_error_for_the_handler(body: bytes) -> None:
    request = HttpRequest("POST", "/v1/books", body=body)
    with pytest.raises(ValueError, match=r"^(?!.*\d{300})"):
        request.json()


# --- FastAPI's own body routes (OpenEnv's Task API) ----------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/company/tasks", '{"split": 1e999}', "split"),
        ("/company/tasks", '{"split": NaN}', "split"),
        ("/company/task", '{"split": "test", "index": 1e999}', "index"),
        ("/company/task_range", '{"split": "test", "start": -Infinity}', "start"),
        (
            "/company/num_tasks",
            '{"split": "' + "s" * 100_000 + '", "x": [' + "1," * 5000 + "1]}",
            "x",
        ),
    ],
    ids=["overflow", "nan", "index-overflow", "minus-infinity", "long-echo"],
)
def test_a_task_api_body_json_cannot_carry_is_a_422_never_a_500(
    serving, path: str, body: str, field: str
) -> None:
    import company_world

    server = serving(company_world.world, scenarios=["company"])
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request(
            "POST", path, body=body.encode(), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        text = response.read()
    finally:
        connection.close()
    assert response.status == 422 and response.getheader("content-type") == "application/json"
    assert len(text) < 8_000
    [entry] = [item for item in json.loads(text)["detail"] if item["loc"][-1] == field]
    assert {"type", "loc", "msg", "input"} <= set(entry)
    # The server goes on answering.
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request(
            "POST",
            "/company/num_tasks",
            body=b'{"split": "test"}',
            headers={"Content-Type": "application/json"},
        )
        assert connection.getresponse().status == 200
    finally:
        connection.close()
