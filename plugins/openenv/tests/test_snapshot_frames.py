"""Snapshots and forks over the wire: ``snapshot`` frames, ``reset(from_snapshot=)`` and ``fork``.

Every server is real uvicorn on 127.0.0.1; every client a real WebSocket or
``SeahavenClient``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Serve, Wire, instance_dirs, wait_until
from websockets.sync.client import connect

import seahaven
from seahaven.openenv import SeahavenClient, serve


def capacity(server: serve.RunningServer) -> dict[str, int]:
    with urllib.request.urlopen(f"{server.base_url}/capacity", timeout=10) as answer:
        found: dict[str, int] = json.loads(answer.read())
    return found


def attach(
    server: serve.RunningServer, session: dict[str, Any], stack: contextlib.ExitStack
) -> Wire:
    """A raw connection attached to a fork's session, closed with ``stack``; it resumed."""
    url = (
        server.base_url.replace("http://", "ws://")
        + f"/ws?session_id={session['session_id']}&resume={session['token']}"
    )
    branch = Wire(stack.enter_context(connect(url, compression=None, open_timeout=10)))
    first = branch.receive()
    assert first == {"type": "resumed", "data": {"session_id": session["session_id"]}}
    return branch


def without_ids(document: dict[str, Any]) -> dict[str, Any]:
    """A state document without the instance's own id, which every branch has afresh."""
    return {key: value for key, value in document.items() if key != "episode_id"}


def started(wire: Callable[..., Wire], server: serve.RunningServer) -> Wire:
    original = wire(server)
    assert original.reset(seed=3, now="2026-06-01T09:00:00.000Z")["type"] == "observation"
    for text in ("first", "second"):
        assert original.call("add_note", text=text)["type"] == "observation"
    return original


def test_branches_of_a_fork_end_as_the_original_does(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world)
    original = started(wire, server)
    answer = original.ask({"type": "fork", "data": {"n": 2}, "id": "f1"})
    assert answer["type"] == "fork" and answer["id"] == "f1", answer
    sessions = answer["data"]["sessions"]
    assert len(sessions) == 2 and answer["data"]["step_count"] == 2
    assert len(instance_dirs(beacon_world)) == 3
    assert capacity(server)["active_sessions"] == 3
    with contextlib.ExitStack() as stack:
        branches = [attach(server, session, stack) for session in sessions]
        results = [peer.call("add_note", text="third")["data"] for peer in (original, *branches)]
        assert results[0] == results[1] == results[2]
        documents = [peer.state() for peer in (original, *branches)]
        assert documents[0]["step_count"] == 3
        assert without_ids(documents[0]) == without_ids(documents[1]) == without_ids(documents[2])
        ids = {document["episode_id"] for document in documents}
        assert len(ids) == 3
        # Branches are independent: a call on one shows on no other.
        branches[0].call("add_note", text="only here")
        assert without_ids(branches[1].state()) == without_ids(original.state())
        assert without_ids(branches[0].state()) != without_ids(original.state())
    wait_until(lambda: len(instance_dirs(beacon_world)) == 1)


def test_reset_from_snapshot_goes_on_with_the_same_ids_and_clock(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world)
    original = started(wire, server)
    taken = original.ask({"type": "snapshot", "id": 7})
    assert taken["type"] == "snapshot" and taken["id"] == 7, taken
    data = taken["data"]
    assert set(data) >= {"token", "nbytes", "call_count", "expires_in_s"}
    assert data["call_count"] == 2  # two notes
    assert data["nbytes"] > 0 and data["expires_in_s"] == 3600
    later = original.call("add_note", text="third")["data"]
    original_document = original.state()

    other = wire(server)
    reset = other.reset(from_snapshot=data["token"])
    assert reset["type"] == "observation", reset
    metadata = reset["data"]["observation"]["metadata"]
    assert metadata["from_snapshot"] == data["token"] and metadata["step_count"] == 2
    assert other.call("add_note", text="third")["data"] == later
    document = other.state()
    assert document["step_count"] == 3
    assert without_ids(document) == without_ids(original_document)
    assert document["episode_id"] != original_document["episode_id"]
    # The token stays good for another reset, on the same connection too.
    assert other.reset(from_snapshot=data["token"])["type"] == "observation"
    assert other.state()["step_count"] == 2


def test_reset_from_snapshot_refuses_other_start_keys(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world)
    original = started(wire, server)
    token = original.ask({"type": "snapshot"})["data"]["token"]
    refused = original.reset(from_snapshot=token, fixture="harbour", seed=4)
    assert refused["type"] == "error", refused
    assert refused["data"]["code"] == "VALIDATION_ERROR"
    assert "takes no 'fixture', 'seed'" in refused["data"]["message"]
    assert "from_snapshot" in refused["data"]["message"]
    # Refused for its shape: the episode goes on.
    assert original.state()["step_count"] == 2
    wrong_type = original.reset(from_snapshot=12)
    assert wrong_type["data"]["code"] == "VALIDATION_ERROR"
    assert "from_snapshot must be a string" in wrong_type["data"]["message"]
    # episode_id names the episode, as on any reset.
    named = original.reset(from_snapshot=token, episode_id="branch-a")
    assert named["data"]["observation"]["metadata"]["episode_id"] == "branch-a"


def test_unknown_and_evicted_tokens_say_why(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world, snapshot_limit=1)
    original = started(wire, server)
    unknown = original.reset(from_snapshot="snap-000000000000000000000000")
    assert unknown["type"] == "error" and unknown["data"]["reason"] == "unknown_snapshot"
    assert "no snapshot was kept under it" in unknown["data"]["message"]
    # Refused before anything changed: the episode goes on.
    assert original.state()["step_count"] == 2
    first = original.ask({"type": "snapshot"})["data"]["token"]
    second = original.ask({"type": "snapshot"})["data"]["token"]
    evicted = original.ask({"type": "fork", "data": {"n": 1, "token": first}})
    assert evicted["data"]["reason"] == "unknown_snapshot"
    assert "evicted" in evicted["data"]["message"]
    assert "--snapshot-limit" in evicted["data"]["message"]
    assert original.ask({"type": "fork", "data": {"n": 1, "token": second}})["type"] == "fork"


def test_a_snapshot_past_the_memory_limit_is_refused_naming_the_option(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world, snapshot_memory=0.001)
    original = started(wire, server)
    refused = original.ask({"type": "snapshot", "id": "s"})
    assert refused["type"] == "error" and refused["id"] == "s", refused
    assert refused["data"]["code"] == "EXECUTION_ERROR"
    assert refused["data"]["reason"] == "snapshot_refused"
    assert refused["data"]["option"] == "--snapshot-memory"
    assert "seahaven serve --snapshot-memory" in refused["data"]["message"]
    assert original.call("add_note", text="on")["type"] == "observation"


def test_snapshot_and_fork_refuse_bad_frames_and_no_episode(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world)
    fresh = wire(server)
    empty = fresh.ask({"type": "snapshot"})
    assert empty["data"]["code"] == "SESSION_ERROR" and "reset first" in empty["data"]["message"]
    assert fresh.ask({"type": "fork", "data": {"n": 1}})["data"]["code"] == "SESSION_ERROR"
    fresh.reset()
    for data in ({"n": 0}, {"n": True}, {"n": 65}, {"n": 1, "extra": 1}, {"n": 1, "token": 3}):
        answer = fresh.ask({"type": "fork", "data": data})
        assert answer["data"]["code"] == "VALIDATION_ERROR", (data, answer)
    assert fresh.ask({"type": "snapshot", "data": {"x": 1}})["data"]["code"] == "VALIDATION_ERROR"
    assert len(instance_dirs(beacon_world)) == 1


def test_a_fork_past_capacity_leaves_nothing_behind(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world, max_concurrent_envs=3)
    original = started(wire, server)
    refused = original.ask({"type": "fork", "data": {"n": 3}})
    assert refused["type"] == "error", refused
    assert refused["data"]["reason"] == "fork_refused"
    assert "--max-concurrent-envs" in refused["data"]["message"]
    assert capacity(server)["active_sessions"] == 1
    assert len(instance_dirs(beacon_world)) == 1
    # The session goes on, and a fork that fits is made.
    assert original.call("add_note", text="on")["type"] == "observation"
    assert len(original.ask({"type": "fork", "data": {"n": 2}})["data"]["sessions"]) == 2
    assert capacity(server)["active_sessions"] == 3


def test_a_fork_nobody_attaches_to_ends_after_the_grace(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world, resume_grace=0.5)
    original = started(wire, server)
    assert original.ask({"type": "fork", "data": {"n": 2}})["type"] == "fork"
    assert len(instance_dirs(beacon_world)) == 3
    wait_until(lambda: len(instance_dirs(beacon_world)) == 1)
    wait_until(lambda: capacity(server)["active_sessions"] == 1)


def test_fork_needs_resume(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire]
) -> None:
    server = serving(beacon_world, resume_grace=0)
    original = started(wire, server)
    refused = original.ask({"type": "fork", "data": {"n": 1}})
    assert (
        refused["data"]["reason"] == "fork_refused"
        and "--resume-grace" in refused["data"]["message"]
    )
    assert len(instance_dirs(beacon_world)) == 1


def test_snapshots_are_released_when_the_server_stops(beacon_world: seahaven.World) -> None:
    with serve.running(beacon_world) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        with connect(url, compression=None, open_timeout=10) as connection:
            peer = Wire(connection)
            peer.reset()
            peer.ask({"type": "snapshot"})
            assert peer.ask({"type": "fork", "data": {"n": 2}})["type"] == "fork"
            hub = server.app.state.hub
            assert len(hub.snapshots) == 1
    assert len(hub.snapshots) == 0
    assert instance_dirs(beacon_world) == []


def test_the_client_snapshots_resets_from_and_forks(
    serving: Serve, beacon_world: seahaven.World
) -> None:
    server = serving(beacon_world)
    with SeahavenClient(base_url=server.base_url) as env:
        env.reset(seed=5)
        env.call("add_note", text="first")
        token = env.snapshot()
        assert isinstance(token, str) and token.startswith("snap-")
        branches = env.fork(2)
        try:
            later = env.call("add_note", text="second").result
            for branch in branches:
                assert branch.call("add_note", text="second").result == later
                assert branch.state().step_count == env.state().step_count
        finally:
            for branch in branches:
                branch.close()
        with SeahavenClient(base_url=server.base_url) as other:
            other.reset(from_snapshot=token)
            assert other.call("add_note", text="second").result == later
            with pytest.raises(Exception, match="no snapshot"):
                other.reset(from_snapshot="snap-nothing")
    wait_until(lambda: instance_dirs(beacon_world) == [])


def test_a_token_serves_only_the_world_it_was_taken_of(
    serving: Serve, beacon_world: seahaven.World, wire: Callable[..., Wire], tmp_path: Any
) -> None:
    other_world = seahaven.World(
        name="lantern",
        version="1.0.0",
        schema="CREATE TABLE wicks (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        work_dir=tmp_path,
    )
    server = serving([beacon_world, other_world])
    original = wire(server, "/worlds/beacon/ws")
    original.reset(seed=1)
    token = original.ask({"type": "snapshot"})["data"]["token"]
    elsewhere = wire(server, "/worlds/lantern/ws")
    refused = elsewhere.reset(from_snapshot=token)
    assert refused["data"]["code"] == "VALIDATION_ERROR"
    assert "taken of world 'beacon'" in refused["data"]["message"]
    forked = elsewhere.ask({"type": "fork", "data": {"n": 1, "token": token}})
    assert forked["data"]["code"] == "VALIDATION_ERROR", forked
    assert len(instance_dirs(beacon_world)) == 1


def test_an_async_client_forks_and_attaches(serving: Serve, beacon_world: seahaven.World) -> None:
    server = serving(beacon_world)

    async def run() -> None:
        env = SeahavenClient(base_url=server.base_url)
        async with env:
            await env.reset(seed=2)
            await env.call("add_note", text="first")
            branches = await env.fork(2)
            later = (await env.call("add_note", text="second")).result
            for branch in branches:
                async with branch:
                    assert (await branch.call("add_note", text="second")).result == later

    asyncio.run(run())
    wait_until(lambda: instance_dirs(beacon_world) == [])


def test_seahaven_serve_sets_the_snapshot_limits(tmp_path: Any) -> None:
    from test_serve_command import command
    from test_serve_command import serving as serve_process

    argv = ("--world", "payments", "--snapshot-limit", "1", "--snapshot-age", "120")
    with serve_process(tmp_path, *argv) as server:
        url = server["urls"]["payments"].replace("http://", "ws://") + "/ws"
        with connect(url, compression=None, open_timeout=10) as connection:
            peer = Wire(connection)
            peer.reset()
            first = peer.ask({"type": "snapshot"})["data"]
            assert first["expires_in_s"] == 120
            peer.ask({"type": "snapshot"})
            gone = peer.reset(from_snapshot=first["token"])
            assert gone["data"]["reason"] == "unknown_snapshot"
            assert "evicted" in gone["data"]["message"]
    result = subprocess.run(
        command("serve", "--world", "payments", "--snapshot-limit", "0"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "--snapshot-limit" in result.stderr
