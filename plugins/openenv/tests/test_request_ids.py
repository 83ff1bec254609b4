"""Request ids: every ``/ws`` frame may carry an ``id`` its answer echoes.

A client that stops waiting for an answer (its time-out passed) used to read
that late answer as the answer to its next frame, and every answer after it
shifted by one. With ids, ``SeahavenClient`` takes only the answer carrying the
id it waits for and drops the late ones, so the episode survives a time-out.
"""

from __future__ import annotations

import random

import pytest
from openenv import GenericEnvClient

from seahaven.openenv import SeahavenClient


def test_every_kind_of_answer_echoes_the_frames_id(served, wire) -> None:
    ws = wire(served)
    reset = ws.ask({"type": "reset", "data": {}, "id": "r-1"})
    assert reset["type"] == "observation" and reset["id"] == "r-1"
    step = ws.ask(
        {
            "type": "step",
            "id": 7,
            "data": {"type": "call_tool", "tool_name": "add_note", "arguments": {"text": "x"}},
        }
    )
    assert step["type"] == "observation" and step["id"] == 7
    state = ws.ask({"type": "state", "id": "s"})
    assert state["type"] == "state" and state["id"] == "s" and state["data"]["step_count"] == 1
    # Refusals echo it too: an unknown type, a stray key, a refused step.
    unknown = ws.ask({"type": "dance", "id": 8})
    assert unknown["type"] == "error" and unknown["id"] == 8
    stray = ws.ask({"type": "state", "id": 9, "extra": 1})
    assert stray["data"]["code"] == "VALIDATION_ERROR" and stray["id"] == 9
    refused = ws.ask({"type": "step", "id": 10, "data": {"type": "nonsense"}})
    assert refused["type"] == "error" and refused["id"] == 10
    mcp = ws.ask(
        {"type": "mcp", "id": 11, "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    )
    assert mcp["type"] == "mcp" and mcp["id"] == 11 and mcp["data"]["id"] == 1
    # A frame without an id is answered without one, as OpenEnv's clients expect.
    assert "id" not in ws.ask({"type": "state"})


@pytest.mark.parametrize("bad", [True, 1.5, {"a": 1}, [1], "x" * 129, 2**70])
def test_an_id_that_is_not_a_short_string_or_whole_number_is_refused(served, wire, bad) -> None:
    ws = wire(served)
    reply = ws.ask({"type": "state", "id": bad})
    assert reply["type"] == "error" and "id" not in reply
    assert (
        reply["data"]["code"] == "VALIDATION_ERROR"
        and "id is a whole number" in (reply["data"]["message"])
    )
    # The session goes on.
    assert ws.ask({"type": "state", "id": 1})["id"] == 1


def test_timed_out_calls_never_hand_their_answer_to_the_next_call(served) -> None:
    """1,000 calls, one in five timed out by the client: no answer goes to the wrong call."""
    rng = random.Random(24)
    timeout = 0.05
    timed_out = answered = wrong = 0
    with SeahavenClient(base_url=served.base_url, message_timeout_s=timeout) as env:
        env.reset()
        for number in range(1000):
            if rng.random() < 0.2:
                # Slower than the client waits about half the time.
                seconds = rng.uniform(0.02, 0.09)
                try:
                    observation = env.call("wait", seconds=seconds)
                except TimeoutError:
                    timed_out += 1
                    continue
                answered += 1
                wrong += observation.tool_name != "wait" or observation.result != "waited"
            else:
                text = f"note {number}"
                try:
                    observation = env.call("add_note", text=text)
                except TimeoutError:
                    timed_out += 1
                    continue
                answered += 1
                result = observation.result
                wrong += not (isinstance(result, dict) and result.get("text") == text)
        # The episode lived through every time-out: the same instance counted every call.
        state = env.state()
        discarded = env.discarded_answers
    assert wrong == 0
    assert timed_out >= 30, timed_out
    assert answered + timed_out == 1000
    assert state.step_count == 1000
    # Every timed-out call's late answer was read and dropped (the last may still be due).
    assert timed_out - 1 <= discarded <= timed_out


def test_openenv_clients_sending_no_ids_are_answered_as_before(served) -> None:
    with GenericEnvClient(base_url=served.base_url) as env:
        env.reset()
        result = env.step(
            {"type": "call_tool", "tool_name": "add_note", "arguments": {"text": "hi"}}
        )
        assert result.observation["result"]["text"] == "hi"
        assert env.state()["step_count"] == 1
