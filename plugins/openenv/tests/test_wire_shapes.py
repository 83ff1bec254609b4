"""Keys the reference's server sends, in the reference's shapes (issue 38).

A client written against the reference's documentation must keep working here:
an argument violation's ``path`` is one string, an unknown tool's name comes
back whole, an unknown action type is described by pydantic's own entries, and
``POST /mcp`` naming no session answers an error carrying ``data``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import projecttracker
import pytest
from conftest import Wire, post_mcp
from openenv.core.env_server.types import WSErrorResponse
from pydantic import BaseModel, ValidationError

import seahaven

# An answer that repeats none of a long input fits in this, whatever the input.
SMALL = 8_000


def make_ledger() -> seahaven.World:
    """A world whose one tool takes nested arguments, and no error handler restating them."""
    world = seahaven.World(
        name="ledger", version="1.0.0", schema="", state_format="seahaven.state/1"
    )

    @world.tool
    def book(ctx: seahaven.Ctx, lines: list[dict[str, int]], memo: str) -> int:
        """Book some lines.

        Args:
            lines: The lines, each of named amounts.
            memo: What the booking is for.
        """
        return len(lines)

    return world


BAD_LINES = {"lines": [{"usd": 1}, {"eur": "three"}], "memo": 5}


def assert_string_paths(triple: dict[str, Any]) -> None:
    assert triple["code"] == "invalid_arguments"
    violations = triple["details"]["violations"]
    assert {violation["path"] for violation in violations} == {"lines.1.eur", "memo"}
    for violation in violations:
        # The reference's string, and pydantic's parts beside it under loc.
        assert isinstance(violation["path"], str)
        assert violation["path"] == ".".join(str(part) for part in violation["loc"])
        assert violation["message"] == violation["msg"]
    assert next(v["loc"][1:] for v in violations if v["path"] == "lines.1.eur") == [1, "eur"]


# --- a violation's path ------------------------------------------------------------------------


def test_a_violation_path_is_a_dotted_string_on_a_step(serving, wire) -> None:
    ws = wire(serving(make_ledger()))
    ws.reset()
    observation = ws.call("book", **BAD_LINES)["data"]["observation"]
    assert observation["error"]["error_type"] == "invalid_args"
    assert_string_paths(observation["metadata"]["seahaven_error"])


def test_a_violation_path_is_a_dotted_string_in_an_mcp_frame(serving, wire) -> None:
    ws = wire(serving(make_ledger()))
    ws.reset()
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "book", "arguments": BAD_LINES},
    }
    result = ws.ask({"type": "mcp", "data": request})["data"]["result"]
    assert result["isError"] is True
    assert_string_paths(json.loads(result["content"][0]["text"]))


def test_a_violation_path_is_a_dotted_string_over_post_mcp(serving) -> None:
    server = serving(make_ledger())
    created = post_mcp(
        server.host,
        server.port,
        {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}},
    )
    session_id = created["result"]["session_id"]
    answer = post_mcp(
        server.host,
        server.port,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"session_id": session_id, "name": "book", "arguments": BAD_LINES},
        },
    )
    result = answer["result"]
    assert result["isError"] is True
    assert_string_paths(json.loads(result["content"][0]["text"]))


# --- an unknown tool's name --------------------------------------------------------------------


def test_an_unknown_tools_name_comes_back_whole(serving, wire) -> None:
    # The tracker's longest tool name has 17 characters; the control tool's has 18 and is not
    # served, so it is an unknown name longer than any tool's, and an ordinary one.
    ws = wire(serving(projecttracker.world))
    ws.reset()
    observation = ws.call("controller_run_sql", query="SELECT 1")["data"]["observation"]
    assert observation["error"]["error_type"] == "tool_not_found"
    assert observation["tool_name"] == "controller_run_sql"
    details = observation["metadata"]["seahaven_error"]["details"]
    assert details["name"] == "controller_run_sql"


def test_only_a_name_over_256_characters_is_cut(serving, wire) -> None:
    ws = wire(serving(projecttracker.world))
    ws.reset()
    kept = ws.call("n" * 256)["data"]["observation"]
    assert kept["tool_name"] == "n" * 256
    assert kept["metadata"]["seahaven_error"]["details"]["name"] == "n" * 256
    cut = ws.call("n" * 257)["data"]["observation"]
    assert cut["tool_name"] == "n" * 256 + "... (257 characters)"


# --- an unknown action type --------------------------------------------------------------------


class _Reference(BaseModel):
    """How OpenEnv's server validates an action's type: a Literal field of the known types."""

    type: Any


def refused(ws: Wire, action: Any) -> dict[str, Any]:
    """Send a step with ``action``; its error frame's data, checked to be small and OpenEnv's."""
    ws.connection.send(json.dumps({"type": "step", "data": action}))
    reply = ws.connection.recv(timeout=60)
    assert isinstance(reply, str) and len(reply) < SMALL, reply[:300]
    frame = json.loads(reply)
    WSErrorResponse.model_validate(frame)
    assert frame["data"]["code"] == "VALIDATION_ERROR"
    data: dict[str, Any] = frame["data"]
    return data


def test_an_unknown_action_type_is_described_by_pydantics_own_entry(served, wire) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    [entry] = refused(ws, {"type": "dance", "tool_name": "add_note"})["errors"]
    assert set(entry) == {"ctx", "input", "loc", "msg", "type"}
    assert entry["type"] == "literal_error" and entry["loc"] == ["type"]
    assert entry["input"] == "dance"
    assert entry["ctx"] == {"expected": "'call_tool', 'list_tools' or 'finish'"}
    # Entry for entry what pydantic says of a Literal of the three types.
    try:
        from typing import Literal

        class Known(BaseModel):
            type: Literal["call_tool", "list_tools", "finish"]

        Known.model_validate({"type": "dance"})
    except ValidationError as error:
        [expected] = error.errors(include_url=False)
    assert entry == {**expected, "loc": list(expected["loc"])}
    [missing] = refused(ws, {"tool_name": "add_note"})["errors"]
    assert missing["type"] == "missing" and missing["loc"] == ["type"]
    assert set(missing) == {"input", "loc", "msg", "type"}
    assert ws.state()["episode_id"] == "kept" and ws.state()["step_count"] == 0


@pytest.mark.parametrize(
    "kind",
    [
        "x" * 1_000_000,
        7,
        10**4000,
        None,
        ["a" * 100_000] * 50,
        {f"k{n}" * 1000: "v" * 100_000 for n in range(30)},
        json.loads("[" * 400 + "]" * 400),
    ],
    ids=["long-string", "number", "huge-int", "null", "array", "object", "deep"],
)
def test_an_unknown_action_types_echo_is_bounded(served, wire, kind: Any) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    [entry] = refused(ws, {"type": kind})["errors"]
    assert entry["type"] == "literal_error" and entry["loc"] == ["type"]
    assert {"ctx", "input", "msg"} <= set(entry)
    if isinstance(kind, str):
        assert entry["input"].startswith("xxx") and entry["input"].endswith("(1000000 characters)")
    if kind == 7 or kind is None:
        assert entry["input"] == kind
    assert ws.state()["episode_id"] == "kept"
    assert ws.call("add_note", text="still here")["data"]["observation"]["error"] is None


def test_an_unknown_type_among_many_keys_is_still_the_one_judged(served, wire) -> None:
    ws = wire(served)
    action: dict[str, Any] = {f"k{n}": n for n in range(40)}
    action["type"] = "dance"
    [entry] = refused(ws, action)["errors"]
    assert entry["type"] == "literal_error" and entry["input"] == "dance"


# --- POST /mcp naming no session ---------------------------------------------------------------


@pytest.mark.parametrize(
    "request_",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_note"}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
    ],
    ids=["tools-list", "tools-call", "initialize"],
)
def test_post_mcp_naming_no_session_answers_an_error_with_data(served, request_) -> None:
    answer = post_mcp(served.host, served.port, request_)
    assert answer["id"] == 1
    error = answer["error"]
    assert error["code"] == -32601
    data = error["data"]
    assert data["code"] == "mcp_session_required" and data["route"] == "POST /mcp"
    assert data["method"] == request_["method"]
    assert "openenv/session/create" in data["session_methods"]
    assert "seahaven mcp" in data["use_instead"]


def test_post_mcp_naming_a_session_it_does_not_hold_answers_data(served) -> None:
    for params in ({"session_id": "nope"}, {"session_id": ""}):
        answer = post_mcp(
            served.host,
            served.port,
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": params},
        )
        error = answer["error"]
        assert error["code"] == -32602
        assert error["data"]["code"] == "SESSION_ERROR"
        assert error["data"]["session_id"] == params["session_id"]
        assert error["data"]["create_with"] == "openenv/session/create"
    closed = post_mcp(
        served.host,
        served.port,
        {"jsonrpc": "2.0", "id": 5, "method": "openenv/session/close", "params": {}},
    )
    assert closed["error"]["code"] == -32602 and closed["error"]["data"]["session_id"] is None


# --- the deliberate difference: state before any reset -----------------------------------------


def test_state_before_any_reset_is_refused_as_the_docs_difference_says(served, wire) -> None:
    docs = Path(__file__).resolve().parents[3] / "docs" / "serving.md"
    text = docs.read_text(encoding="utf-8")
    section = text.split("### Where the wire differs from the reference", 1)[1].split("\n## ", 1)[0]
    [row] = [line for line in section.splitlines() if line.startswith("| `state` before any")]
    for words in (
        "SESSION_ERROR",
        "no_episode",
        "send a `reset` first",
        '"allow_no_episode": true',
    ):
        assert words in row
    ws = wire(served)
    refusal = ws.ask({"type": "state"})
    assert refusal["type"] == "error"
    assert refusal["data"]["code"] == "SESSION_ERROR" and refusal["data"]["no_episode"] is True
    # What the row tells a client to do works: the empty document on purpose, or a reset first.
    assert ws.state()["episode_id"] is None
    ws.reset(episode_id="first")
    assert ws.ask({"type": "state"})["data"]["episode_id"] == "first"
