"""A small world made for the serving tests: one table, and a tool for every way a call can end."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import seahaven


class NoSuchNote(seahaven.ToolError):
    """The note does not exist."""

    def __init__(self, note_id: str) -> None:
        super().__init__("NOT_FOUND", f"no note {note_id}", {"kind": "note", "id": note_id})


def make_beacon(work_dir: Path | None = None) -> seahaven.World:
    """A fresh beacon world, its instances under ``work_dir`` when given."""
    beacon = seahaven.World(
        name="beacon",
        version="2.1.0",
        description="A lighthouse log for the serving tests.",
        schema="""
            CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL, keeper TEXT) STRICT;
        """,
        state_format="seahaven.state/1",
        default_clock_mode="tick",
        work_dir=work_dir,
    )

    @beacon.instance_startup
    def remember_keeper(ctx: seahaven.Ctx, *, keeper: str = "nobody") -> None:
        """Write who keeps the light tonight (a startup keyword)."""
        ctx.db.execute("INSERT INTO notes VALUES ('keeper', ?, ?)", keeper, keeper)

    @beacon.tool
    def add_note(ctx: seahaven.Ctx, text: str) -> dict[str, Any]:
        """Write a note; returns it with its id."""
        note = {"id": ctx.ids.uuid(), "text": text}
        ctx.db.execute("INSERT INTO notes (id, text) VALUES (?, ?)", note["id"], text)
        return note

    @beacon.tool
    def get_note(ctx: seahaven.Ctx, note_id: str) -> dict[str, Any]:
        """Read one note."""
        row = ctx.db.one("SELECT id, text, keeper FROM notes WHERE id = ?", note_id)
        if row is None:
            raise NoSuchNote(note_id)
        return {"id": row["id"], "text": row["text"], "keeper": row["keeper"]}

    @beacon.tool
    def broken(ctx: seahaven.Ctx) -> None:
        """Fails the way a world with a bug does."""
        raise seahaven.WorldBug("the beacon's author forgot the lamp (secret wording)")

    @beacon.tool
    def crash(ctx: seahaven.Ctx) -> int:
        """Fails with an exception no one planned for."""
        return 1 // 0

    @beacon.tool
    def not_a_number(ctx: seahaven.Ctx) -> float:
        """Returns a float JSON cannot carry."""
        return float("nan")

    @beacon.tool
    def wait(ctx: seahaven.Ctx, seconds: float) -> str:
        """Takes ``seconds`` of wall time."""
        time.sleep(seconds)
        return "waited"

    return beacon
