"""``seahaven scenarios check``: is every scenario of a pack a task worth grading against?

For each scenario it checks what can be read without running anything (the
world is found, the fixture exists, every tool the solution and the grader name
is on the surface, every store, table and column the grader names is in the
schema) and then attacks its grader with the mutant panel (``panel.py``): the
reference solution must score 1 and pass, doing nothing must fail, grading one
episode twice must give the same grade, every wrong mutant of the solution must
fail and every right variant pass. A scenario with no solution is a failure
unless the caller allows unsolved scenarios, because nothing shows it can be
solved. A finding the scenario ``accept``s is reported as accepted, not as a
problem; an ``accept`` that names no finding is one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from seahaven.declaration.composition import DeclaredWorld
from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.findings import Finding
from seahaven.evaluation.mutants import kind_of
from seahaven.evaluation.panel import run_panel
from seahaven.evaluation.run import trial_seed
from seahaven.evaluation.stage import Workbench
from seahaven.grading import Reference
from seahaven.grading.grade import Grade
from seahaven.grading.net_change import MatchesSolution
from seahaven.scenarios.checks import agent_surface, not_served, people_problems
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.pack import ScenarioSet

__all__ = ["ScenarioReport", "check_pack", "check_scenario", "surviving_kinds"]


@dataclass
class ScenarioReport:
    """What checking one scenario found: its problems, its findings, and the grades it ran.

    ``problems`` is every problem as a line of text: what is wrong with the
    scenario as written (a tool that does not exist, no split) and each finding
    the scenario does not accept. ``findings`` holds the panel's findings as
    data, the accepted ones too (``finding.accepted`` is the reason).
    """

    scenario: str
    problems: list[str] = field(default_factory=list)
    solution_grade: Grade | None = None
    idle_grade: Grade | None = None
    findings: list[Finding] = field(default_factory=list)
    #: How many mutants were generated, run, killed, survived and skipped (and why).
    mutants: dict[str, Any] = field(default_factory=dict)
    #: Each mutant and benign variant by name: killed, survived, passed, broken, skipped: why.
    verdicts: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the scenario passed every check (accepted findings do not count)."""
        return not self.problems

    @property
    def accepted(self) -> list[Finding]:
        """The findings the scenario accepts, each with its reason."""
        return [finding for finding in self.findings if finding.accepted]

    def to_dict(self) -> dict[str, Any]:
        """The report as ``scenarios check --json`` prints it."""
        return {
            "scenario": self.scenario,
            "ok": self.ok,
            "problems": list(self.problems),
            "findings": [finding.to_dict() for finding in self.findings if not finding.accepted],
            "accepted": [finding.to_dict() for finding in self.accepted],
            "mutants": dict(self.mutants),
            "verdicts": dict(self.verdicts),
            "solution_score": None if self.solution_grade is None else self.solution_grade.score,
            "idle_score": None if self.idle_grade is None else self.idle_grade.score,
            "seconds": round(self.seconds, 4),
        }


def _static_problems(scenario: Scenario, world: World) -> Iterator[str]:
    composition = world.composition()
    tools = {entry.name for entry in composition.surface} | {SUBMIT_TOOL}
    stores = {node.path: node.world for node in composition.nodes}
    yield from people_problems(scenario, tools)
    # What the agent may call: the user's own tools are not, and message_user is, with a user.
    agent_tools = agent_surface(scenario, tools)
    fixture = scenario.start.fixture
    if fixture is not None:
        known = {item.id for item in world.fixtures()}
        if fixture not in known:
            yield (
                f"start.fixture {fixture!r} is not a fixture of world {world.name!r} "
                f"(it has {', '.join(sorted(known)) or 'none'})"
            )
    for index, step in enumerate(scenario.solution or ()):
        if step.tool not in agent_tools:
            why = not_served(scenario, step.tool, world.name)
            yield f"solution[{index}] calls {step.tool!r}, {why}"
    if scenario.solution is None and any(
        isinstance(grader, MatchesSolution) for grader in scenario.grader.walk()
    ):
        yield "its grader compares with the reference solution (matches_solution), and it has none"
    for grader in scenario.grader.walk():
        for reference in grader.references():
            yield from _reference_problems(reference, tools, stores, world.name)


def _reference_problems(
    reference: Reference, tools: set[str], stores: dict[str, DeclaredWorld], world: str
) -> Iterator[str]:
    if reference.tool is not None and reference.tool not in tools:
        yield f"the grader names tool {reference.tool!r}, which world {world!r} does not serve"
    if reference.table is None:
        return
    candidates = (
        {reference.store: stores[reference.store]}
        if reference.store in stores
        else stores
        if reference.store is None
        else {}
    )
    if not candidates:
        yield (
            f"the grader names store {reference.store!r}; world {world!r} has {', '.join(stores)}"
        )
        return
    holding = {
        path: node.schema_info.tables[reference.table]
        for path, node in candidates.items()
        if reference.table in node.schema_info.tables
    }
    if not holding:
        where = f"store {reference.store!r}" if reference.store else "any store"
        yield f"the grader names table {reference.table!r}, which {where} does not have"
        return
    for column in reference.columns:
        if not any(column in table.columns for table in holding.values()):
            yield f"the grader names column {reference.table}.{column}, which does not exist"


def _apply_accepts(scenario: Scenario, report: ScenarioReport) -> None:
    """Mark the findings the scenario accepts; an accept that names no survivor is a finding."""
    used: set[int] = set()
    for finding in report.findings:
        if finding.mutant is None:
            continue
        for index, accept in enumerate(scenario.accept):
            if accept.matches(finding.mutant):
                finding.accepted = accept.reason
                used.add(index)
                break
    for index, accept in enumerate(scenario.accept):
        if index not in used:
            report.findings.append(
                Finding(
                    kind="stale-accept",
                    scenario=scenario.id,
                    message=(
                        f"accept names {accept.mutant!r}, which matches no mutant the grader "
                        "passes (or no right episode it fails)"
                    ),
                    fix="drop that accept, so it cannot hide a later survivor",
                )
            )


def check_scenario(
    scenario: Scenario,
    *,
    pack: str = "",
    world: World | None = None,
    allow_unsolved: bool = False,
    bench: Workbench | None = None,
) -> ScenarioReport:
    """Check one scenario, its grader attacked by the mutant panel; the report lists each problem.

    ``bench`` keeps idle instances between scenarios (``check_pack`` shares one);
    without it, one is made for this scenario and closed after.
    """
    started = time.perf_counter()
    report = ScenarioReport(scenario.id)
    try:
        resolved = world if world is not None else scenario.resolve_world()
    except WorldBug as error:
        report.problems.append(str(error))
        return report
    report.problems.extend(dict.fromkeys(_static_problems(scenario, resolved)))
    if report.problems:
        return report
    seed = trial_seed(pack, scenario.id, 0)
    if scenario.solution is None and not allow_unsolved:
        report.problems.append(
            "it has no reference solution, so nothing shows it can be solved; add one "
            "(or pass --allow-unsolved)"
        )
    owned = bench is None
    workbench = Workbench() if bench is None else bench
    try:
        panel = run_panel(scenario, resolved, seed, workbench)
    except WorldBug as error:
        report.problems.append(f"playing it failed: {error}")
        return report
    finally:
        if owned:
            workbench.close()
    report.solution_grade = panel.solution.grade if panel.solution is not None else None
    report.idle_grade = panel.idle.grade if panel.idle is not None else None
    report.findings = panel.findings
    report.mutants = panel.counts()
    report.verdicts = {**panel.verdicts, **panel.benign}
    _apply_accepts(scenario, report)
    report.problems.extend(finding.line() for finding in report.findings if not finding.accepted)
    report.seconds = time.perf_counter() - started
    return report


def check_pack(
    pack: ScenarioSet,
    *,
    allow_unsolved: bool = False,
    progress: Callable[[ScenarioReport], None] | None = None,
) -> list[ScenarioReport]:
    """Check every scenario of a pack, in order; with splits, each must be in one."""
    worlds: dict[str, World] = {}
    reports = []
    with Workbench() as bench:
        for scenario in pack:
            reports.append(
                _checked_in_pack(pack, scenario, worlds, bench, allow_unsolved=allow_unsolved)
            )
            if progress is not None:
                progress(reports[-1])
    return reports


def _checked_in_pack(
    pack: ScenarioSet,
    scenario: Scenario,
    worlds: dict[str, World],
    bench: Workbench,
    *,
    allow_unsolved: bool,
) -> ScenarioReport:
    try:
        name = scenario.world_name
        if name not in worlds:
            worlds[name] = scenario.resolve_world()
        world: World | None = worlds[name]
    except WorldBug:
        world = None
    report = check_scenario(
        scenario, pack=pack.name, world=world, allow_unsolved=allow_unsolved, bench=bench
    )
    report.problems.extend(pack.source_problems.get(scenario.id, ()))
    if pack.splits and not pack.split_of(scenario.id):
        report.problems.append(
            f"it is in none of the pack's splits ({', '.join(pack.splits)}); name it in one"
        )
    return report


def surviving_kinds(
    pack: ScenarioSet, acceptable: Collection[str]
) -> tuple[dict[str, list[str]], list[str]]:
    """Check a pack written without accepts: the kinds each scenario would accept, and the rest.

    For a pack whose graders are another benchmark's reward, some wrong episodes pass on
    purpose, and which ones depends on what the panel plays; its generator runs this to
    find them. The first value maps each scenario to the kinds of its surviving mutants,
    in the order found, among ``acceptable``; the second is every other finding and
    problem, a line each, which the generator must not accept.
    """
    found: dict[str, list[str]] = {}
    problems: list[str] = []
    for report in check_pack(pack):
        kinds: list[str] = []
        for finding in report.findings:
            survived = finding.kind == "survived" and finding.mutant is not None
            kind = kind_of(finding.mutant) if survived and finding.mutant else None
            if kind is None or kind not in acceptable:
                problems.append(f"{report.scenario}: {finding.line()}")
            elif kind not in kinds:
                kinds.append(kind)
        lines = {finding.line() for finding in report.findings}
        problems.extend(
            f"{report.scenario}: {problem}" for problem in report.problems if problem not in lines
        )
        if kinds:
            found[report.scenario] = kinds
    return found, problems
