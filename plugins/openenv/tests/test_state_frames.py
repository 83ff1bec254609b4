"""A state frame's text: joined from the change log's record texts, the bytes encoding gives."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import payments_world
import pytest
from beacon import make_beacon
from conftest import Records
from seahaven_openenv.sessions.session import FrameError, WorldService
from seahaven_openenv.wire import frames

import seahaven


def encoded(session: Any) -> str:
    return frames.encode(frames.state_frame(session.state()))


def test_the_state_frame_is_the_encoding_of_the_document() -> None:
    session = WorldService(payments_world.world).session()
    assert frames.state_frame_text(session.state_text()) == encoded(session)
    session.reset({"fixture": "small_shop", "seed": 5, "episode_id": "kept", "clock_mode": "tick"})
    assert frames.state_frame_text(session.state_text()) == encoded(session)
    customer = session.step(
        {
            "type": "call_tool",
            "tool_name": "create_customer",
            "arguments": {"email": "ümlaut@example.com", "name": 'Ada "Q" ☃'},
        }
    )["observation"]["result"]
    session.step(
        {
            "type": "call_tool",
            "tool_name": "update_customer",
            "arguments": {"customer_id": customer.id, "name": "Ada\nL."},
        }
    )
    session.step({"type": "list_tools"})
    assert frames.state_frame_text(session.state_text()) == encoded(session)
    session.close()


@pytest.mark.parametrize(
    "format", ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]
)
def test_every_built_in_format(tmp_path: Path, format: str) -> None:
    session = WorldService(make_beacon(tmp_path)).session()
    session.reset({"state_format": format})
    for text in ("one", "two"):
        session.step({"type": "call_tool", "tool_name": "add_note", "arguments": {"text": text}})
    assert frames.state_frame_text(session.state_text()) == encoded(session)
    session.close()


def test_a_world_format_and_one_json_cannot_carry(tmp_path: Path) -> None:
    world = make_beacon(tmp_path)

    @world.state_format("beacon.count/1")
    def count(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"calls": 0 if instance is None else instance.call_count}

    @world.state_format("beacon.nan/1")
    def not_a_number(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"value": math.nan}

    session = WorldService(world).session()
    session.reset({"state_format": "beacon.count/1"})
    assert frames.state_frame_text(session.state_text()) == encoded(session)
    session.reset({"state_format": "beacon.nan/1"})
    with pytest.raises(ValueError):
        session.state_text()
    with pytest.raises(ValueError):
        encoded(session)
    session.close()
    with pytest.raises(FrameError):
        session.state_text()


def test_a_state_json_cannot_carry_fails_the_frame(
    serving: Any, wire: Any, tmp_path: Path, server_log: Records
) -> None:
    world = make_beacon(tmp_path)

    @world.state_format("beacon.nan/1")
    def not_a_number(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"value": math.nan}

    ws = wire(serving(world))
    ws.reset(state_format="beacon.nan/1")
    reply = ws.ask({"type": "state"})
    assert reply["type"] == "error"
    assert reply["data"]["code"] == "EXECUTION_ERROR"
    assert reply["data"]["message"].startswith("internal error (")
    assert "not JSON" in server_log.text()
    assert ws.call("add_note", text="still served")["type"] == "observation"
