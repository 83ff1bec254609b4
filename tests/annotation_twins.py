"""Argument types, and tools annotated with the real objects.

``test_string_annotations.py`` declares the same tools under
``from __future__ import annotations`` and checks that both register and
validate identically. This module must never gain that import: its
annotations are the real objects on purpose.
"""

import dataclasses
import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

import seahaven

Status = Literal["draft", "open", "closed"]
Limit = Annotated[int, Field(ge=1, le=200, description="Page size, between 1 and 200.")]


class Priority(enum.Enum):
    """An Enum argument travels as its value."""

    LOW = "low"
    HIGH = "high"


class Window(BaseModel):
    """A nested strict model."""

    model_config = ConfigDict(strict=True)

    start: datetime
    end: datetime


@dataclasses.dataclass
class Point:
    """A plain dataclass argument."""

    x: int
    y: int


class Address(TypedDict):
    """A TypedDict argument, from typing_extensions so every supported Python accepts it."""

    city: str
    zip: str


def search(
    ctx: seahaven.Ctx,
    query: str,
    status: Status,
    priority: Priority,
    limit: Limit = 50,
    window: Window | None = None,
    tags: tuple[str, ...] = (),
    ids: set[int] | None = None,
    when: datetime | None = None,
    key: UUID | None = None,
    amount: Decimal | None = None,
    at: Point | None = None,
    address: Address | None = None,
    from_: Annotated[str, Field(alias="from")] = "me",
    exact: bool = False,
) -> dict[str, Any]:
    """Search with one argument of every kind."""
    return {"query": query}


def typed_context(ctx: seahaven.Ctx[seahaven.Worlds], count: int) -> dict[str, Any]:
    """A context written with its type parameter."""
    return {"count": count}


def nested(
    ctx: seahaven.Ctx, windows: list[Window], points: dict[str, Point]
) -> list[dict[str, Any]]:
    """Models inside containers."""
    return [window.model_dump() for window in windows]
