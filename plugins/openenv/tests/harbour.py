"""A small world made for the console's browser tests: an argument of every shape a form draws.

``register_vessel`` takes strings, numbers, a boolean, enums, a list, a nested
model, optional fields (one whose null differs from leaving it out) and a
mapping the form can only take as raw JSON, and echoes what it was given.
``move_vessel`` updates some columns of a row, ``fill_moorings`` writes many
rows at once, and an unknown vessel is a world error with a code and details.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pydantic

import seahaven


class NoSuchVessel(seahaven.ToolError):
    """The vessel is not in the harbour's register."""

    def __init__(self, vessel_id: str) -> None:
        super().__init__(
            "VESSEL_NOT_FOUND",
            f"no vessel {vessel_id} in the register",
            {"vessel_id": vessel_id, "hint": "register_vessel returns the id"},
        )


class Agent(pydantic.BaseModel):
    """The shipping agent who answers for a vessel."""

    model_config = pydantic.ConfigDict(strict=True)

    name: str
    phone: str | None = None


def make_harbour(work_dir: Path | None = None) -> seahaven.World:
    """A fresh harbour world, its instances under ``work_dir`` when given."""
    harbour = seahaven.World(
        name="harbour",
        version="1.3.0",
        description="A harbour master's register, for the console's browser tests.",
        schema="""
            CREATE TABLE vessels (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                length_m REAL NOT NULL,
                crew INTEGER NOT NULL,
                flag TEXT NOT NULL,
                hazardous INTEGER NOT NULL,
                cargo TEXT NOT NULL,
                agent TEXT NOT NULL,
                callsign TEXT,
                status TEXT,
                berth TEXT
            ) STRICT;
            CREATE TABLE moorings (n INTEGER PRIMARY KEY, ring TEXT NOT NULL) STRICT;
        """,
        state_format="seahaven.state/1",
        default_clock_mode="tick",
        work_dir=work_dir,
    )

    @harbour.tool
    def register_vessel(
        ctx: seahaven.Ctx,
        name: str,
        length_m: float,
        crew: int,
        flag: Literal["nl", "de", "no"],
        hazardous: bool,
        cargo: list[str],
        agent: Agent,
        callsign: str | None = None,
        status: Literal["expected", "berthed"] | None = "expected",
        fees: dict[str, int] | None = None,
    ) -> dict[str, Any]:
        """Register a vessel arriving in the harbour; returns it with its id and what was given.

        status is expected unless given; null means not yet known.
        """
        vessel_id = f"v_{ctx.ids.uuid()[:8]}"
        row = {
            "id": vessel_id,
            "name": name,
            "length_m": length_m,
            "crew": crew,
            "flag": flag,
            "hazardous": hazardous,
            "cargo": cargo,
            "agent": agent.model_dump(),
            "callsign": callsign,
            "status": status,
            "fees": fees,
        }
        ctx.db.execute(
            "INSERT INTO vessels (id, name, length_m, crew, flag, hazardous, cargo, agent, "
            "callsign, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vessel_id,
            name,
            length_m,
            crew,
            flag,
            int(hazardous),
            json.dumps(cargo),
            json.dumps(row["agent"]),
            callsign,
            status,
        )
        return row

    @harbour.tool
    def move_vessel(ctx: seahaven.Ctx, vessel_id: str, berth: str) -> dict[str, Any]:
        """Moor a registered vessel at a berth: it is berthed there from now on."""
        found = ctx.db.one("SELECT id FROM vessels WHERE id = ?", vessel_id)
        if found is None:
            raise NoSuchVessel(vessel_id)
        ctx.db.execute(
            "UPDATE vessels SET berth = ?, status = 'berthed' WHERE id = ?", berth, vessel_id
        )
        return {"id": vessel_id, "berth": berth, "status": "berthed"}

    @harbour.tool
    def fill_moorings(ctx: seahaven.Ctx, count: int) -> list[dict[str, Any]]:
        """Fit ``count`` mooring rings along the quay; returns every ring."""
        start = ctx.db.one("SELECT coalesce(max(n), 0) AS top FROM moorings")
        first = int(start["top"]) + 1 if start is not None else 1
        rings = [{"n": n, "ring": f"ring {n}"} for n in range(first, first + count)]
        for ring in rings:
            ctx.db.execute("INSERT INTO moorings VALUES (?, ?)", ring["n"], ring["ring"])
        return rings

    return harbour
