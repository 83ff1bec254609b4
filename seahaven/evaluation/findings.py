"""What ``scenarios check`` reports: findings about a scenario's grader, each with its fix.

A finding is a wrong episode the grader passes (a mutant that **survived**), a
right one it fails (a **broken** benign variant), a start that already passes,
a grade that changes between two readings of one episode, a reference solution
that fails, a mutant on which the world itself crashed, and an ``accept`` that
names no survivor. Each says, in one sentence, which check would catch it; the
sentence is worked out from what the mutant changed that the solution did not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seahaven.evaluation.mutants import Mutant
from seahaven.evaluation.stage import Played
from seahaven.grading import Grader
from seahaven.grading.fold import NetChange
from seahaven.grading.grade import Check, Grade
from seahaven.grading.net_change import MatchesSolution, NothingElseChanged
from seahaven.grading.refusal import Refused
from seahaven.grading.values import canonical, show
from seahaven.scenarios.users import MESSAGE_USER_TOOL

__all__ = ["FINDING_KINDS", "Finding", "fix_for"]

# survived: a wrong episode passed. broken: a right one failed. start-passes: doing nothing
# passed. unstable: two readings of one episode gave two grades. solution-fails: the reference
# solution did not score 1. world-bug: a call of the panel hit a bug in the world (not a
# refusal). stale-accept: an accept names no surviving mutant.
FINDING_KINDS = (
    "survived",
    "broken",
    "start-passes",
    "unstable",
    "solution-fails",
    "world-bug",
    "stale-accept",
)


@dataclass
class Finding:
    """One thing wrong with a scenario's grader: what, on which episode, and the fix."""

    kind: str
    scenario: str
    message: str
    fix: str = ""
    mutant: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None
    submitted: bool = False
    grade: Grade | None = None
    #: Why the scenario accepts this finding (its ``accept`` entry), or ``None``.
    accepted: str | None = None

    def line(self) -> str:
        """The finding in one line: the mutant, what happened, and the fix."""
        named = f"{self.mutant}: " if self.mutant else ""
        return f"{named}{self.message}" + (f"; fix: {self.fix}" if self.fix else "")

    def to_dict(self) -> dict[str, Any]:
        """The finding as ``--json`` prints it."""
        return {
            "kind": self.kind,
            "scenario": self.scenario,
            "mutant": self.mutant,
            "message": self.message,
            "fix": self.fix,
            "calls": self.calls,
            "submitted": self.submitted,
            "answer": self.answer,
            "grade": None if self.grade is None else self.grade.to_dict(),
            "accepted": self.accepted,
        }


def _describe(change: NetChange) -> str:
    if change.op == "update":
        return f"{change.where} update of {', '.join(change.after or {})}"
    return f"{change.where} {change.op}"


def _table(change: NetChange) -> str:
    return change.table if change.world == "main" else f"{change.world}.{change.table}"


def _check_spec(change: NetChange) -> str:
    """A check of one change as YAML writes it: the row's key, its new values, its op."""
    store = "" if change.world == "main" else f", store: {change.world}"
    if change.op == "delete":
        where = ", ".join(f"{k}: {_yaml(v)}" for k, v in change.key.items())
        return f"deleted {{table: {change.table}{store}, where: {{{where}}}}}"
    values = dict(change.after or {})
    shown = [f"{k}: {_yaml(v)}" for k, v in list(values.items())[:2] if k not in change.key]
    to = f", to: {{{', '.join(shown)}}}" if shown else ""
    if change.op == "update":
        where = ", ".join(f"{k}: {_yaml(v)}" for k, v in change.key.items())
        return f"changed {{table: {change.table}{store}, where: {{{where}}}{to}, op: update}}"
    return f"changed {{table: {change.table}{store}{to}, op: insert}}"


def _yaml(value: Any) -> str:
    return show(value, 40)


def _row(change: NetChange) -> tuple[Any, ...]:
    return (
        change.world,
        change.table,
        tuple(sorted((k, canonical(v)) for k, v in change.key.items())),
    )


def _only_in(left: Iterable[NetChange], right: Iterable[NetChange]) -> list[NetChange]:
    """The changes of ``left`` to rows ``right`` did not change (or changed another way)."""
    theirs = {(_row(change), change.op) for change in right}
    return [change for change in left if (_row(change), change.op) not in theirs]


def _differing(
    mutant: Iterable[NetChange], solution: Iterable[NetChange]
) -> list[tuple[NetChange, str, Any, Any]]:
    """Rows both changed, with a column each set differently: (row, column, theirs, wanted)."""
    wanted = {(_row(change), change.op): change for change in solution}
    found = []
    for change in mutant:
        other = wanted.get((_row(change), change.op))
        if other is None:
            continue
        mine, theirs = dict(change.after or {}), dict(other.after or {})
        for column in dict.fromkeys([*theirs, *mine]):
            if canonical(mine.get(column)) != canonical(theirs.get(column)):
                found.append((change, column, mine.get(column), theirs.get(column)))
    return found


def _allowance_for(grader: Grader, changes: list[NetChange]) -> str | None:
    """The allowance (as data) that lets the first of ``changes`` it covers through."""
    for part in grader.walk():
        allowances = part.allow if isinstance(part, NothingElseChanged | Refused) else ()
        for change in changes:
            for allowance in allowances:
                if allowance.allows(change, lambda change: change.values()):
                    return show(allowance.spec(), 160)
    return None


def _has(grader: Grader, kinds: tuple[type[Grader], ...]) -> bool:
    return any(isinstance(part, kinds) for part in grader.walk())


_ANSWER_FIXES = {
    "off-by-one": "a number one off passes: read the answer as answer {number: N} with a "
    "tolerance below 1",
    "digit-added": "a longer number holding the right one passes: read the answer as a number "
    "(answer {number: N}) or anchor its pattern with ^ and $, rather than contains",
    "other-value": "another value of the same column passes: check which value was answered "
    "(answer {equals: ...})",
    "every-value": "an answer listing every candidate passes: ask for the one value (answer "
    "{equals: ...}, or a pattern anchored with ^ and $), not contains or an open pattern",
    "done": "an answer that only says it is done passes: check what the answer must say "
    "(answer {pattern: ...} naming it, or refused for a task to refuse)",
}


def fix_for(
    mutant: Mutant,
    played: Played,
    solution: Played | None,
    grader: Grader,
    volatile: Collection[tuple[str, str, str]] = (),
) -> str:
    """Which check would catch a surviving mutant (or mend a broken variant), in one sentence.

    ``volatile`` names the columns the clock sets (``store, table, column``):
    their values differ between any two runs, so they are never the difference.
    """
    if mutant.benign:
        return _benign_fix(mutant, played.grade)
    if mutant.kind == "do-nothing":
        return (
            "the start already passes: ask for a change the start lacks or for an answer "
            "(a task whose right move is to refuse is graded with refused)"
        )
    if mutant.kind == "submit-empty":
        return (
            "an empty answer passes: check the answer (answer, or refused for a task to "
            "refuse) or a change the start lacks"
        )
    if mutant.kind == "wrong-answer":
        return _ANSWER_FIXES.get(mutant.name.split(":", 1)[1], _ANSWER_FIXES["done"])
    theirs = list(played.changes)
    wanted = list(solution.changes) if solution is not None else []
    if mutant.kind in ("prefix", "drop-write"):
        missing = _only_in(wanted, theirs)
        if not missing:
            return "the episode leaves a write out and passes: check what that write changes"
        first = missing[0]
        return (
            f"nothing checks {_describe(first)}, which the solution makes: add {_check_spec(first)}"
        )
    if mutant.kind == "change-arg":
        other_rows = _only_in(theirs, wanted)
        if other_rows and any(change.op != "insert" for change in other_rows):
            row = next(change for change in other_rows if change.op != "insert")
            key = ", ".join(f"{k}: {_yaml(v)}" for k, v in _solution_key(wanted, row).items())
            return (
                f"it changed {_describe(row)} instead of the row the task names: name that row "
                f"in the check's where ({{{key}}}), not only its table or a count"
            )
        differing = [
            found
            for found in _differing(theirs, wanted) or _differing_inserts(theirs, wanted)
            if (found[0].world, found[0].table, found[1]) not in volatile
        ]
        if differing:
            change, column, got, want = differing[0]
            return (
                f"{_table(change)}.{column} is {show(got, 40)} where the solution sets "
                f"{show(want, 40)}: check it (to: {{{column}: {show(want, 40)}}})"
            )
        return f"the call with {mutant.note} passes: check the value that argument sets"
    stray = _only_in(theirs, wanted)
    if mutant.kind in ("collateral", "destructive"):
        if not _has(grader, (NothingElseChanged, Refused, MatchesSolution)):
            shown = "; ".join(_describe(change) for change in stray[:3]) or "its extra change"
            return f"{shown} passes: add nothing_else_changed, allowing only what the task changes"
        let_through = [
            f"{_describe(change)} (allowed by {allowance})"
            for change in stray
            if (allowance := _allowance_for(grader, [change])) is not None
        ]
        if not let_through:
            return "its extra change passes: check that nothing else changed"
        return (
            "; ".join(let_through[:3])
            + ": narrow that allowance (a where naming the task's rows, ops or columns)"
        )
    if mutant.kind in _CONVERSATION_FIXES:
        return _CONVERSATION_FIXES[mutant.kind](mutant, solution)
    if mutant.kind == "twice":
        extra = stray[0] if stray else None
        if extra is not None and extra.op == "insert":
            return (
                f"doing it twice passes (another {_table(extra)} insert): count the rows "
                f"(count {{table: {extra.table}, equals: N}}) or narrow the allowance"
            )
        return "doing it twice passes: check the end values (count, or changed ... to) exactly"
    return "check what this episode changes"


def _dropped_message(mutant: Mutant, solution: Played | None) -> str:
    outcomes = solution.outcomes if solution is not None else []
    target = mutant.target if mutant.target is not None else len(outcomes)
    text = show(outcomes[target].arguments.get("text", ""), 60) if target < len(outcomes) else ""
    after = next(
        (
            outcome.tool
            for outcome in outcomes[target + 1 :]
            if outcome.wrote and outcome.tool != MESSAGE_USER_TOOL
        ),
        None,
    )
    if after is None:
        return (
            f"nothing checks that the agent says {text}: add told_user {{contains: [<what it "
            "tells>]}, and user_ended if the user leaves on it"
        )
    return (
        f"nothing checks that the agent says {text} before it calls {after}: add told_user "
        f"{{pattern: <what only that message asks>, before: {after}}} (for a scripted user, the "
        "pattern of the turn that answers it)"
    )


def _silent(mutant: Mutant, solution: Played | None) -> str:
    return (
        "an episode whose messages say nothing passes: check what the agent must tell the user "
        "(told_user {contains: [...]}) and that the user got what they came for (user_ended)"
    )


def _acted_first(mutant: Mutant, solution: Played | None) -> str:
    tool = mutant.name.rsplit(":", 1)[-1]
    return (
        f"calling {tool} before the first message to the user passes: make the told_user check "
        f"with before: {tool} required (not inside any_of), with a pattern only a message "
        f"sent before {tool} carries"
    )


_CONVERSATION_FIXES: dict[str, Callable[[Mutant, Played | None], str]] = {
    "drop-message": _dropped_message,
    "tell-nothing": _silent,
    "write-before-asking": _acted_first,
}


def _differing_inserts(
    mutant: list[NetChange], solution: list[NetChange]
) -> list[tuple[NetChange, str, Any, Any]]:
    """Inserted rows of one table whose values differ (a new row's key is minted, so unpaired)."""
    found = []
    for change in _only_in(mutant, solution):
        if change.op != "insert":
            continue
        for other in _only_in(solution, mutant):
            if (other.world, other.table, other.op) != (change.world, change.table, "insert"):
                continue
            mine, theirs = change.values(), other.values()
            for column, value in theirs.items():
                if column in change.key:
                    continue
                if canonical(mine.get(column)) != canonical(value):
                    found.append((change, column, mine.get(column), value))
    return found


def _solution_key(solution: list[NetChange], row: NetChange) -> Mapping[str, Any]:
    for change in solution:
        if (change.world, change.table) == (row.world, row.table) and change.op != "insert":
            return dict(change.key)
    return dict(row.key)


def _benign_fix(mutant: Mutant, grade: Grade | None) -> str:
    failed: list[Check] = [] if grade is None else grade.failed
    named = failed[0].name if failed else "the grader"
    if mutant.kind == "polite-message":
        return (
            f"{named} fails when the agent says one more courteous thing to the user: grade "
            "what the messages carry (told_user), not how many there are or which comes first"
        )
    if mutant.kind == "reordered":
        return (
            f"{named} fails when the independent writes come in another order "
            f"({mutant.note}): grade the net state, not the order of calls"
        )
    if any(name.startswith("the same net changes") for name in (c.name for c in failed)):
        return (
            "matches_solution fails when reads shift the clock or the ids: add the columns "
            "that differ to its ignore"
        )
    if any(" called " in f" {check.name} " for check in failed):
        return (
            f"{named} counts calls the reads make too: count only the calls that matter "
            "(arguments, ok) or grade the state"
        )
    return f"{named} fails a right episode that also reads: grade what changed, not the calls"
