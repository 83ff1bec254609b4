"""The committed generator of every ProjectTracker fixture, and the only way one is made.

Each fixture is filled into a blank instance and frozen at ``NOW`` on a fixed clock with a fixed
seed, so a rebuild writes the same state files (only the sidecar's ``created_at``, a wall-clock
stamp by design, differs). Every fixture is frozen from blank rather than forked: a script that
builds each from nothing is simpler to read than a chain.

The history is a bulk load inside ``inst.bulk()``: a fixed clock would stamp every row a tool
writes with the one instant ``NOW``, and a tracker whose whole past happened at nine this
morning would not read like one. So the script replays each issue's life (created, assigned,
moved through its statuses, commented on, closed, sometimes reopened or reassigned) at
instants it computes, all before ``NOW``, following the rules the tools follow: a key from
the team's counter, which is left where the tools would have left it; no assignee on a closed
issue, the drop recorded right after the status change; assignees who are members of the
issue's team; the audit trail written through the package's own ``_events.record``.

The script is in modules of its own: ``tracker_model`` (what a fixture is made of),
``tracker_writing`` (the replay, and ``NOW`` and ``SEED``), and one per fixture with
content, ``small_startup`` and ``agency``.

Rebuild every fixture from the world's directory (or name the ones to rebuild)::

    python fixtures_src/generate.py [empty] [small_startup] [agency]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import projecttracker

import seahaven
import seahaven.toolkit

if __package__:
    from .agency import agency
    from .small_startup import small_startup
    from .tracker_writing import NOW, SEED
else:  # run as a script (python fixtures_src/generate.py): this directory is on the path
    from agency import agency
    from small_startup import small_startup
    from tracker_writing import NOW, SEED

PACKAGE_FIXTURES = Path(projecttracker.__file__).resolve().parent / "fixtures"


# --- empty ---------------------------------------------------------------------------------------


def empty(inst: seahaven.Instance) -> None:
    """Nothing: the schema and no rows."""


# --- building ----------------------------------------------------------------------------------

FIXTURES: dict[str, tuple[Callable[[seahaven.Instance], None], str]] = {
    "empty": (
        empty,
        "ProjectTracker's schema with no rows: no people, no teams, no issues. Writes need an "
        "actor_id until create_user(role='admin') makes the first admin, who becomes the "
        "default viewer. Start here for setup-flow evals: creating a workspace, its teams and "
        "its first issues.",
    ),
    "small_startup": (
        small_startup,
        "Tally, a three-person startup making invoicing software: one engineering team (ENG), "
        "three people (Maya Chen, admin and the default viewer, u_1; Jonas Berg, u_2; Priya "
        "Raman, u_3), two active projects (Public beta, Recurring invoices), forty issues "
        "ENG-1 to ENG-40 from April and May 2026 with their audit trail, sixty comments and "
        "six labels. Good for reading, triage, transitions and small reports.",
    ),
    "agency": (
        agency,
        "Northlight, a twelve-person digital agency: three teams (ENG, DES, CS), nine projects "
        "for clients and for itself (one finished, one planned), six hundred issues over six "
        "months (December 2025 to May 2026), fifteen hundred comments, thirty labels and an "
        "audit trail full of reassignments and transitions; some closed issues are archived. "
        "Elena Vasquez (u_1, admin, in every team) is the default viewer; u_12 is a viewer "
        "account. Good for cross-team queries, reporting, bulk triage, pagination and search.",
    ),
}


def build(fixture_id: str, *, world: seahaven.World = projecttracker.world) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance at ``NOW``."""
    builder, description = FIXTURES[fixture_id]
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        builder(inst)
        return inst.freeze(fixture_id, description)


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (every one when none is named) inside the package."""
    return seahaven.toolkit.rebuild_fixtures(
        projecttracker.world, build, list(FIXTURES), argv, into=PACKAGE_FIXTURES
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
