"""``seahaven.cli.support.instance_options``: how a serving command reads its instance options."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer

import seahaven
from seahaven.cli.support import instance_options
from seahaven.world import INSTANCE_OPTIONS

NO_FLAGS: dict[str, Any] = dict.fromkeys(("fixture", "seed", "now", "clock_mode"))


def only_known(parsed: object) -> dict[str, Any]:
    """A server's own verdict: it takes fixture, seed, now and clock_mode, nothing else."""
    assert isinstance(parsed, dict)
    stray = sorted(set(parsed) - set(NO_FLAGS))
    if stray:
        raise seahaven.WorldBug(f"the server does not take {', '.join(stray)}")
    return parsed


def test_the_flags_given_are_the_options() -> None:
    flags = {**NO_FLAGS, "fixture": "acme", "seed": 0}
    assert instance_options(None, flags, check=only_known) == {"fixture": "acme", "seed": 0}
    assert instance_options(None, NO_FLAGS, check=only_known) == {}


def test_the_json_is_the_whole_of_the_options_and_the_servers_check_decides() -> None:
    text = '{"fixture": "acme", "clock_mode": "tick", "now": "2030-01-01T00:00:00.000Z"}'
    assert instance_options(text, NO_FLAGS, check=only_known) == {
        "fixture": "acme",
        "clock_mode": "tick",
        "now": "2030-01-01T00:00:00.000Z",
    }


@pytest.mark.parametrize(
    ("text", "flags", "says"),
    [
        ("{}", {**NO_FLAGS, "seed": 1, "now": "2030-01-01T00:00:00.000Z"}, "with --seed, --now"),
        ("{nope", NO_FLAGS, "not JSON"),
        ("[1, 2]", NO_FLAGS, "must be a JSON object of world.instance() keywords, not list"),
        ('{"setup_sql": "SELECT 1"}', NO_FLAGS, "does not take setup_sql"),
        ('{"clock_mode": "warp"}', NO_FLAGS, "'warp' is not a clock mode"),
        ('{"now": "yesterday"}', NO_FLAGS, "yesterday"),
    ],
)
def test_what_cannot_be_an_instances_options_is_a_usage_error(
    text: str, flags: dict[str, Any], says: str
) -> None:
    with pytest.raises(typer.BadParameter) as refused:
        instance_options(text, flags, check=only_known)
    assert says in str(refused.value)


def test_the_instance_options_are_world_instances_keywords_but_control_tools() -> None:
    keywords = inspect.signature(seahaven.World.instance).parameters
    assert [name for name in keywords if name not in ("self", "control_tools")] == list(
        INSTANCE_OPTIONS
    )
