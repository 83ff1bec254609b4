"""Hostile bytes on the wire: deep JSON, lone surrogates, huge names and wrong types.

Every byte a client sends is treated as hostile. A frame the server cannot or
will not read is answered with OpenEnv's error frame, its answer never grows
with what was sent, and the session goes on as if the frame had not come.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import pytest
from conftest import Wire
from openenv.core.env_server.types import WSErrorResponse
from seahaven_openenv.wire import frames
from seahaven_openenv.wire.frames import FrameError

LONG = 1_000_000
# An answer that repeats none of a long input fits in this, whatever the input.
SMALL = 8_000


def raw(ws: Wire, text: str) -> str:
    """Send ``text`` as it is; answer the reply's text."""
    ws.connection.send(text)
    reply = ws.connection.recv(timeout=60)
    assert isinstance(reply, str)
    return reply


def refused(ws: Wire, text: str, code: str) -> dict[str, Any]:
    """Send ``text``; check the reply is a small error frame with ``code``; answer its data."""
    reply = raw(ws, text)
    assert len(reply) < SMALL, reply[:300]
    frame = json.loads(reply)
    WSErrorResponse.model_validate(frame)
    assert frame["data"]["code"] == code, frame
    data: dict[str, Any] = frame["data"]
    return data


def assert_session_goes_on(ws: Wire) -> None:
    """The session still answers: a reset, a call and the state document."""
    assert ws.reset(episode_id="after")["type"] == "observation"
    observation = ws.call("add_note", text="still here")["data"]["observation"]
    assert observation["error"] is None
    document = ws.state()
    assert document["episode_id"] == "after" and document["call_count"] == 1


# --- deep JSON -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000,
        "[" * 100_000,
        "[" * 1_000_000,
        '{"a":' * 50_000,
        "[" * 5_000 + "]" * 5_000,
        '{"type": "step", "data": ' + "[" * 20_000 + "]" * 20_000 + "}",
        "[" * 500,
    ],
    ids=["10k", "100k", "1M", "objects", "closed", "in-data", "unclosed"],
)
def test_deep_json_is_invalid_json_and_the_session_goes_on(served, wire, text: str) -> None:
    ws = wire(served)
    ws.reset()
    data = refused(ws, text, "INVALID_JSON")
    assert data["message"].startswith("Invalid JSON")
    assert_session_goes_on(ws)


def test_a_few_hundred_levels_are_read(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    nested: Any = "deep"
    for _ in range(300):
        nested = [nested]
    observation = ws.call("add_note", text=nested)["data"]["observation"]
    # The frame was read: the refusal is the tool's, for an argument of the wrong type.
    assert observation["error"]["error_type"] == "invalid_args"


def test_the_depth_limit_is_the_servers_own_on_every_python() -> None:
    # 3.13's parser reads thousands of levels and 3.11's fewer than a thousand: the server
    # draws the line itself, at the same depth everywhere.
    def nest(depth: int) -> str:
        return "[" * depth + "]" * depth

    assert frames.read_json(nest(frames.MAX_FRAME_DEPTH)) is not None
    with pytest.raises(FrameError) as refused:
        frames.read_json(nest(frames.MAX_FRAME_DEPTH + 1))
    assert refused.value.code == "INVALID_JSON"
    assert str(frames.MAX_FRAME_DEPTH) in refused.value.message


# --- lone surrogates -----------------------------------------------------------------------------

LONE = "\\ud800"


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "step", "data": {"type": "call_tool", "tool_name": "add' + LONE + '"}}',
        '{"type": "reset", "data": {"episode_id": "ep' + LONE + '"}}',
        '{"type": "reset", "data": {"startup": {"k' + LONE + '": 1}}}',
        '{"type": "step", "data": {"type": "call_tool", "tool_name": "add_note", '
        '"arguments": {"text": "a\\udc00b"}}}',
        '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": "' + LONE + '", "method": "ping"}}',
        '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "add' + LONE + '", "arguments": {}}}}',
        '{"type' + LONE + '": "state"}',
    ],
    ids=["tool_name", "episode_id", "startup-key", "argument", "mcp-id", "mcp-tool", "key"],
)
def test_a_lone_surrogate_is_invalid_json_and_the_session_goes_on(served, wire, frame: str) -> None:
    ws = wire(served)
    ws.reset(state_format="seahaven.state+calls/1")
    data = refused(ws, frame, "INVALID_JSON")
    assert "surrogate" in data["message"]
    # Nothing of the frame reached the instance: the next state is sent whole.
    assert ws.state()["state"]["calls"] == []
    assert_session_goes_on(ws)


def test_a_surrogate_pair_is_one_character(served, wire) -> None:
    ws = wire(served)
    raw(ws, '{"type": "reset", "data": {"episode_id": "ep-\\ud83d\\ude00"}}')
    assert ws.state()["episode_id"] == "ep-\N{GRINNING FACE}"


# --- echoes --------------------------------------------------------------------------------------


def test_a_huge_unknown_tool_name_is_refused_naming_the_limit(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    name = "x" * LONG
    reply = raw(ws, json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": name}}))
    assert len(reply) < SMALL
    observation = json.loads(reply)["data"]["observation"]
    assert observation["error"]["error_type"] == "tool_not_found"
    triple = observation["metadata"]["seahaven_error"]
    assert triple["code"] == "unknown_tool"
    assert triple["details"]["length"] == LONG
    longest = max(
        len(tool["name"])
        for tool in ws.ask({"type": "step", "data": {"type": "list_tools"}})["data"]["observation"][
            "tools"
        ]
    )
    assert triple["details"]["max_length"] == longest
    assert f"longer than {longest} characters" in observation["error"]["message"]
    # An unknown name within the limit is the framework's usual answer.
    short = ws.call("y" * longest)["data"]["observation"]
    assert short["error"]["error_type"] == "tool_not_found"
    assert short["tool_name"] == "y" * longest


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "x" * LONG}, "UNKNOWN_TYPE"),
        ({"type": "state", **{f"k{n}" + "x" * 1000: 1 for n in range(1000)}}, "VALIDATION_ERROR"),
        ({"type": "step", "data": {"type": "x" * LONG}}, "VALIDATION_ERROR"),
        (
            {
                "type": "step",
                "data": {"type": "list_tools", **{"x" * LONG + str(n): 1 for n in range(5)}},
            },
            "VALIDATION_ERROR",
        ),
        ({"type": "reset", "data": {"x" * LONG: 1}}, "VALIDATION_ERROR"),
        ({"type": "reset", "data": {"fixture": "x" * LONG}}, "EXECUTION_ERROR"),
        ({"type": "reset", "data": {"seed": "x" * LONG}}, "VALIDATION_ERROR"),
    ],
    ids=["frame-type", "frame-keys", "action-type", "action-keys", "reset-key", "fixture", "seed"],
)
def test_an_error_never_repeats_much_of_a_long_input(
    served, wire, frame: dict[str, Any], code: str
) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    refused(ws, json.dumps(frame), code)
    assert ws.state()["episode_id"] == ("kept" if code != "EXECUTION_ERROR" else None)


def test_mcp_never_echoes_a_long_id_or_method(served, wire) -> None:
    ws = wire(served)
    long_id = json.loads(
        raw(
            ws,
            json.dumps(
                {"type": "mcp", "data": {"jsonrpc": "2.0", "id": "i" * LONG, "method": "ping"}}
            ),
        )
    )["data"]
    assert long_id["id"] is None and long_id["error"]["code"] == -32600
    reply = raw(
        ws, json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 3, "method": "m" * LONG}})
    )
    assert len(reply) < SMALL
    answer = json.loads(reply)["data"]
    assert answer["id"] == 3 and answer["error"]["code"] == -32601
    ok = json.loads(
        raw(
            ws,
            json.dumps(
                {"type": "mcp", "data": {"jsonrpc": "2.0", "id": "i" * 256, "method": "ping"}}
            ),
        )
    )["data"]
    assert ok == {"jsonrpc": "2.0", "id": "i" * 256, "result": {}}


# --- wrong types in a reset ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("state_format", {}, "a string"),
        ("state_format", ["seahaven.state/1"], "a string"),
        ("fixture", 7, "a string"),
        ("seed", "seven", "a whole number"),
        ("seed", True, "a whole number"),
        ("seed", 1.5, "a whole number"),
        ("now", 20300101, "a string"),
        ("clock_mode", ["tick"], "a string"),
        ("startup", "keeper=ada", "an object"),
        ("setup_sql", ["SELECT 1"], "a string"),
        ("episode_id", {"id": 1}, "a non-empty string"),
    ],
)
def test_a_reset_key_of_the_wrong_type_is_a_validation_error_naming_key_and_type(
    served, wire, beacon_world, key: str, value: Any, expected: str
) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    data = refused(ws, json.dumps({"type": "reset", "data": {key: value}}), "VALIDATION_ERROR")
    assert f"{key} must be {expected}" in data["message"]
    [error] = data["errors"]
    assert error["loc"] == [key] and {"type", "msg"} <= set(error)
    # Refused before anything changed.
    assert ws.state()["episode_id"] == "kept"


# --- malformed steps -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "kind", "loc"),
    [
        ({"type": "dance"}, "literal_error", ["type"]),
        ({"tool_name": "add_note"}, "missing", ["type"]),
        ({"type": "call_tool"}, "missing", ["call_tool", "tool_name"]),
        ({"type": "call_tool", "tool_name": 7}, "string_type", ["call_tool", "tool_name"]),
        (
            {"type": "call_tool", "tool_name": "add_note", "arguments": [1]},
            "dict_type",
            ["call_tool", "arguments"],
        ),
        ({"type": "list_tools", "page": 2}, "extra_forbidden", ["list_tools", "page"]),
        ({"type": "list_tools", "metadata": "x"}, "dict_type", ["list_tools", "metadata"]),
    ],
)
def test_a_malformed_step_carries_pydantics_errors(
    served, wire, action: dict[str, Any], kind: str, loc: list[Any]
) -> None:
    ws = wire(served)
    ws.reset()
    data = refused(ws, json.dumps({"type": "step", "data": action}), "VALIDATION_ERROR")
    [error] = data["errors"]
    assert error["type"] == kind and error["loc"] == loc and error["msg"]
    assert ws.state()["step_count"] == 0


def test_an_errors_entry_repeats_only_a_short_scalar_input(served, wire) -> None:
    ws = wire(served)
    data = refused(
        ws,
        json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": ["x" * LONG]}}),
        "VALIDATION_ERROR",
    )
    assert "input" not in data["errors"][0]
    data = refused(
        ws,
        json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": 12}}),
        "VALIDATION_ERROR",
    )
    assert data["errors"][0]["input"] == 12


# --- what a call answers -------------------------------------------------------------------------


def test_a_successful_call_has_an_empty_metadata(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    data = ws.call("add_note", text="hello")["data"]
    assert data["observation"]["metadata"] == {}
    # OpenEnv sends a top-level metadata only when there is some.
    assert "metadata" not in data


def test_an_argument_violation_has_both_spellings(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    observation = ws.call("get_note", note_id=5, extra=1)["data"]["observation"]
    assert observation["error"]["error_type"] == "invalid_args"
    violations = observation["metadata"]["seahaven_error"]["details"]["violations"]
    assert len(violations) == 2
    for violation in violations:
        assert {"loc", "msg", "type", "path", "message"} <= set(violation)
        # The reference's path is one string; pydantic's list of parts stays in loc.
        assert violation["path"] == ".".join(map(str, violation["loc"]))
        assert violation["message"] == violation["msg"]


# --- /mcp over HTTP and its own socket -----------------------------------------------------------


def post_mcp(server: Any, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """POST ``body`` to /mcp with http.client; answer the status and the decoded body."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize("body", [b"[" * 60_000, b'{"a":' * 12_000, b"\xff\xfe", b'"\\ud800"'])
def test_post_mcp_answers_a_body_it_cannot_read_with_a_parse_error(served, body: bytes) -> None:
    status, answer = post_mcp(served, body)
    assert status == 200
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == -32700


def test_post_mcp_refuses_a_large_body_before_reading_it(served) -> None:
    connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
    try:
        # The headers say 64 MiB, and no more than a few bytes ever come.
        connection.putrequest("POST", "/mcp")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(64 << 20))
        connection.endheaders(b'{"jsonrpc": "2.0", "id": "')
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 413
    assert answer["id"] is None and answer["error"]["code"] == -32600


def test_post_mcp_counts_a_chunked_body_as_it_comes(served) -> None:
    # A little more than the route reads, and the body never ends: a server that waited for
    # the end of the body would never answer, so the answer shows the count was made as it came.
    chunk = b"i" * 4096
    with socket.create_connection((served.host, served.port), timeout=30) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(b"%x\r\n%s\r\n" % (26, b'{"jsonrpc": "2.0", "id": "'))
        for _ in range(20):
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        response = http.client.HTTPResponse(sock)
        response.begin()
        answer = json.loads(response.read())
    assert response.status == 413 and answer["id"] is None


def test_post_mcp_never_echoes_a_long_id(served) -> None:
    status, answer = post_mcp(
        served, json.dumps({"jsonrpc": "2.0", "id": "i" * 30_000, "method": "initialize"}).encode()
    )
    assert status == 200 and answer["id"] is None and answer["error"]["code"] == -32601


def test_ws_mcp_answers_deep_json_with_a_parse_error(served, wire) -> None:
    ws = wire(served, "/mcp")
    answer = json.loads(raw(ws, "[" * 100_000))
    assert answer["id"] is None and answer["error"]["code"] == -32700
    again = ws.ask({"jsonrpc": "2.0", "id": "a", "method": "tools/list"})
    assert again["id"] == "a" and again["error"]["code"] == -32601
