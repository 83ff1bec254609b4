"""The same bad instance option is refused in the same words at every door.

The served session's reset (over ``/ws`` and in process), ``seahaven.http``'s PUT
and its ``reset_options``, ``seahaven mcp``'s ``reset_options`` and its command
line, and a Ray ``Episode`` all check what they are given with
``seahaven.InstanceOptions``, so each refusal carries the model's phrase after the
door's own prefix. ``GET /schema``'s ``reset`` publishes the model's fields.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from pydantic import ValidationError
from seahaven_openenv.clients.models import schemas
from seahaven_openenv.sessions.reset_data import RESET_KEYS, RESET_TYPES, reset_schema
from seahaven_openenv.sessions.session import FrameError, WorldService
from seahaven_openenv.web.routes import schema_document
from shelf import handle, make_shelf

import seahaven
import seahaven.http
from seahaven.cli.support import instance_options
from seahaven.declaration.instance_options import InstanceOptions, option_problems
from seahaven.world import INSTANCE_OPTIONS

# A bad option at every door, and the model's words for it.
BAD = [
    ({"seed": "seven"}, "seed must be a whole number or null, not a string"),
    ({"seed": True}, "seed must be a whole number or null, not a boolean"),
    ({"fixture": 7}, "fixture must be a string (a fixture id) or null, not a number"),
    ({"storage": 1}, "storage must be a string (memory or disk) or null, not a number"),
    (
        {"startup": ["keeper"]},
        "startup must be an object of the world's startup keywords or null, not an array",
    ),
]
NO_FLAGS: dict[str, Any] = dict.fromkeys(("fixture", "seed", "now", "clock_mode"))


@pytest.fixture
def shelf(tmp_path: Path) -> seahaven.World:
    """A shelf world of this test's own."""
    return make_shelf(tmp_path / "fixtures")


def test_the_model_says_each_phrase() -> None:
    for options, says in BAD:
        assert option_problems(options) == [says]


def test_the_wire_takes_the_model_and_its_own_keys_in_the_order_messages_list() -> None:
    options = [key for key in RESET_KEYS if key in InstanceOptions.model_fields]
    assert tuple(options) == INSTANCE_OPTIONS
    assert set(RESET_KEYS) - set(INSTANCE_OPTIONS) == {
        "episode_id",
        "scenario",
        "split",
        "index",
        "from_snapshot",
    }
    assert RESET_KEYS[:5] == ("fixture", "seed", "now", "clock_mode", "episode_id")
    for key in INSTANCE_OPTIONS:
        assert RESET_TYPES[key] in option_problems({key: object()})[0]


@pytest.mark.parametrize(("options", "says"), BAD)
def test_a_reset_refuses_a_bad_option_in_the_models_words(
    shelf: seahaven.World, options: dict[str, Any], says: str
) -> None:
    session = WorldService(shelf).session()
    try:
        with pytest.raises(FrameError) as refused:
            session.reset(options)
        assert refused.value.code == "VALIDATION_ERROR"
        assert refused.value.message == f"reset's {says}"
        assert session.instance is None
    finally:
        session.close()


def test_a_reset_frame_on_the_socket_says_the_same(served, wire) -> None:
    ws = wire(served)
    reply = ws.ask({"type": "reset", "data": {"seed": "seven"}})
    assert reply["type"] == "error"
    assert reply["data"]["message"] == "reset's seed must be a whole number or null, not a string"


@pytest.mark.parametrize(("options", "says"), BAD)
def test_seahaven_http_refuses_a_bad_option_in_the_models_words(
    shelf: seahaven.World, options: dict[str, Any], says: str
) -> None:
    with pytest.raises(seahaven.WorldBug) as refused:
        seahaven.http.app(shelf, handle, reset_options=options)
    assert str(refused.value) == f"reset_options: {says}"
    with seahaven.http.running(shelf, handle) as server, httpx.Client(timeout=30) as client:
        answer = client.put(server.url("t"), json=options)
        assert answer.status_code == 400
        assert f"the PUT body: {says}" in answer.text
        assert server.app.instance_ids == []


@pytest.mark.parametrize(("options", "says"), BAD)
def test_seahaven_mcp_refuses_a_bad_option_in_the_models_words(
    options: dict[str, Any], says: str
) -> None:
    from seahaven_mcp import check_reset_options

    with pytest.raises(seahaven.WorldBug) as refused:
        check_reset_options(options)
    assert str(refused.value) == f"reset_options: {says}"
    # ...and its command line, as --reset-options.
    with pytest.raises(typer.BadParameter, match=re.escape(f"reset_options: {says}")):
        instance_options(json.dumps(options), NO_FLAGS, check=check_reset_options)


def test_seahaven_mcp_serve_refuses_before_it_serves(shelf: seahaven.World) -> None:
    import seahaven.mcp

    with pytest.raises(seahaven.WorldBug, match="reset_options: seed must be a whole number"):
        seahaven.mcp.serve(shelf, reset_options={"seed": "seven"})


@pytest.mark.parametrize(("options", "says"), BAD)
def test_a_ray_episode_refuses_a_bad_option_in_the_models_words(
    options: dict[str, Any], says: str
) -> None:
    from seahaven.episodes import Episode

    with pytest.raises(ValidationError, match=re.escape(says)):
        Episode.model_validate({"episode_id": "e", "world": "w", "calls": [], **options})


def test_a_ray_episode_gives_its_instance_options() -> None:
    from seahaven.episodes import EPISODE_OPTION_FIELDS, Episode

    assert set(EPISODE_OPTION_FIELDS) <= set(INSTANCE_OPTIONS)
    episode = Episode(episode_id="e", world="w", calls=[], seed=4, clock_mode="tick")
    options = episode.instance_options()
    assert isinstance(options, InstanceOptions)
    assert options.seed == 4 and options.clock_mode == "tick" and options.startup is None
    assert set(options.keywords()) == set(EPISODE_OPTION_FIELDS)


def test_schema_publishes_the_reset_options_beside_the_other_schemas() -> None:
    document = schema_document()
    assert set(document) >= {"action", "observation", "state", "reset_observation", "reset"}
    assert document["reset"] == json.loads(json.dumps(reset_schema()))
    assert schemas()["reset"] == reset_schema()
    properties = document["reset"]["properties"]
    assert list(properties) == list(RESET_KEYS)
    for key in INSTANCE_OPTIONS:
        assert properties[key] == InstanceOptions.model_json_schema()["properties"][key]
    assert all(field.get("description") for field in properties.values())
    assert "control_tools" not in properties
