"""``seahaven scenarios check``: is every scenario of a pack a task worth grading against?

For each scenario it checks what can be read without running anything (the
world is found, the fixture exists, every tool the solution and the grader name
is on the surface, every store, table and column the grader names is in the
schema) and then runs it: the reference solution must score 1 and pass, doing
nothing must score below 1 and fail, and grading one episode twice must give
the same grade. A scenario with no solution is a failure unless the caller
allows unsolved scenarios, because nothing shows it can be solved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from seahaven.errors import WorldBug
from seahaven.evaluation.policies import LocalSession, Policy, idle_policy, solution_policy
from seahaven.evaluation.run import trial_seed
from seahaven.grading.grade import Grade
from seahaven.grading.graders import MatchesSolution, Reference
from seahaven.scenarios.checks import agent_surface, not_served, people_problems
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.trial import Trial
from seahaven.world import World

__all__ = ["ScenarioReport", "check_pack", "check_scenario"]


@dataclass
class ScenarioReport:
    """What checking one scenario found: its problems, and the two grades it ran."""

    scenario: str
    problems: list[str] = field(default_factory=list)
    solution_grade: Grade | None = None
    idle_grade: Grade | None = None

    @property
    def ok(self) -> bool:
        """Whether the scenario passed every check."""
        return not self.problems


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
    reference: Reference, tools: set[str], stores: dict[str, World], world: str
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


def _play(scenario: Scenario, world: World, seed: int, policy: Policy) -> tuple[Grade, Grade]:
    """Grade one episode twice: the grade, and the second reading of it."""
    with Trial(scenario, seed=seed, world=world) as trial:
        policy(LocalSession(trial))
        first = trial.finish()
        again = scenario.grader.grade(trial.episode())
    return first, again


def check_scenario(
    scenario: Scenario,
    *,
    pack: str = "",
    world: World | None = None,
    allow_unsolved: bool = False,
) -> ScenarioReport:
    """Check one scenario; its report lists every problem found."""
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
    if scenario.solution is None:
        if not allow_unsolved:
            report.problems.append(
                "it has no reference solution, so nothing shows it can be solved; add one "
                "(or pass --allow-unsolved)"
            )
    else:
        try:
            solved, again = _play(scenario, resolved, seed, solution_policy)
        except WorldBug as error:
            report.problems.append(f"playing its solution failed: {error}")
            return report
        report.solution_grade = solved
        if not (solved.passed and solved.score == 1.0):
            failing = "; ".join(f"{check.name}: {check.why}" for check in solved.failed)
            report.problems.append(
                f"its reference solution scores {solved.score:g}, not 1"
                + (f" ({failing})" if failing else "")
            )
        if again.to_dict() != solved.to_dict():
            report.problems.append("grading the solution's episode twice gave two grades")
    try:
        idle, _ = _play(scenario, resolved, seed, idle_policy)
    except WorldBug as error:
        report.problems.append(f"grading an episode that does nothing failed: {error}")
        return report
    report.idle_grade = idle
    if idle.passed or idle.score >= 1.0:
        report.problems.append(
            "doing nothing passes it, so it measures nothing; ask for a change or an answer "
            "(a task whose right move is to refuse asks the agent to submit its refusal)"
        )
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
    for scenario in pack:
        try:
            name = scenario.world_name
            if name not in worlds:
                worlds[name] = scenario.resolve_world()
            world: World | None = worlds[name]
        except WorldBug:
            world = None
        report = check_scenario(
            scenario, pack=pack.name, world=world, allow_unsolved=allow_unsolved
        )
        report.problems.extend(pack.source_problems.get(scenario.id, ()))
        if pack.splits and not pack.split_of(scenario.id):
            report.problems.append(
                f"it is in none of the pack's splits ({', '.join(pack.splits)}); name it in one"
            )
        reports.append(report)
        if progress is not None:
            progress(report)
    return reports
