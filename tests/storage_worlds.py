"""A small composite world whose tool says where its store lives, for the storage defaults' tests.

``depot`` keeps boxes and adds a ``till`` world under the prefix ``till_``, so an
instance on disk has two files (``state.sqlite`` and ``state.till.sqlite``). Its
tool ``where_stored`` answers ``"disk"`` or ``"memory"`` from the store's own
connection, which is how a runner that never hands out its instance (a command,
a server) is seen from outside: through a tool's result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import seahaven
from seahaven import grading
from seahaven.scenarios import Scenario, ScenarioSet

BOXES = "CREATE TABLE boxes (id TEXT PRIMARY KEY, n INTEGER NOT NULL) STRICT;"
SALES = "CREATE TABLE sales (id TEXT PRIMARY KEY, n INTEGER NOT NULL) STRICT;"


def make_depot(work_dir: Path | None = None) -> seahaven.World:
    """A fresh depot world with its till added; ``work_dir`` is where its instances' files go."""
    till = seahaven.World(
        name="till", version="1.0.0", schema=SALES, state_format="seahaven.state/1"
    )

    @till.tool
    def sell(ctx: seahaven.Ctx, id: str, n: int) -> dict[str, Any]:
        """Record a sale."""
        ctx.db.execute("INSERT INTO sales (id, n) VALUES (?, ?)", id, n)
        return {"id": id, "n": n}

    depot = seahaven.World(
        name="depot",
        version="1.0.0",
        schema=BOXES,
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )
    depot.add_world(till, tool_prefix="till_")

    @depot.tool
    def put(ctx: seahaven.Ctx, id: str, n: int) -> dict[str, Any]:
        """Put a box on the shelf."""
        ctx.db.execute("INSERT INTO boxes (id, n) VALUES (?, ?)", id, n)
        return {"id": id, "n": n}

    @depot.tool
    def where_stored(ctx: seahaven.Ctx) -> str:
        """Where this instance keeps its stores: disk (a file) or memory."""
        # An in-memory database's connection names no file.
        return "disk" if ctx.db.conn.filename else "memory"

    return depot


world = make_depot()
"""The depot, its instances in the default place, for commands given ``storage_worlds:world``."""


def _reads_start_and_solution(episode: grading.Episode) -> float:
    # Reading both makes the trial open the start again and replay the solution afresh.
    start = episode.start.one("SELECT count(*) AS n FROM boxes")
    solution = episode.solution
    return 1.0 if start is not None and solution is not None else 0.0


def where_scenario(depot: seahaven.World) -> Scenario:
    """Put a box and say where the stores are; graded by reading the start and the solution."""
    return Scenario(
        id="where",
        world=depot,
        instructions="Put box b1 on the shelf, then submit where the stores are kept.",
        grader=grading.python(_reads_start_and_solution),
        solution=[{"tool": "put", "arguments": {"id": "b1", "n": 1}}],
        budget=5,
    )


def where_pack(depot: seahaven.World) -> ScenarioSet:
    """The one scenario as a pack."""
    return ScenarioSet("depot", "1.0.0", [where_scenario(depot)])
