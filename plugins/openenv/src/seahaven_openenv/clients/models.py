"""The typed shapes on the wire, built on OpenEnv's own models.

``SeahavenObservation`` is OpenEnv's ``CallToolObservation`` with the world's
error triple made easy to read; ``SeahavenState`` is OpenEnv's ``State`` with
every field of the state document typed and described. ``GET /schema``
publishes their JSON Schemas, so a generated client carries the descriptions.
Importing this module imports OpenEnv, which is slow (seconds, and its web
stack), so the server never does: it answers ``/schema`` from ``schema.json``,
the output of ``schemas()`` shipped beside this module. ``python -m
seahaven_openenv.clients.models`` writes that file again after a model changes, and a
test holds the two equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from seahaven.stores.clock import ClockMode
from seahaven_openenv.clients.lean_openenv import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    Tool,
    ToolError,
)

__all__ = [
    "SCHEMA_FILE",
    "CallToolAction",
    "CheckRef",
    "EpisodeEndObservation",
    "FileRef",
    "FixtureRef",
    "GradeRef",
    "ListToolsAction",
    "ListToolsObservation",
    "NodeRef",
    "Observation",
    "ScenarioReport",
    "SeahavenObservation",
    "SeahavenState",
    "Tool",
    "ToolError",
    "WorldRef",
    "main",
    "observation_schema",
    "schemas",
    "schemas_text",
]

SCHEMA_FILE = Path(__file__).with_name("schema.json")
"""What ``GET /schema`` answers, as ``schemas()`` builds it; shipped as package data."""


class _Open(BaseModel):
    # A newer server may add fields; an older client reads what it knows.
    model_config = ConfigDict(extra="allow")


class WorldRef(_Open):
    """The root world of the document: its name and version."""

    name: str = Field(description="The world's name, as World(name=...) gives it")
    version: str = Field(description="The world's version, as World(version=...) gives it")


class NodeRef(_Open):
    """One store of the instance, as the document's composition reports it."""

    world: str = Field(description="The name of the world this store holds")
    world_version: str = Field(description="That world's version in the running process")
    scope: str | None = Field(
        description="The scope the store was added under, or null for a shared store"
    )
    aliases: list[str] = Field(description="Every other path that names this same store")
    schema_hash: str = Field(description="The SHA-256 of the store's schema, normalised")
    frozen_world_version: str | None = Field(
        description="The world's version when the fixture was frozen; null for a blank instance"
    )


class FileRef(_Open):
    """One state file of a fixture."""

    file_sha256: str = Field(description="The SHA-256 of the fixture's state file for this store")


class FixtureRef(_Open):
    """The fixture an instance was made from."""

    id: str = Field(description="The fixture's id")
    nodes: dict[str, FileRef] = Field(
        description="Each store's fixture file, keyed by the store's canonical path"
    )


class SeahavenObservation(CallToolObservation):
    """The answer to a tool call: exactly one of ``result`` and ``error`` is set.

    ``error`` is OpenEnv's ``{error_type, message}``; the world's own
    ``{code, message, details}`` triple is ``metadata["seahaven_error"]``, read
    here as ``seahaven_error``.
    """

    @property
    def seahaven_error(self) -> dict[str, Any] | None:
        """The world's error triple, ``{code, message, details}``, or ``None`` on success."""
        triple = self.metadata.get("seahaven_error")
        return triple if isinstance(triple, dict) else None


class CheckRef(_Open):
    """One check of a grade."""

    name: str = Field(description="What the check looked at, as the grader names it")
    passed: bool = Field(description="Whether it held")
    score: float = Field(description="Its score, from 0 to 1")
    why: str = Field(description="A sentence saying why it held or did not")


class GradeRef(_Open):
    """The grade of a scenario's episode: a score, a verdict and every check behind them."""

    score: float = Field(description="The score, from 0 to 1: the reward of the episode")
    passed: bool = Field(description="Whether the episode passed")
    checks: list[CheckRef] = Field(description="Every check the grader made, in order")


class ScenarioReport(_Open):
    """The scenario a session's episode is bound to, and how the episode stands or ended."""

    scenario: str = Field(description="The scenario, as pack/id")
    pack: str | None = Field(description="The pack it belongs to")
    pack_version: str | None = Field(description="That pack's version")
    id: str = Field(description="The scenario's id within its pack")
    hash: str = Field(description="The scenario's content hash: which version of the task")
    seed: int | None = Field(description="The seed the episode started with")
    budget: int = Field(description="How many tool calls the agent may make")
    calls_made: int = Field(description="How many tool calls it has made (an accepted submit not)")
    calls_left: int = Field(description="How many it may still make")
    done: bool = Field(description="Whether the episode has ended")
    ended_by: str | None = Field(
        description="How it ended: submit, budget, finish or user; null while it runs"
    )
    answer: str | None = Field(description="The answer the agent submitted, or null")
    instructions: str = Field(description="What the agent was asked to do")
    grade: GradeRef | None = Field(description="The grade once the episode has ended; else null")
    state_sha256: str = Field(
        description="A hash of every change-log record and call so far, the same in process"
    )
    conversation: list[dict[str, Any]] = Field(
        default_factory=list,
        description=(
            "The conversation with the scenario's simulated user: each message's speaker "
            "(agent or user), text and at_call; empty without a user"
        ),
    )
    user_tokens: dict[str, int] | None = Field(
        default=None,
        description="A model-played user's tokens, apart from the agent's; null for a scripted one",
    )
    events: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The scenario's events that have happened: name, at_call and any refusal",
    )


class EpisodeEndObservation(Observation):
    """The answer to a ``finish`` step: the episode of a scenario ended where it stood.

    ``metadata`` holds ``calls_left`` and, when this step ended the episode,
    ``ended_by`` and the ``grade``.
    """


class SeahavenState(State):
    """The state document of the session's instance, plus OpenEnv's ``step_count``.

    ``model_dump(exclude={"step_count"})`` is the document exactly as
    ``inst.state()`` answers it in process.
    """

    format: str = Field(description="The state format that produced the state field")
    seahaven_version: str = Field(description="The Seahaven version that produced the document")
    world: WorldRef = Field(description="The root world's name and version")
    composition: dict[str, NodeRef] | None = Field(
        default=None,
        description="Every store of the instance, keyed by canonical path; null before a reset",
    )
    fixture: FixtureRef | None = Field(
        default=None, description="The fixture the instance was made from; null for a blank one"
    )
    episode_id: str | None = Field(
        default=None,
        description="The episode id reset was given, or the one it minted; null before a reset",
    )
    seed: int | None = Field(default=None, description="The seed reset was given")
    now: str | None = Field(
        default=None, description="The instance clock's reading when the document was made"
    )
    clock_mode: ClockMode | None = Field(
        default=None, description="How the clock moves: fixed, tick, running or wall"
    )
    startup: dict[str, Any] | None = Field(
        default=None, description="The world's own startup keywords reset passed, as JSON"
    )
    setup_sql: str | None = Field(
        default=None, description="The SQL reset ran on the new instance, as given"
    )
    call_count: int = Field(default=0, description="How many tool calls were dispatched")
    state: dict[str, Any] = Field(
        description="The format's rendering of what the episode changed; its shape is the format's"
    )
    step_count: int = Field(
        default=0,
        ge=0,
        description="Every step the protocol accepted since the reset, tool listings and calls "
        "the world refused included (a malformed step is not counted); not call_count",
    )
    scenario: ScenarioReport | None = Field(
        default=None,
        description="The scenario the episode is bound to, its budget and its grade; absent "
        "for an episode bound to none",
    )

    @model_serializer(mode="wrap")
    def _no_scenario_when_unbound(self, handler: SerializerFunctionWrapHandler) -> Any:
        # The document of an episode bound to no scenario has no such field, in process or
        # on the wire, so a dump of it leaves the field out rather than writing null.
        data = handler(self)
        if isinstance(data, dict) and data.get("scenario") is None:
            data.pop("scenario", None)
        return data


def schemas() -> dict[str, Any]:
    """What ``GET /schema`` answers: the action, observation and state models' JSON Schemas.

    ``reset`` is the schema of a reset's data: the options an instance is made
    with are ``seahaven.InstanceOptions``'s fields, and the web console builds
    its reset form from it.
    """
    # The session module is the server's (it imports the Task API's router, and FastAPI with
    # it): a client importing these models never needs it.
    from seahaven_openenv.sessions.reset_data import reset_schema

    return {
        "action": CallToolAction.model_json_schema(),
        "observation": observation_schema(),
        "state": SeahavenState.model_json_schema(),
        "reset_observation": Observation.model_json_schema(),
        "reset": reset_schema(),
    }


def observation_schema() -> dict[str, Any]:
    """The JSON Schema of every observation a step answers: a tool call's, or the tool list's.

    A validator checks each step's observation against ``/schema``'s one
    ``observation``, so it is either model (``anyOf`` the two, each under
    ``$defs``). The properties of both stay at the top, described, for a reader
    that generates a client from them.
    """
    call = SeahavenObservation.model_json_schema()
    listing = ListToolsObservation.model_json_schema()
    end = EpisodeEndObservation.model_json_schema()
    definitions = {**call.pop("$defs", {}), **listing.pop("$defs", {}), **end.pop("$defs", {})}
    definitions["SeahavenObservation"] = call
    definitions["ListToolsObservation"] = listing
    definitions["EpisodeEndObservation"] = end
    return {
        "title": "SeahavenObservation",
        "description": (
            "The answer to a step: a tool call's (SeahavenObservation: exactly one of result "
            "and error is set, and metadata.seahaven_error holds the world's error triple), "
            "a tool listing's (ListToolsObservation), or a finish step's "
            "(EpisodeEndObservation)."
        ),
        "type": "object",
        "properties": {**call["properties"], **listing["properties"]},
        "anyOf": [
            {"$ref": "#/$defs/SeahavenObservation"},
            {"$ref": "#/$defs/ListToolsObservation"},
            {"$ref": "#/$defs/EpisodeEndObservation"},
        ],
        "$defs": definitions,
    }


def schemas_text() -> str:
    """``schemas()`` as the text of ``schema.json``: indented, keys in the models' order."""
    return json.dumps(schemas(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m seahaven_openenv.clients.models``: write ``schema.json``; ``--check`` checks."""
    args = sys.argv[1:] if argv is None else argv
    text = schemas_text()
    current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else None
    if args == ["--check"]:
        if current != text:
            print(f"{SCHEMA_FILE} is out of date; run python -m seahaven_openenv.clients.models")
            return 1
        return 0
    if args:
        print("usage: python -m seahaven_openenv.clients.models [--check]")
        return 2
    if current != text:
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
