"""The /ws protocol frame by frame, over raw WebSockets, checked against OpenEnv's own models."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import payments_world
import pytest
from conftest import Records, instance_dirs, wait_until
from openenv.core.env_server.mcp_types import CallToolObservation, ListToolsObservation
from openenv.core.env_server.types import (
    Observation,
    State,
    WSErrorResponse,
    WSObservationResponse,
    WSStateResponse,
)
from websockets.exceptions import ConnectionClosed

import seahaven

RESET_KEYS = "fixture, seed, now, clock_mode, episode_id, state_format, startup, setup_sql"


def observation_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The observation of an observation frame, after checking the frame with OpenEnv's model."""
    WSObservationResponse.model_validate(reply)
    assert reply["data"]["done"] is False and reply["data"]["reward"] is None
    observation: dict[str, Any] = reply["data"]["observation"]
    return observation


def call_observation(reply: dict[str, Any]) -> dict[str, Any]:
    """A tool call's observation, validated as OpenEnv's CallToolObservation."""
    observation = observation_of(reply)
    CallToolObservation.model_validate(
        {**observation, "done": reply["data"]["done"], "reward": reply["data"]["reward"]}
    )
    # Exactly one of result and error.
    assert (observation["result"] is None) != (observation["error"] is None) or (
        observation["error"] is None
    )
    return observation


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    """An error frame's data, after checking the frame with OpenEnv's model."""
    WSErrorResponse.model_validate(reply)
    data: dict[str, Any] = reply["data"]
    return data


# --- reset ---------------------------------------------------------------------------------------


def test_reset_answers_a_plain_observation_with_its_metadata_twice(served, wire) -> None:
    ws = wire(served)
    reply = ws.reset(seed=3, now="2030-01-02T03:04:05.000Z", episode_id="ep-1")
    observation = observation_of(reply)
    Observation.model_validate({**observation, "done": False, "reward": None})
    assert set(observation) == {"metadata"}
    metadata = observation["metadata"]
    assert metadata == reply["data"]["metadata"]
    assert metadata == {
        "fixture": None,
        "now": "2030-01-02T03:04:05.000Z",
        "clock_mode": "tick",
        "tools": 6,
        "episode_id": "ep-1",
    }


def test_reset_takes_every_key_of_world_instance(serving, wire) -> None:
    server = serving(payments_world.world)
    ws = wire(server)
    reply = ws.reset(
        fixture="small_shop",
        seed=11,
        now="2026-07-01T00:00:00.000Z",
        clock_mode="fixed",
        episode_id="every-key",
        state_format="seahaven.state+calls/1",
        startup={},
        setup_sql="UPDATE customers SET name = 'Renamed' WHERE rowid = 1",
    )
    assert observation_of(reply)["metadata"]["fixture"] == "small_shop"
    document = ws.state()
    assert document["fixture"]["id"] == "small_shop"
    assert document["seed"] == 11
    assert document["now"] == "2026-07-01T00:00:00.000Z"
    assert document["clock_mode"] == "fixed"
    assert document["episode_id"] == "every-key"
    assert document["format"] == "seahaven.state+calls/1"
    assert document["setup_sql"].startswith("UPDATE customers")
    assert document["state"]["calls"] == []


def test_reset_takes_the_storage_and_the_episode_reads_the_same(served, wire, beacon_world) -> None:
    ws = wire(served)
    documents = {}
    for storage in ("memory", "disk"):
        ws.reset(episode_id="where", seed=3, storage=storage)
        # Only the instance on disk has a directory; the one in memory writes nothing.
        assert len(instance_dirs(beacon_world)) == (1 if storage == "disk" else 0)
        call_observation(ws.call("add_note", text="kept"))
        document = ws.state()
        document.pop("now")
        documents[storage] = document
    assert documents["memory"] == documents["disk"]
    error = error_of(ws.reset(storage="tape"))
    assert "'memory' or 'disk'" in error["message"]
    error = error_of(ws.reset(storage=3))
    assert error["code"] == "VALIDATION_ERROR" and "storage" in error["message"]


def test_a_reset_naming_no_storage_is_in_memory_unless_the_process_says_otherwise(
    served, wire, beacon_world, monkeypatch
) -> None:
    ws = wire(served)
    # The session's instance is the server's own: memory, unless SEAHAVEN_STORAGE (or the
    # server's --storage, which sets it) names another.
    monkeypatch.delenv("SEAHAVEN_STORAGE", raising=False)
    ws.reset(seed=3)
    call_observation(ws.call("add_note", text="kept"))
    assert instance_dirs(beacon_world) == []
    monkeypatch.setenv("SEAHAVEN_STORAGE", "disk")
    ws.reset(seed=3)
    call_observation(ws.call("add_note", text="kept"))
    assert len(instance_dirs(beacon_world)) == 1


def test_a_second_reset_destroys_the_first_instance(served, wire, beacon_world) -> None:
    ws = wire(served)
    ws.reset(episode_id="first")
    [first] = instance_dirs(beacon_world)
    ws.call("add_note", text="one")
    ws.reset(episode_id="second")
    [second] = instance_dirs(beacon_world)
    assert first != second and not first.exists()
    document = ws.state()
    assert document["episode_id"] == "second"
    assert document["call_count"] == 0 and document["step_count"] == 0


def test_a_stray_key_is_refused_naming_the_keys_reset_takes_and_the_session_keeps_its_instance(
    served, wire, beacon_world
) -> None:
    ws = wire(served)
    ws.reset(episode_id="kept")
    note = call_observation(ws.call("add_note", text="before"))["result"]
    error = error_of(ws.reset(fixtrue="typo", seeds=4))
    assert error["code"] == "VALIDATION_ERROR"
    assert "'fixtrue', 'seeds'" in error["message"]
    assert RESET_KEYS in error["message"]
    # Untouched: the same instance, its note, its episode.
    assert len(instance_dirs(beacon_world)) == 1
    assert call_observation(ws.call("get_note", note_id=note["id"]))["result"]["text"] == "before"
    assert ws.state()["episode_id"] == "kept"


def test_a_startup_keyword_at_the_top_level_is_refused(served, wire) -> None:
    ws = wire(served)
    error = error_of(ws.reset(keeper="ada"))
    assert error["code"] == "VALIDATION_ERROR"
    assert "'keeper'" in error["message"] and "inside startup" in error["message"]
    # Inside startup it is delivered.
    ws.reset(startup={"keeper": "ada"})
    assert call_observation(ws.call("get_note", note_id="keeper"))["result"]["keeper"] == "ada"
    assert ws.state()["startup"] == {"keeper": "ada"}


def test_control_tools_is_accepted_and_ignored(served, wire) -> None:
    ws = wire(served)
    observation_of(ws.reset(control_tools=True))
    observation = call_observation(ws.call("controller_run_sql", query="SELECT 1"))
    assert observation["error"]["error_type"] == "tool_not_found"


def test_the_operator_enables_the_control_tool(serving, wire, beacon_world) -> None:
    server = serving(beacon_world, include_control_tools=True)
    ws = wire(server)
    ws.reset()
    with pytest.warns(DeprecationWarning):
        observation = call_observation(
            ws.call("controller_run_sql", query="SELECT count(*) FROM notes")
        )
    assert observation["result"]["rows"] == [[1]]
    listed = observation_of(ws.ask({"type": "step", "data": {"type": "list_tools"}}))["tools"]
    assert "controller_run_sql" not in [tool["name"] for tool in listed]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"fixture": "no_such_fixture"}, "no_such_fixture"),
        ({"seed": -7}, "seed"),
        ({"clock_mode": "sideways"}, "sideways"),
        ({"state_format": "seahaven.nothing/9"}, "seahaven.nothing/9"),
        ({"startup": {"lamp": "on"}}, "lamp"),
        ({"setup_sql": "DROP TABLE notes"}, "setup_sql"),
        ({"now": "yesterday"}, "yesterday"),
    ],
)
def test_a_reset_that_fails_leaves_the_session_fresh(
    served, wire, beacon_world, data: dict[str, Any], fragment: str
) -> None:
    ws = wire(served)
    ws.reset(episode_id="before")
    ws.call("add_note", text="lost with the instance")
    error = error_of(ws.reset(**data))
    assert error["code"] == "EXECUTION_ERROR"
    assert error["message"].startswith("reset failed: ") and fragment in error["message"]
    assert instance_dirs(beacon_world) == []
    # No episode: a state is refused unless it asks for the document of none.
    assert error_of(ws.ask({"type": "state"}))["code"] == "SESSION_ERROR"
    document = ws.ask({"type": "state", "data": {"allow_no_episode": True}})["data"]
    assert document["composition"] is None and document["episode_id"] is None
    assert document["step_count"] == 0 and document["call_count"] == 0
    refused = error_of(ws.call("add_note", text="no instance"))
    assert "send a reset" in refused["message"]
    # And it can reset again.
    observation_of(ws.reset())


@pytest.mark.parametrize("episode_id", [17, "", "x" * 256])
def test_a_bad_episode_id_is_refused(served, wire, episode_id: Any) -> None:
    error = error_of(wire(served).reset(episode_id=episode_id))
    assert error["code"] == "VALIDATION_ERROR" and "episode_id" in error["message"]


def test_reset_data_must_be_an_object(served, wire) -> None:
    error = error_of(wire(served).ask({"type": "reset", "data": [1, 2]}))
    assert error["code"] == "VALIDATION_ERROR"


# --- steps ---------------------------------------------------------------------------------------


def test_list_tools_needs_no_reset_and_is_the_instance_tool_list(
    served, wire, beacon_world
) -> None:
    reply = wire(served).ask({"type": "step", "data": {"type": "list_tools"}})
    observation = observation_of(reply)
    ListToolsObservation.model_validate({**observation, "done": False, "reward": None})
    with beacon_world.instance() as inst:
        assert observation["tools"] == inst.tools()


def test_a_composite_world_lists_its_flat_surface(serving, wire) -> None:
    import company_world

    server = serving(company_world.world)
    reply = wire(server).ask({"type": "step", "data": {"type": "list_tools"}})
    with company_world.world.instance() as inst:
        assert observation_of(reply)["tools"] == inst.tools()


def test_a_successful_call(served, wire) -> None:
    ws = wire(served)
    ws.reset(seed=1)
    observation = call_observation(ws.call("add_note", text="lamp lit"))
    assert observation["tool_name"] == "add_note"
    assert observation["result"]["text"] == "lamp lit" and observation["error"] is None
    assert "metadata" not in observation or observation["metadata"] == {}


def test_a_world_error_is_data_with_the_triple_twice(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    reply = ws.call("get_note", note_id="n-404")
    observation = call_observation(reply)
    assert observation["result"] is None
    assert observation["error"] == {"error_type": "execution_error", "message": "no note n-404"}
    triple = {
        "code": "NOT_FOUND",
        "message": "no note n-404",
        "details": {"kind": "note", "id": "n-404"},
    }
    assert observation["metadata"] == {"seahaven_error": triple}
    assert reply["data"]["metadata"] == {"seahaven_error": triple}
    # The session goes on.
    assert call_observation(ws.call("add_note", text="after"))["error"] is None


def test_an_unknown_tool_is_tool_not_found(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    observation = call_observation(ws.call("polish_lens"))
    assert observation["error"]["error_type"] == "tool_not_found"
    assert observation["metadata"]["seahaven_error"]["code"] == "unknown_tool"


def test_bad_arguments_are_invalid_args(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    observation = call_observation(ws.call("add_note", text=5, colour="red"))
    assert observation["error"]["error_type"] == "invalid_args"
    triple = observation["metadata"]["seahaven_error"]
    assert triple["code"] == "invalid_arguments" and len(triple["details"]["violations"]) == 2


def test_an_argument_may_be_called_tool_name_or_target(serving, wire, tmp_path) -> None:
    world = seahaven.World(
        name="echoes",
        version="1.0.0",
        schema="",
        state_format="seahaven.state/1",
        work_dir=tmp_path,
    )

    @world.tool
    def echo(ctx: seahaven.Ctx, target: str, tool: str) -> str:
        """Say both back."""
        return f"{target}/{tool}"

    ws = wire(serving(world))
    ws.reset()
    assert call_observation(ws.call("echo", target="a", tool="b"))["result"] == "a/b"


def test_a_world_bug_fails_the_frame_and_the_wording_stays_in_the_log(
    served, wire, server_log: Records
) -> None:
    ws = wire(served)
    ws.reset()
    error = error_of(ws.call("broken"))
    assert error["code"] == "EXECUTION_ERROR"
    found = re.fullmatch(r"internal error \((err-[0-9a-f]{12})\)", error["message"])
    assert found, error
    assert "secret wording" not in json.dumps(error)
    logged = server_log.text()
    assert found.group(1) in logged and "secret wording" in logged and "Traceback" in logged


def test_an_unexpected_exception_answers_the_fixed_internal_triple(
    served, wire, server_log: Records
) -> None:
    ws = wire(served)
    ws.reset()
    observation = call_observation(ws.call("crash"))
    assert observation["error"] == {"error_type": "execution_error", "message": "internal error"}
    triple = observation["metadata"]["seahaven_error"]
    assert triple["code"] == "internal" and triple["message"] == "internal error"
    assert "division" not in json.dumps(observation)
    assert triple["details"]["id"] in server_log.text()
    assert "ZeroDivisionError" in server_log.text()


def test_a_result_json_cannot_carry_fails_the_frame(served, wire, server_log: Records) -> None:
    ws = wire(served)
    ws.reset()
    error = error_of(ws.call("not_a_number"))
    assert error["code"] == "EXECUTION_ERROR" and error["message"].startswith("internal error (")
    assert "not JSON" in server_log.text()


def test_calling_before_a_reset_is_refused(served, wire) -> None:
    error = error_of(wire(served).call("add_note", text="early"))
    assert error["code"] == "EXECUTION_ERROR" and "send a reset" in error["message"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"type": "call_tool"}, "tool_name"),
        ({"type": "call_tool", "tool_name": 3}, "tool_name"),
        ({"type": "call_tool", "tool_name": "add_note", "arguments": [1]}, "arguments"),
        ({"type": "call_tool", "tool_name": "add_note", "extra": 1}, "'extra'"),
        ({"type": "list_tools", "page": 2}, "'page'"),
        ({"type": "dance"}, "'dance'"),
        ({"tool_name": "add_note"}, "None"),
        ("call_tool", "action object"),
    ],
)
def test_a_malformed_action_is_a_validation_error(served, wire, data: Any, fragment: str) -> None:
    ws = wire(served)
    ws.reset()
    error = error_of(ws.ask({"type": "step", "data": data}))
    assert error["code"] == "VALIDATION_ERROR" and fragment in error["message"]


# --- malformed frames ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "INVALID_JSON"),
        ("", "INVALID_JSON"),
        ("[1, 2]", "VALIDATION_ERROR"),
        ('"reset"', "VALIDATION_ERROR"),
        ('{"data": {}}', "UNKNOWN_TYPE"),
        ('{"type": "teleport"}', "UNKNOWN_TYPE"),
        ('{"type": 7}', "UNKNOWN_TYPE"),
        ('{"type": "step"}', "VALIDATION_ERROR"),
        ('{"type": "state", "data": {"format": "x"}}', "VALIDATION_ERROR"),
        ('{"type": "reset", "data": {}, "extra": 1}', "VALIDATION_ERROR"),
    ],
)
def test_a_malformed_frame_is_an_error_frame_and_the_session_goes_on(
    served, wire, frame: str, code: str
) -> None:
    ws = wire(served)
    ws.reset(episode_id="survives")
    error = error_of(ws.ask(frame))
    assert error["code"] == code
    assert ws.state()["episode_id"] == "survives"


def test_a_binary_frame_is_read_as_utf8_json(served, wire) -> None:
    ws = wire(served)
    reply = ws.ask(json.dumps({"type": "reset", "data": {"episode_id": "bytes"}}).encode())
    assert observation_of(reply)["metadata"]["episode_id"] == "bytes"
    assert error_of(ws.ask(b"\xff\xfe"))["code"] == "INVALID_JSON"


# --- state ---------------------------------------------------------------------------------------


def test_state_before_a_reset_has_the_null_fields(served, wire) -> None:
    ws = wire(served)
    # Asked plainly, it is refused (a lost episode's client would read it as its own)...
    refused = ws.ask({"type": "state"})
    WSErrorResponse.model_validate(refused)
    assert refused["data"]["code"] == "SESSION_ERROR" and refused["data"]["no_episode"] is True
    # ...and asked for, it is OpenEnv's state frame.
    reply = ws.ask({"type": "state", "data": {"allow_no_episode": True}})
    WSStateResponse.model_validate(reply)
    document = reply["data"]
    State.model_validate(document)
    for key in ("composition", "fixture", "episode_id", "seed", "now", "clock_mode", "startup"):
        assert document[key] is None, key
    assert document["setup_sql"] is None
    assert document["call_count"] == 0 and document["step_count"] == 0
    assert document["world"] == {"name": "beacon", "version": "2.1.0"}
    assert document["state"] == {"db": {"log": []}}
    assert document["format"] == "seahaven.state/1"


def test_state_is_the_in_process_document_plus_step_count(serving, wire) -> None:
    server = serving(payments_world.world)
    ws = wire(server)
    ws.reset(fixture="small_shop", seed=5, clock_mode="tick", episode_id="twin")
    created = call_observation(ws.call("create_customer", email="ada@example.com", name="Ada"))
    ws.call("update_customer", customer_id=created["result"]["id"], name="Ada L.")
    ws.call("get_customer", customer_id="cus_missing")
    remote = ws.state()
    with payments_world.world.instance("small_shop", seed=5, clock_mode="tick") as inst:
        customer = inst.call("create_customer", email="ada@example.com", name="Ada")
        inst.call("update_customer", customer_id=customer.id, name="Ada L.")
        with pytest.raises(seahaven.ToolError):
            inst.call("get_customer", customer_id="cus_missing")
        local = json.loads(json.dumps(inst.state()))
    assert remote.pop("step_count") == 3
    local["episode_id"] = "twin"
    assert remote == local


def test_step_count_counts_every_accepted_step_refused_calls_and_listings_too(served, wire) -> None:
    ws = wire(served)
    ws.ask({"type": "step", "data": {"type": "list_tools"}})
    assert ws.state()["step_count"] == 1
    ws.reset()
    ws.ask({"type": "step", "data": {"type": "list_tools"}})
    ws.call("add_note", text="a")
    ws.call("no_such_tool")
    ws.call("add_note")  # invalid arguments
    # Steps the protocol refused are not steps: an unknown action, a malformed call.
    assert error_of(ws.ask({"type": "step", "data": {"type": "dance"}}))["code"] == (
        "VALIDATION_ERROR"
    )
    ws.ask({"type": "step", "data": {"type": "call_tool", "tool_name": 7}})
    ws.ask({"type": "step", "data": {"type": "call_tool", "tool_name": "add_note", "x": 1}})
    ws.ask("{broken")  # not a frame
    document = ws.state()
    assert document["step_count"] == 4
    assert document["call_count"] == 2  # the unknown tool was never dispatched


def test_state_format_is_chosen_per_episode(served, wire) -> None:
    ws = wire(served)
    ws.reset(state_format="seahaven.state+last_step/1")
    ws.call("add_note", text="one")
    ws.call("add_note", text="two")
    log = ws.state()["state"]["db"]["log"]
    assert [record["after"]["text"] for record in log] == ["two"]
    ws.reset()
    ws.call("add_note", text="three")
    ws.call("add_note", text="four")
    assert len(ws.state()["state"]["db"]["log"]) == 2


# --- the end of a session ------------------------------------------------------------------------


def test_close_ends_the_session_and_destroys_the_instance(served, wire, beacon_world) -> None:
    ws = wire(served)
    ws.reset()
    assert len(instance_dirs(beacon_world)) == 1
    ws.send({"type": "close"})
    with pytest.raises(ConnectionClosed):
        ws.receive(timeout=10)
    wait_until(lambda: served.hub.active_sessions == 0)
    assert instance_dirs(beacon_world) == []


@pytest.mark.parametrize("grace", [0, 0.5])
def test_an_abrupt_disconnect_destroys_the_instance_and_logs_no_error(
    serving, wire, beacon_world, server_log: Records, grace: float
) -> None:
    # Without resume at once; with it, once the resume grace has passed.
    served = serving(beacon_world, resume_grace=grace)
    for _ in range(3):
        ws = wire(served)
        ws.reset()
        ws.call("add_note", text="then the line went dead")
        # Drop the TCP connection with no close frame, as a crashed harness does.
        ws.connection.socket.close()
    # And one that vanishes while its frame is being answered.
    ws = wire(served)
    ws.reset()
    ws.send(
        {
            "type": "step",
            "data": {"type": "call_tool", "tool_name": "wait", "arguments": {"seconds": 0.3}},
        }
    )
    ws.connection.socket.close()
    wait_until(lambda: served.hub.active_sessions == 0 and not instance_dirs(beacon_world))
    assert server_log.records == [], server_log.text()


def test_a_lost_connection_with_a_stock_client_logs_no_error(served, server_log: Records) -> None:
    from openenv import GenericEnvClient

    with GenericEnvClient(base_url=served.base_url) as env:
        env.reset()
        env.step({"type": "call_tool", "tool_name": "add_note", "arguments": {"text": "x"}})
    wait_until(lambda: served.hub.active_sessions == 0)
    assert server_log.records == [], server_log.text()


# --- capacity and the reaper ---------------------------------------------------------------------


def test_over_capacity_a_connection_gets_capacity_reached_and_is_closed(
    serving, wire, beacon_world
) -> None:
    # With no admission queue (test_admission.py has the queue), refused at once.
    server = serving(beacon_world, max_concurrent_envs=2, admission_queue=0)
    first, second = wire(server), wire(server)
    first.reset()
    second.reset()
    third = wire(server)
    reply = third.receive(timeout=10)
    error = error_of(reply)
    assert error["code"] == "CAPACITY_REACHED"
    assert error["active_sessions"] == 2 and error["max_sessions"] == 2
    assert error["retry_after"] == 5
    with pytest.raises(ConnectionClosed):
        third.receive(timeout=10)
    # The two sessions are unharmed, and a slot freed is a slot to take.
    assert call_observation(first.call("add_note", text="still here"))["error"] is None
    second.send({"type": "close"})
    wait_until(lambda: server.hub.active_sessions == 1)
    observation_of(wire(server).reset())


def test_the_reaper_destroys_idle_sessions_and_spares_busy_ones(
    serving, wire, beacon_world
) -> None:
    server = serving(beacon_world, session_timeout=0.5)
    idle, busy = wire(server), wire(server)
    idle.reset(episode_id="idle")
    busy.reset(episode_id="busy")
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        # Steps are activity; reading state alone is not.
        assert call_observation(busy.call("add_note", text="tick"))["error"] is None
        time.sleep(0.1)
    with pytest.raises(ConnectionClosed) as closed:
        idle.state()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
    assert busy.state()["episode_id"] == "busy"
    assert len(instance_dirs(beacon_world)) == 1


def test_the_reaper_never_reaps_a_session_in_the_middle_of_a_long_call(
    serving, wire, beacon_world
) -> None:
    server = serving(beacon_world, session_timeout=0.3)
    ws = wire(server)
    ws.reset()
    observation = call_observation(ws.call("wait", seconds=1.2))
    assert observation["result"] == "waited"
    assert ws.state()["call_count"] == 1
