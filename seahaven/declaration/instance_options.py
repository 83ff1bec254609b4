"""The options an instance is made with from another process, as one strict model.

``InstanceOptions`` has one field per keyword of ``World.instance()`` that a
caller outside the process may set (a reset frame, a PUT body, MCP's
``reset_options``, ``--reset-options``, a Ray episode). Every door checks what it
was sent with ``check_instance_options`` (or, to phrase the refusal itself, with
``option_problems``), so the same bad option is refused in the same words
everywhere, and adding an option is one new field here. The values are checked
for their JSON type only; what they mean (a fixture that exists, a clock mode
that is one) is ``World.instance()``'s to check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seahaven.errors import WorldBug
from seahaven.stores.clock import CLOCK_MODES
from seahaven.stores.storage import STORAGES

__all__ = [
    "Expected",
    "InstanceOptions",
    "check_instance_options",
    "expected_type",
    "instance_option_names",
    "instance_options_schema",
    "json_type",
    "option_problems",
]

# The most unknown keys one refusal lists by name.
_MAX_LISTED = 10
# The most characters of one key a refusal repeats (the same limit as every echo on the wire).
_MAX_KEY = 256


@dataclass(frozen=True, slots=True)
class Expected:
    """A field's JSON type in the words a refusal uses: ``a whole number``, ``a string (...)``."""

    text: str


class InstanceOptions(BaseModel):
    """The keywords of ``World.instance()`` a caller in another process may set, all optional.

    Strict JSON types: a string is not a number and a boolean is not a whole
    number. ``control_tools`` is not one: whoever runs a server decides it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    fixture: Annotated[str | None, Expected("a string (a fixture id)")] = Field(
        default=None,
        title="Fixture",
        description="The id of the fixture the instance starts from; null for a blank instance",
    )
    seed: Annotated[int | None, Expected("a whole number")] = Field(
        default=None,
        title="Seed",
        description="The seed of the instance's id stream and SQL random(); null draws one",
    )
    now: Annotated[str | None, Expected("a string (an ISO 8601 instant)")] = Field(
        default=None,
        title="Now",
        description="The instant the clock starts at, in ISO 8601; null takes the fixture's, "
        "or the world's",
    )
    clock_mode: Annotated[str | None, Expected("a string (fixed, tick, running or wall)")] = Field(
        default=None,
        title="Clock mode",
        description="How the clock moves: fixed, tick, running or wall; null takes the world's",
        examples=list(CLOCK_MODES),
    )
    state_format: Annotated[str | None, Expected("a string (a state format's name)")] = Field(
        default=None,
        title="State format",
        description="The state format the state document is rendered in; null takes the world's",
    )
    startup: Annotated[
        dict[str, Any] | None, Expected("an object of the world's startup keywords")
    ] = Field(
        default=None,
        title="Startup keywords",
        description="The keywords the world's startup hooks are called with, as an object",
    )
    setup_sql: Annotated[str | None, Expected("a string of SQL statements")] = Field(
        default=None,
        title="setup_sql",
        description="SQL statements run on the new instance's stores before its first call",
        json_schema_extra={"contentMediaType": "application/sql"},
    )
    storage: Annotated[str | None, Expected("a string (memory or disk)")] = Field(
        default=None,
        title="Storage",
        description="Where the instance keeps its stores: memory or disk; null takes "
        "SEAHAVEN_STORAGE, else memory",
        examples=list(STORAGES),
    )

    def keywords(self) -> dict[str, Any]:
        """The options set, as keyword arguments for ``World.instance()``."""
        given = self.model_fields_set
        return {name: getattr(self, name) for name in type(self).model_fields if name in given}


def instance_option_names() -> tuple[str, ...]:
    """Every option's name, in the order the model declares them and messages list them."""
    return tuple(InstanceOptions.model_fields)


def expected_type(name: str) -> str:
    """The JSON type option ``name`` takes, as a refusal names it (``a whole number``)."""
    for item in InstanceOptions.model_fields[name].metadata:
        if isinstance(item, Expected):
            return item.text
    raise KeyError(name)


def instance_options_schema() -> dict[str, Any]:
    """The JSON Schema of the options, every field described, for a door that publishes it."""
    return InstanceOptions.model_json_schema()


def json_type(value: object) -> str:
    """The JSON type of a parsed value, with its article: ``an object``, ``a string``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _named(keys: Iterable[object]) -> str:
    items = list(keys)
    shown = []
    for key in items[:_MAX_LISTED]:
        text = str(key)
        if len(text) > _MAX_KEY:
            text = f"{text[:_MAX_KEY]}... ({len(text)} characters)"
        shown.append(repr(text))
    named = ", ".join(shown)
    if len(items) > _MAX_LISTED:
        named += f" and {len(items) - _MAX_LISTED} more"
    return named


def option_problems(options: Mapping[str, Any]) -> list[str]:
    """What is wrong with the options' values, one phrase per key, in the model's order.

    Each phrase reads ``seed must be a whole number or null, not a string``.
    Keys that are not options are left to the caller (``unknown`` below).
    """
    known = {key: value for key, value in options.items() if key in InstanceOptions.model_fields}
    try:
        InstanceOptions.model_validate(known)
    except ValidationError as error:
        wrong = {item["loc"][0] for item in error.errors() if item["loc"]}
    else:
        return []
    return [
        f"{name} must be {expected_type(name)} or null, not {json_type(options[name])}"
        for name in InstanceOptions.model_fields
        if name in wrong
    ]


def check_instance_options(
    options: object, *, source: str = "the instance options", takes: Iterable[str] = ()
) -> InstanceOptions:
    """``options`` as ``InstanceOptions``, or a ``WorldBug`` naming the key and what it takes.

    ``source`` names what the options came in (``the PUT body``,
    ``reset_options``) at the start of each message; ``takes`` lists keys the
    door takes besides the options, which it handles itself and which are left
    out of the model.
    """
    if not isinstance(options, Mapping):
        raise WorldBug(
            f"{source} must be a JSON object of world.instance() keywords, not {json_type(options)}"
        )
    beside = set(takes)
    stray = sorted(
        str(key) for key in options if key not in InstanceOptions.model_fields and key not in beside
    )
    if stray:
        raise WorldBug(
            f"{source} does not take {_named(stray)}; it takes {', '.join(instance_option_names())}"
        )
    problems = option_problems(options)
    if problems:
        raise WorldBug(f"{source}: {'; '.join(problems)}")
    return InstanceOptions.model_validate(
        {key: value for key, value in options.items() if key in InstanceOptions.model_fields}
    )
