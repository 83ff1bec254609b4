"""The typed shapes on the wire, built on OpenEnv's own models.

``SeahavenObservation`` is OpenEnv's ``CallToolObservation`` with the world's
error triple made easy to read; ``SeahavenState`` is OpenEnv's ``State`` with
every field of the state document typed and described. ``GET /schema``
publishes their JSON Schemas, so a generated client carries the descriptions.
Importing this module imports OpenEnv, which is slow; the server does it only
when ``/schema`` is first asked for.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
)
from openenv.core.env_server.types import Observation, State
from pydantic import BaseModel, ConfigDict, Field

from seahaven.clock import ClockMode

__all__ = [
    "CallToolAction",
    "FileRef",
    "FixtureRef",
    "ListToolsAction",
    "ListToolsObservation",
    "NodeRef",
    "Observation",
    "SeahavenObservation",
    "SeahavenState",
    "Tool",
    "ToolError",
    "WorldRef",
    "observation_schema",
    "schemas",
]


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


def schemas() -> dict[str, Any]:
    """What ``GET /schema`` answers: the action, observation and state models' JSON Schemas."""
    return {
        "action": CallToolAction.model_json_schema(),
        "observation": observation_schema(),
        "state": SeahavenState.model_json_schema(),
        "reset_observation": Observation.model_json_schema(),
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
    definitions = {**call.pop("$defs", {}), **listing.pop("$defs", {})}
    definitions["SeahavenObservation"] = call
    definitions["ListToolsObservation"] = listing
    return {
        "title": "SeahavenObservation",
        "description": (
            "The answer to a step: a tool call's (SeahavenObservation: exactly one of result "
            "and error is set, and metadata.seahaven_error holds the world's error triple) or "
            "a tool listing's (ListToolsObservation)."
        ),
        "type": "object",
        "properties": {**call["properties"], **listing["properties"]},
        "anyOf": [
            {"$ref": "#/$defs/SeahavenObservation"},
            {"$ref": "#/$defs/ListToolsObservation"},
        ],
        "$defs": definitions,
    }
