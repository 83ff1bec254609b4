"""A small world and pack for the in-process tests: a shelf of jars, and a tool that breaks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

shelf = seahaven.World(
    name="jar-shelf",
    version="1.0.0",
    schema=(
        "CREATE TABLE jars (id TEXT PRIMARY KEY, fruit TEXT NOT NULL, full INTEGER NOT NULL) "
        "STRICT;"
    ),
    state_format="seahaven.state/1",
)


class Label(BaseModel):
    """A jar's label."""

    model_config = ConfigDict(strict=True)
    fruit: str
    note: str = ""


@shelf.tool
def fill(ctx: seahaven.Ctx, jar_id: str) -> dict[str, object]:
    """Fill a jar."""
    changed = ctx.db.execute("UPDATE jars SET full = 1 WHERE id = ?", jar_id)
    if changed.rowcount == 0:
        raise seahaven.ToolError("NOT_FOUND", f"there is no jar {jar_id}")
    return {"id": jar_id, "full": True}


@shelf.tool
def relabel(ctx: seahaven.Ctx, jar_id: str, label: Label) -> None:
    """Put a new label on a jar."""
    ctx.db.execute("UPDATE jars SET fruit = ? WHERE id = ?", label.fruit, jar_id)


@shelf.tool
def wobble(ctx: seahaven.Ctx) -> None:
    """Wobble the shelf (it breaks: a bug in the world)."""
    raise RuntimeError("the shelf fell over")


START = {
    "setup_sql": "INSERT INTO jars VALUES ('j1', 'plum', 0), ('j2', 'fig', 0)",
    "clock_mode": "tick",
}

fill_plum = Scenario(
    id="fill-plum",
    world=shelf,
    instructions="Fill the plum jar, j1, and nothing else.",
    start=START,
    grader={
        "all_of": [
            {"changed": {"table": "jars", "where": {"id": "j1"}, "to": {"full": 1}}},
            {"nothing_else_changed": {"allow": ["jars"]}},
            {"unchanged": {"table": "jars", "where": {"id": "j2"}}},
        ]
    },
    solution=[{"tool": "fill", "arguments": {"jar_id": "j1"}}],
    budget=3,
)
count_jars = Scenario(
    id="count-jars",
    world=shelf,
    instructions="How many jars are on the shelf? Reply with the number.",
    start=START,
    grader={"all_of": [{"answer": {"number": 2}}, {"nothing_else_changed": {}}]},
    solution=[{"tool": "submit", "arguments": {"answer": "2"}}],
    budget=3,
)
shelf_pack = ScenarioSet(
    "jar-shelf",
    "1.0.0",
    [fill_plum, count_jars],
    splits={"train": ["fill-plum"], "test": ["count-jars"]},
)
