"""The mutant panel: one scenario's grader attacked by mutants of its own solution.

``run_panel`` plays, on one ``Stage``, the reference solution (graded twice),
doing nothing (graded twice), and every mutant ``mutants.py`` and
``conversations.py`` make of the solution, plus the extra writes found by
making them: tools the solution never calls (nor the user's own), filled from
the start's rows, made after the solution's last call on an image of its end
(in a scenario with people, in a replay of the whole script, before the message
the user ends on); the change log says which wrote (collateral), which deleted
or cancelled (destructive), and which only read (used for the benign
``extra-reads``). A mutant is skipped, not run, when the budget cuts it short,
when the world refuses the call it changed, or when it ends as the solution
does: its net state, its answer and what the agent told the user (it is not
wrong). Every wrong episode that passes and every right one that fails is a
``Finding``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from seahaven.declaration.world import World
from seahaven.evaluation.candidates import StartRows, ToolShape, arguments_for, tool_shapes
from seahaven.evaluation.conversations import conversation_mutants, polite_message
from seahaven.evaluation.extras import extra_kind, names_word, probe_start, start_key, tables_of
from seahaven.evaluation.findings import Finding, fix_for
from seahaven.evaluation.mutants import (
    CAPS,
    Mutant,
    SolutionShape,
    answer_mutants,
    benign_extra_reads,
    benign_reordered,
    rng_for,
    script_mutants,
)
from seahaven.evaluation.stage import Outcome, Played, Stage, Workbench
from seahaven.grading.fold import Changes, NetChange
from seahaven.grading.grade import Grade
from seahaven.grading.net_change import MatchesSolution
from seahaven.grading.values import canonical, show
from seahaven.instance.snapshots import Snapshot
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario, ToolCall
from seahaven.scenarios.users import MESSAGE_USER_TOOL

__all__ = ["MAX_EXTRA_PLAYS", "MAX_MUTANTS", "PanelReport", "run_panel"]

# How many writes found by the probe of the start are played after a solution, at most, to find
# its collateral and destructive extras.
MAX_EXTRA_PLAYS = 12
# How many wrong episodes one scenario runs at most, whatever the kinds' caps add up to.
MAX_MUTANTS = 48
# How much later than the run before it the last run of the solution reads the clock, so that
# every value read from a running clock differs between the two and is known to be the clock's.
_CLOCK_MARGIN = 0.002


@dataclass
class PanelReport:
    """What the panel did for one scenario: its grades, counts and findings."""

    solution: Played | None = None
    idle: Played | None = None
    findings: list[Finding] = field(default_factory=list)
    #: Every mutant generated, by name, with what became of it: killed, survived, or skipped.
    verdicts: dict[str, str] = field(default_factory=dict)
    benign: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, Any]:
        """How many mutants were generated, run, killed, survived, skipped (and why)."""
        outcomes = Counter(
            "skipped" if verdict.startswith("skipped") else verdict
            for verdict in self.verdicts.values()
        )
        skipped = Counter(
            verdict.removeprefix("skipped: ")
            for verdict in self.verdicts.values()
            if verdict.startswith("skipped")
        )
        return {
            "generated": len(self.verdicts),
            "run": outcomes["killed"] + outcomes["survived"],
            "killed": outcomes["killed"],
            "survived": outcomes["survived"],
            "skipped": dict(sorted(skipped.items())),
            "benign_run": sum(1 for v in self.benign.values() if not v.startswith("skipped")),
            "benign_broken": sum(1 for v in self.benign.values() if v == "broken"),
        }


def _form(change: NetChange, volatile: set[tuple[str, str, str]]) -> tuple[Any, ...]:
    values = tuple(
        sorted(
            (column, canonical(value))
            for column, value in change.values().items()
            if (change.world, change.table, column) not in volatile
        )
    )
    key = tuple(sorted((column, canonical(value)) for column, value in change.key.items()))
    return (change.world, change.table, change.op, key, values)


def same_state(left: Changes, right: Changes, volatile: set[tuple[str, str, str]]) -> bool:
    """Whether two runs' net changes are the same, the clock's columns left out."""
    return Counter(_form(c, volatile) for c in left) == Counter(_form(c, volatile) for c in right)


def _volatile(first: Changes, second: Changes) -> set[tuple[str, str, str]]:
    """The columns whose values differ between two runs of the same calls (the clock's)."""
    by_row = {change.row: change for change in second}
    found: set[tuple[str, str, str]] = set()
    for change in first:
        other = by_row.get(change.row)
        if other is None:
            continue
        mine, theirs = change.values(), other.values()
        for column in set(mine) | set(theirs):
            if canonical(mine.get(column)) != canonical(theirs.get(column)):
                found.add((change.world, change.table, column))
    return found


class _Panel:
    """One scenario's panel in progress."""

    def __init__(self, scenario: Scenario, stage: Stage, report: PanelReport) -> None:
        self.scenario = scenario
        self.stage = stage
        self.report = report
        self.volatile: set[tuple[str, str, str]] = set()
        self.shape: SolutionShape | None = None
        self.end: Snapshot | None = None
        self.seen: set[tuple[Any, ...]] = set()
        self.ran = 0

    # --- the solution and doing nothing -----------------------------------------------------

    def solution(self) -> bool:
        """Play and grade the solution twice; whether it passes, so mutants mean something."""
        scenario = self.scenario
        steps = [step for step in scenario.solution or () if step.tool != SUBMIT_TOOL]
        submit = [step for step in scenario.solution or () if step.tool == SUBMIT_TOOL]
        answer = str(submit[0].arguments.get("answer")) if submit else None
        played = self.stage.play(steps, answer=answer, submitted=bool(submit))
        self.report.solution = played
        assert played.grade is not None and played.episode is not None
        self.crashes("the solution", played.outcomes)
        steady = self._twice(played, "the solution's episode")
        self.end = self.stage.snapshot()
        grade = played.grade
        if played.cut:
            self._find(
                "solution-fails",
                f"its reference solution makes {len(steps)} calls"
                + (" and submits" if submit else "")
                + f", more than its budget of {scenario.budget} lets an agent make",
                "raise the budget or shorten the solution",
            )
            return False
        if not (grade.passed and grade.score == 1.0):
            failing = "; ".join(f"{check.name}: {check.why}" for check in grade.failed)
            self._find(
                "solution-fails",
                f"its reference solution scores {grade.score:g}, not 1"
                + (f" ({failing})" if failing else ""),
                "fix the solution or the check that fails it",
            )
            return False
        if not steady:
            return False  # a grade that changes by itself says nothing about a mutant
        if self.stage.start.clock.mode in ("running", "wall"):
            # Two more runs, the second waiting longer than the first took in all before its
            # calls: each of its calls reads the clock later than the same call of the first.
            started = time.perf_counter()
            soon = self.stage.play(steps, grade=False)
            pause = time.perf_counter() - started + _CLOCK_MARGIN
            later = self.stage.play(steps, grade=False, pause=pause)
            self.volatile = _volatile(soon.changes, later.changes)
        self.shape = SolutionShape.of(scenario, played)
        self.seen.add(Mutant("solution", "solution", tuple(steps), answer, bool(submit)).script())
        return True

    def idle(self) -> None:
        """Play doing nothing; a pass means the start already satisfies the grader."""
        played = self.stage.play(())
        self.report.idle = played
        assert played.grade is not None
        self._twice(played, "an idle episode")
        grade = played.grade
        self.seen.add(Mutant("do-nothing", "do-nothing", ()).script())
        if grade.passed or grade.score >= 1.0:
            self.report.verdicts["do-nothing"] = "survived"
            self._find(
                "start-passes",
                "doing nothing passes it, so it measures nothing; ask for a change or an answer "
                "(a task whose right move is to refuse asks the agent to submit its refusal)",
                fix_for(Mutant("do-nothing", "do-nothing", ()), played, None, self.scenario.grader),
                mutant="do-nothing",
                played=played,
            )
        else:
            self.report.verdicts["do-nothing"] = "killed"

    def unsolved(self) -> None:
        """With no solution to mutate, an empty answer is the one more wrong episode to try."""
        mutant = Mutant("submit-empty", "submit-empty", (), answer="", submitted=True)
        played = self.stage.play((), answer="", submitted=True)
        assert played.grade is not None
        passed = played.grade.passed
        self.report.verdicts[mutant.name] = "survived" if passed else "killed"
        if passed:
            self._find(
                "survived",
                f"a wrong episode passes with score {played.grade.score:g}",
                fix_for(mutant, played, None, self.scenario.grader),
                mutant=mutant.name,
                played=played,
            )

    def _twice(self, played: Played, what: str) -> bool:
        """Grade an episode again; whether the two grades agree (a finding if not)."""
        assert played.episode is not None and played.grade is not None
        again = self.stage.grade(played.episode)
        steady = again.to_dict() == played.grade.to_dict()
        if not steady:
            self._find(
                "unstable",
                f"grading {what} twice gave two grades",
                "make the grader depend on the episode alone (no clock, randomness or state "
                "of its own)",
                played=played,
            )
        return steady

    # --- mutants ------------------------------------------------------------------------------

    def run(self, mutant: Mutant, played: Played | None = None, prior: int = 0) -> None:
        """Play one mutant (unless ``played`` already holds it) and judge it."""
        script = mutant.script()
        if script in self.seen:
            return  # the same episode as one run before under another name
        self.seen.add(script)
        verdicts = self.report.benign if mutant.benign else self.report.verdicts
        if not mutant.benign and self.ran >= MAX_MUTANTS:
            verdicts[mutant.name] = "skipped: past the panel's cap"
            return
        if played is None:
            played = self.stage.play(mutant.calls, answer=mutant.answer, submitted=mutant.submitted)
        skip = self._skip(mutant, played, prior)
        if skip is not None:
            verdicts[mutant.name] = f"skipped: {skip}"
            return
        assert played.grade is not None and self.shape is not None
        if not mutant.benign:
            self.ran += 1
        passed = played.grade.passed
        if mutant.benign:
            verdicts[mutant.name] = "passed" if passed else "broken"
            if not passed:
                self._find(
                    "broken",
                    f"a right episode ({mutant.note or mutant.kind}) fails: "
                    + _first_failure(played.grade),
                    fix_for(mutant, played, self.shape.played, self.scenario.grader, self.volatile),
                    mutant=mutant.name,
                    played=played,
                )
            return
        verdicts[mutant.name] = "survived" if passed else "killed"
        if passed:
            self._find(
                "survived",
                f"a wrong episode passes with score {played.grade.score:g}"
                + (f" ({mutant.note})" if mutant.note else ""),
                fix_for(mutant, played, self.shape.played, self.scenario.grader, self.volatile),
                mutant=mutant.name,
                played=played,
            )

    def _skip(self, mutant: Mutant, played: Played, prior: int) -> str | None:
        assert self.shape is not None
        if played.cut:
            return "over the budget"
        crashed = [outcome for outcome in played.outcomes if outcome.crashed]
        if crashed:
            self.crashes(f"mutant {mutant.name}", played.outcomes)
            return "the world crashed"
        if (
            mutant.kind == "change-arg"
            and mutant.target is not None
            and played.outcomes[mutant.target].refused is not None
        ):
            return "refused by the world"
        if mutant.kind == "extra-reads":
            added = [
                o
                for o in played.outcomes
                if o.wrote and o.tool != MESSAGE_USER_TOOL and not _in_solution(o, self.shape)
            ]
            if added:
                return "a call added as a read wrote"
        if mutant.kind == "reordered" and not self._independent(played):
            return "the writes are not independent"
        # Acting before asking ends as the solution does: only the order is wrong.
        if not mutant.benign and mutant.kind != "write-before-asking" and self._same_end(played):
            return "the same end as the solution"
        return None

    def _same_end(self, played: Played) -> bool:
        """Whether an episode ends as the solution's: its state, answer and conversation."""
        assert self.shape is not None
        solution = self.shape.played
        return (
            played.submitted == solution.submitted
            and played.answer == solution.answer
            and played.told() == solution.told()
            and (played.ended_by == "user") == (solution.ended_by == "user")
            and same_state(played.changes, solution.changes, self.volatile)
        )

    def _independent(self, played: Played) -> bool:
        """Whether two writes swapped are still the solution's: each call refused or not as
        there, the same tables changed the same ways, and, where the grader compares the end
        with the solution's (``matches_solution``), the same end as that comparison sees it.

        Two writes that each mint the next id (two bookings, two notes) end with their ids
        swapped: a right episode for a grader that names the rows it wants, and a wrong one
        for a grader that holds the episode to the solution's exact end, as tau2-bench's
        database hash does. Only the first is claimed right.
        """
        assert self.shape is not None
        solution = self.shape.played
        refusals = sorted(o.refused is None for o in solution.outcomes)
        if sorted(o.refused is None for o in played.outcomes) != refusals:
            return False
        kinds = Counter((c.world, c.table, c.op) for c in solution.changes)
        if kinds != Counter((c.world, c.table, c.op) for c in played.changes):
            return False
        return all(
            part.same(solution.changes, played.changes)
            for part in self.scenario.grader.walk()
            if isinstance(part, MatchesSolution)
        )

    # --- extras: writes the solution never makes ---------------------------------------------

    def extras(self, rows: StartRows, tools: dict[str, ToolShape]) -> list[ToolCall]:
        """Run the collateral and destructive extras; return the reads the probe found.

        The probe of the start (``extras.py``: every tool made once) is kept by
        the bench for every scenario with the same start. Its writes are played
        after the solution, those touching a table the solution changes first,
        at most ``MAX_EXTRA_PLAYS`` of them, one extra per tool.
        """
        assert self.shape is not None
        shape = self.shape
        stage = self.stage
        start = self.scenario.start
        probe = stage.bench.remember(
            stage.world,
            ("probe", start.model_dump_json(exclude={"seed"})),
            lambda: probe_start(stage.world, start, tools, stage.bench),
        )
        # The user's own tools are never the agent's: they are no extra and no read of its.
        theirs = set(self.scenario.user.tools) if self.scenario.user is not None else set()
        reads = [read for read in probe.reads if read.tool not in theirs]
        if len(shape.calls) >= self.scenario.budget:
            return reads
        named = self.named_text()
        solution_rows = {change.row for change in shape.played.changes}
        avoid = {value for value in rows.where if names_word(named, value)}
        today = stage.start.clock.iso()[:10]
        rng = rng_for(self.scenario, "extras")
        found: dict[str, list[str]] = {"collateral": [], "destructive": []}
        plays = 0
        for probed in probe.ranked(tables_of(shape.played.changes)):
            if probed.tool in theirs:
                continue
            tool = tools[probed.tool]
            guessed = "destructive" if (tool.destructive or probed.deletes) else "collateral"
            if plays >= MAX_EXTRA_PLAYS or all(len(found[k]) >= CAPS[k] for k in found):
                break
            if len(found[guessed]) >= CAPS[guessed]:
                continue
            for arguments in arguments_for(tool, rows, rng, avoid=avoid, today=today):
                if plays >= MAX_EXTRA_PLAYS:
                    break
                plays += 1
                call = ToolCall(tool=tool.name, arguments=arguments)
                played, added = self._after_solution(call)
                kind = None if added is None else extra_kind(tool, added, solution_rows, named)
                if kind is None or len(found[kind]) >= CAPS[kind]:
                    continue  # refused there, a read there, or not unrelated: not an extra
                found[kind].append(tool.name)
                mutant = shape.mutant(
                    f"{kind}:{tool.name}",
                    kind,
                    shape.with_added([call]),
                    note=f"{tool.name}({_arguments(arguments)}) added",
                )
                self.run(mutant, played)
                break  # one extra of a tool
        return reads

    def _after_solution(self, call: ToolCall) -> tuple[Played, Outcome | None]:
        """The solution, then ``call``, and the call's outcome (``None`` if it was not made).

        Played on from the image of the solution's end when there is one; else
        (a start that cannot be snapshotted, a scenario with people) the whole
        script again, ``call`` before the message the user ended the solution on.
        """
        shape = self.shape
        assert shape is not None
        if self.end is None:
            played = self.stage.play(
                shape.with_added([call]), answer=shape.answer, submitted=shape.submitted
            )
            made = played.outcomes[shape.tail] if len(played.outcomes) > shape.tail else None
            return played, made
        played = self.stage.play(
            [call],
            answer=shape.answer,
            submitted=shape.submitted,
            after=self.end,
            made=len(shape.calls),
        )
        played.outcomes[:0] = shape.played.outcomes
        return played, played.outcomes[-1] if len(played.outcomes) > len(shape.calls) else None

    def named_text(self) -> str:
        """What the task names: its instructions and grader, folded, to keep extras off it."""
        spec = show(self.scenario.grader.spec(), 1_000_000)
        return (self.scenario.instructions + "\n" + spec).casefold()

    # --- findings -----------------------------------------------------------------------------

    def crashes(self, what: str, outcomes: Iterable[Outcome]) -> None:
        for outcome in outcomes:
            if outcome.crashed:
                self._find(
                    "world-bug",
                    f"{what}'s call {outcome.tool}({_arguments(outcome.arguments)}) hit a bug in "
                    f"the world: {outcome.crashed}",
                    "make the tool refuse bad input with a ToolError",
                )

    def _find(
        self,
        kind: str,
        message: str,
        fix: str,
        *,
        mutant: str | None = None,
        played: Played | None = None,
    ) -> None:
        self.report.findings.append(
            Finding(
                kind=kind,
                scenario=self.scenario.id,
                message=message,
                fix=fix,
                mutant=mutant,
                calls=played.calls() if played is not None else [],
                answer=played.answer if played is not None else None,
                submitted=played.submitted if played is not None else False,
                grade=played.grade if played is not None else None,
            )
        )


def _tools(calls: Iterable[ToolCall]) -> set[str]:
    return {call.tool for call in calls}


def _in_solution(outcome: Outcome, shape: SolutionShape) -> bool:
    return any(
        outcome.tool == step.tool and outcome.arguments == dict(step.arguments)
        for index, step in enumerate(shape.calls)
        if index in shape.writes
    )


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{name}={show(value, 40)}" for name, value in arguments.items())


def _first_failure(grade: Grade) -> str:
    failed = grade.failed
    if not failed:
        return f"it scores {grade.score:g}"
    return f"{failed[0].name}: {failed[0].why}"


def run_panel(scenario: Scenario, world: World, seed: int | None, bench: Workbench) -> PanelReport:
    """Run the whole panel for one scenario; ``report.findings`` says what it found."""
    report = PanelReport()
    with Stage(scenario, world, seed, bench) as stage:
        panel = _Panel(scenario, stage, report)
        solved = scenario.solution is not None and panel.solution()
        panel.idle()
        if not solved:
            if scenario.solution is None:
                panel.unsolved()
            return report
        assert panel.shape is not None
        shape = panel.shape
        key = start_key(stage.image) if stage.image is not None else scenario.hash
        rows = bench.remember(world, ("rows", key), lambda: StartRows.read(stage.start))
        tools = bench.remember(world, ("tools",), lambda: tool_shapes(stage.start))
        for mutant in answer_mutants(scenario, shape, rows):
            if mutant.kind != "do-nothing":
                panel.run(mutant)
        for mutant in script_mutants(scenario, shape, rows, tools):
            panel.run(mutant)
        for mutant in conversation_mutants(scenario, shape):
            panel.run(mutant)
        reads = [shape.calls[index] for index in shape.reads[:1]]
        reads.extend(panel.extras(rows, tools))
        # One read of each tool: the solution's own first, then those the extras turned up.
        reads = [read for index, read in enumerate(reads) if read.tool not in _tools(reads[:index])]
        extra = benign_extra_reads(scenario, shape, reads[:3])
        if extra is not None:
            panel.run(extra)
        for variant in list(benign_reordered(shape))[: CAPS["reordered"]]:
            panel.run(variant)
        polite, why_not = polite_message(scenario, shape)
        if polite is not None:
            panel.run(polite)
        elif why_not is not None:
            report.benign["polite-message"] = f"skipped: {why_not}"
    return report
