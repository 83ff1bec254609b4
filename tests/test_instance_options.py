"""``seahaven.InstanceOptions``: the one model of the options another process may set.

The model is strict about JSON types, every field is described, the check names
the key and the type it takes, ``INSTANCE_OPTIONS`` is its field names, the
command line's ``--reset-options`` is checked through it, and the table of
docs/instance_options.md is held to it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import ValidationError

import seahaven
from seahaven.cli.support import instance_options
from seahaven.declaration.instance_options import (
    InstanceOptions,
    check_instance_options,
    expected_type,
    instance_option_names,
    instance_options_schema,
    option_problems,
)
from seahaven.world import INSTANCE_OPTIONS

DOC = Path(__file__).resolve().parents[1] / "docs" / "instance_options.md"
NO_FLAGS: dict[str, Any] = dict.fromkeys(("fixture", "seed", "now", "clock_mode"))

# A bad option, and the words every door refuses it in.
BAD_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"seed": "seven"}, "seed must be a whole number or null, not a string"),
    ({"seed": True}, "seed must be a whole number or null, not a boolean"),
    ({"seed": 1.5}, "seed must be a whole number or null, not a number"),
    ({"fixture": 7}, "fixture must be a string (a fixture id) or null, not a number"),
    (
        {"startup": "keeper=ada"},
        "startup must be an object of the world's startup keywords or null, not a string",
    ),
    ({"storage": 1}, "storage must be a string (memory or disk) or null, not a number"),
    ({"setup_sql": ["SELECT 1"]}, "setup_sql must be a string of SQL statements or null"),
]


def test_the_model_is_the_instance_options_and_world_instance_takes_each() -> None:
    assert seahaven.InstanceOptions is InstanceOptions
    assert INSTANCE_OPTIONS == instance_option_names() == tuple(InstanceOptions.model_fields)
    keywords = inspect.signature(seahaven.World.instance).parameters
    assert set(INSTANCE_OPTIONS) <= set(keywords)
    # The one keyword left out is the operator's to decide.
    assert set(keywords) - set(INSTANCE_OPTIONS) == {"self", "control_tools"}


def test_every_option_is_described_and_names_its_json_type() -> None:
    schema = instance_options_schema()
    assert schema == InstanceOptions.model_json_schema()
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == list(INSTANCE_OPTIONS)
    for name, field in schema["properties"].items():
        assert field["description"], name
        assert field["default"] is None, name
        assert expected_type(name).startswith(("a ", "an ")), name


def test_the_model_is_strict_frozen_and_takes_no_other_key() -> None:
    options = InstanceOptions(seed=7, startup={"keeper": "ada"})
    assert options.keywords() == {"seed": 7, "startup": {"keeper": "ada"}}
    with pytest.raises(ValidationError):
        options.seed = 8  # type: ignore[misc]
    for bad in ({"seed": "7"}, {"seed": True}, {"seed": 7.0}, {"fixture": 3}, {"colour": "red"}):
        with pytest.raises(ValidationError):
            InstanceOptions.model_validate(bad)
    assert InstanceOptions().keywords() == {}


@pytest.mark.parametrize(("options", "says"), BAD_OPTIONS)
def test_a_bad_option_is_refused_naming_the_key_and_the_type_it_takes(
    options: dict[str, Any], says: str
) -> None:
    [problem] = option_problems(options)
    assert problem.startswith(says)
    with pytest.raises(seahaven.WorldBug, match=re.escape(says)):
        check_instance_options(options, source="the options")


def test_the_check_names_unknown_keys_and_what_it_takes() -> None:
    with pytest.raises(seahaven.WorldBug) as refused:
        check_instance_options({"colour": "red", "fixture": None}, source="the body")
    assert str(refused.value) == (
        "the body does not take 'colour'; it takes "
        "fixture, seed, now, clock_mode, state_format, startup, setup_sql, storage"
    )
    with pytest.raises(seahaven.WorldBug, match=r"must be a JSON object of world\.instance"):
        check_instance_options(["seed"], source="the body")
    # Keys a door takes besides the options are its own to handle.
    checked = check_instance_options({"seed": 3, "episode_id": "e"}, takes=("episode_id",))
    assert checked.keywords() == {"seed": 3}
    # Several wrong values are named together, in the model's order.
    with pytest.raises(seahaven.WorldBug, match=r"seed must be .*; storage must be"):
        check_instance_options({"storage": 1, "seed": "x"})


def test_the_options_checked_make_an_instance() -> None:
    world = seahaven.World(
        name="options_plain",
        version="1.0.0",
        state_format="seahaven.state/1",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
    )
    options = check_instance_options({"seed": 5, "clock_mode": "fixed", "storage": "memory"})
    with world.instance(**options.keywords()) as inst:
        assert inst.state()["seed"] == 5 and inst.state()["clock_mode"] == "fixed"


@pytest.mark.parametrize(("options", "says"), BAD_OPTIONS)
def test_the_command_line_refuses_a_bad_option_in_the_same_words(
    options: dict[str, Any], says: str
) -> None:
    import json

    with pytest.raises(typer.BadParameter, match=re.escape(says)):
        instance_options(json.dumps(options), NO_FLAGS)
    assert instance_options('{"seed": 7, "storage": "disk"}', NO_FLAGS) == {
        "seed": 7,
        "storage": "disk",
    }
    with pytest.raises(typer.BadParameter, match="--reset-options does not take 'colour'"):
        instance_options('{"colour": 1}', NO_FLAGS)


def _doc_table() -> list[tuple[str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            rows.append((cells[0].strip("`"), cells[1], cells[2]))
    return rows


def test_the_table_of_the_docs_is_the_model() -> None:
    rows = _doc_table()
    assert [name for name, _, _ in rows] == list(INSTANCE_OPTIONS)
    for name, json_type, meaning in rows:
        assert json_type == expected_type(name), name
        description = InstanceOptions.model_fields[name].description
        assert meaning == description, name
