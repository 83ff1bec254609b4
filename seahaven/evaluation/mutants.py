"""The mutants of a scenario's solution: wrong episodes its grader must fail, and right ones.

Mutation testing attacks a test suite with small wrong versions of the code it
tests; here a scenario's grader is attacked with small wrong versions of its
reference solution. Each mutant is a script of calls and an ending, named
stably (``drop-write-2:pay_create_refund``) so a finding can be accepted by
name. The calls are the solution's as the probe saw them played: a call whose
change log is empty is a read, one that changed rows is a write, one the world
refused is neither.

Wrong episodes (must fail):

- ``do-nothing``: no call, no answer;
- ``submit-empty``: no call, an empty answer;
- ``wrong-answer:*``: the solution's calls with a wrong answer of the right
  type (``off-by-one`` and ``digit-added`` for a number; ``other-value`` and
  ``every-value`` for a value of a column; ``done`` for prose), when the grader
  reads the answer;
- ``prefix-N``: the first N calls, each prefix that leaves a write out, with the
  solution's answer;
- ``drop-write-N:TOOL``: the solution without its N-th call, a write;
- ``change-arg-N:TOOL.ARG=VALUE``: the N-th call, a write, with one argument
  changed to another valid value;
- ``collateral:TOOL`` and ``destructive:TOOL``: the solution and one more write
  it never makes (``panel.py`` finds them by making them);
- ``twice``: the solution's calls made twice.

With a user, ``conversations.py`` adds ``drop-message-N``, ``tell-nothing``
and ``write-before-asking-N:TOOL``.

Right episodes (must pass): ``extra-reads`` (reads added before, between and
after the solution's calls), ``reordered:N-M`` (two independent writes
swapped), and, with a scripted user, ``polite-message``. Each kind is capped
(``CAPS``), and the choices are seeded by the scenario's hash, so one scenario
always gets the same panel.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from seahaven.evaluation.candidates import StartRows, ToolShape, alternatives
from seahaven.evaluation.stage import Played
from seahaven.grading import Grader, PythonGrader
from seahaven.grading.answers import Answer
from seahaven.grading.refusal import Refused
from seahaven.grading.values import as_number, show
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario, ToolCall
from seahaven.scenarios.users import MESSAGE_USER_TOOL

__all__ = [
    "BENIGN_KINDS",
    "CAPS",
    "KINDS",
    "WRONG_DONE",
    "Mutant",
    "SolutionShape",
    "answer_mutants",
    "benign_extra_reads",
    "benign_reordered",
    "kind_of",
    "rng_for",
    "script_mutants",
]

# Every kind, in the order the panel makes them. A wrong episode of one kind that is the same
# script as one made before it (a prefix that is also a dropped write) keeps the first name.
KINDS = (
    "do-nothing",
    "submit-empty",
    "wrong-answer",
    "prefix",
    "drop-write",
    "change-arg",
    "collateral",
    "destructive",
    "twice",
    # With a user (``conversations.py``):
    "drop-message",
    "tell-nothing",
    "write-before-asking",
)
BENIGN_KINDS = ("extra-reads", "reordered", "polite-message")
# How many mutants of each kind one scenario gets at most.
CAPS: dict[str, int] = {
    "wrong-answer": 4,
    "prefix": 8,
    "drop-write": 8,
    "change-arg": 16,
    "collateral": 3,
    "destructive": 2,
    "twice": 1,
    "drop-message": 8,
    "tell-nothing": 1,
    "write-before-asking": 2,
    "extra-reads": 1,
    "reordered": 3,
    "polite-message": 1,
}
# Other values tried for one argument of one write, at most.
VALUES_PER_ARGUMENT = 2
# The values listed by the every-value answer, at most (the right one among them).
EVERY_VALUE_LISTED = 12
# The prose answer that claims the work was done: wrong for a question and for a refusal alike.
WRONG_DONE = "Done: I took care of it."


@dataclass(frozen=True)
class Mutant:
    """One episode the panel plays: a name, a script of calls, and how it ends."""

    name: str
    kind: str
    calls: tuple[ToolCall, ...]
    answer: str | None = None
    submitted: bool = False
    #: A right episode the grader must pass (a benign variant), not a wrong one.
    benign: bool = False
    #: The position (0-based) in the solution of the call the mutant is about, if one.
    target: int | None = None
    #: What was changed, in words, for the finding's fix.
    note: str = ""

    def script(self) -> tuple[Any, ...]:
        """What the mutant does, as a value: two mutants with the same script are one."""
        calls = tuple((call.tool, show(call.arguments, 10_000)) for call in self.calls)
        return (calls, self.submitted, self.answer)


@dataclass
class SolutionShape:
    """The solution as the probe played it: its calls, which wrote, and its ending.

    In a scenario with a user, the solution's ``message_user`` calls are its
    ``messages``, neither writes nor reads (what the user does in reply is the
    user's); ``tail`` is where calls added after the solution go: before the
    message the user ended the conversation on, since nothing is taken after it.
    """

    calls: tuple[ToolCall, ...]
    played: Played
    answer: str | None
    submitted: bool
    writes: list[int] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    tail: int = 0

    @classmethod
    def of(cls, scenario: Scenario, played: Played) -> SolutionShape:
        """Sort the solution's calls by what playing them did."""
        steps = tuple(step for step in scenario.solution or () if step.tool != SUBMIT_TOOL)
        submit = [step for step in scenario.solution or () if step.tool == SUBMIT_TOOL]
        answer = str(submit[0].arguments.get("answer")) if submit else None
        shape = cls(steps, played, answer, bool(submit), tail=len(steps))
        talks = scenario.user is not None
        for index, outcome in enumerate(played.outcomes):
            if talks and outcome.tool == MESSAGE_USER_TOOL:
                shape.messages.append(index)
            elif outcome.wrote:
                shape.writes.append(index)
            elif outcome.refused is None and outcome.crashed is None:
                shape.reads.append(index)
        if played.ended_by == "user" and played.outcomes:
            shape.tail = len(played.outcomes) - 1  # the message the user stopped on
        return shape

    def with_added(self, added: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
        """The solution's calls with ``added`` made after them (before its closing message)."""
        return (*self.calls[: self.tail], *added, *self.calls[self.tail :])

    @property
    def own_calls(self) -> tuple[ToolCall, ...]:
        """The solution's calls to the world's tools: every call but its messages to the user."""
        return tuple(call for index, call in enumerate(self.calls) if index not in self.messages)

    def mutant(self, name: str, kind: str, calls: Any, **fields: Any) -> Mutant:
        """A mutant that ends as the solution does (with its answer, if it submits)."""
        return Mutant(
            name, kind, tuple(calls), answer=self.answer, submitted=self.submitted, **fields
        )


def kind_of(mutant: str) -> str:
    """A mutant's kind, from its name: ``drop-message-1`` is a ``drop-message``.

    Raises ``ValueError`` for a name of no kind the panel makes.
    """
    for kind in sorted((*KINDS, *BENIGN_KINDS), key=len, reverse=True):
        if mutant == kind or mutant.startswith((f"{kind}-", f"{kind}:")):
            return kind
    raise ValueError(f"mutant {mutant!r} is of no kind the panel makes")


def rng_for(scenario: Scenario, salt: str) -> random.Random:
    """A random stream for one scenario and one use: the same on every machine and run."""
    return random.Random(f"{scenario.hash}:{salt}")


def _reads_answer(grader: Grader) -> bool:
    return any(isinstance(part, Answer | Refused | PythonGrader) for part in grader.walk())


def _number_text(value: float, like: str) -> str:
    decimals = (
        len(like.rsplit(".", 1)[1]) if "." in like and like.rsplit(".", 1)[1].isdigit() else 0
    )
    if float(value).is_integer() and not decimals:
        return str(int(value))
    return f"{value:.{max(decimals, 2)}f}"


def answer_mutants(scenario: Scenario, shape: SolutionShape, rows: StartRows) -> Iterator[Mutant]:
    """``do-nothing``, ``submit-empty``, and the wrong answers of the right type."""
    yield Mutant("do-nothing", "do-nothing", ())
    yield Mutant("submit-empty", "submit-empty", (), answer="", submitted=True)
    if not shape.submitted or shape.answer is None or not _reads_answer(scenario.grader):
        return
    answer = shape.answer.strip()
    wrong: list[tuple[str, str, str]] = []
    number = as_number(answer)
    if number is not None:
        like = answer.replace(",", "")
        wrong.append(("off-by-one", _number_text(number + 1, like), "one more than the answer"))
        text = _number_text(number, like)
        wrong.append(("digit-added", "1" + text.lstrip("-"), "the answer with a digit in front"))
    else:
        columns = rows.columns_of(answer)
        if columns:
            column = columns[0]
            others = rows.others(column, answer)
            rng = rng_for(scenario, "wrong-answer")
            rng.shuffle(others)
            texts = [str(other) for other in others if isinstance(other, str) and other.strip()]
            if texts:
                wrong.append(("other-value", texts[0], f"another value of {column.describe()}"))
                listed = [answer, *texts[: EVERY_VALUE_LISTED - 1]]
                rng.shuffle(listed)
                wrong.append(
                    (
                        "every-value",
                        ", ".join(listed),
                        f"every value of {column.describe()}, the right one among them",
                    )
                )
        wrong.append(("done", WRONG_DONE, "a claim that the work was done"))
    for suffix, text, note in wrong[: CAPS["wrong-answer"]]:
        yield Mutant(
            f"wrong-answer:{suffix}",
            "wrong-answer",
            shape.calls,
            answer=text,
            submitted=True,
            note=note,
        )


def script_mutants(
    scenario: Scenario,
    shape: SolutionShape,
    rows: StartRows,
    tools: Mapping[str, ToolShape],
) -> Iterator[Mutant]:
    """The mutants made by cutting and changing the solution's own calls, and ``twice``."""
    calls = shape.calls
    # Each strict prefix that leaves a write out: every length up to the last write's position.
    for length in range(0, (shape.writes[-1] + 1) if shape.writes else 0):
        yield shape.mutant(f"prefix-{length}", "prefix", calls[:length], target=length)
    for index in shape.writes:
        kept = calls[:index] + calls[index + 1 :]
        name = f"drop-write-{index + 1}:{calls[index].tool}"
        yield shape.mutant(name, "drop-write", kept, target=index)
    yield from _changed_arguments(scenario, shape, rows, tools)
    if shape.writes:
        # With a user, the world's calls again, before the message the user stops on.
        again = shape.with_added(shape.own_calls if shape.messages else calls)
        yield shape.mutant("twice", "twice", again, note="the solution's calls twice")


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else show(value, 40)
    return text if len(text) <= 40 else text[:39] + "…"


def _changed_arguments(
    scenario: Scenario, shape: SolutionShape, rows: StartRows, tools: Mapping[str, ToolShape]
) -> Iterator[Mutant]:
    rng = rng_for(scenario, "change-arg")
    for index in shape.writes:
        step = shape.calls[index]
        tool = tools.get(step.tool)
        properties = tool.properties if tool is not None else {}
        for argument in sorted(step.arguments):
            value = step.arguments[argument]
            if value is None or isinstance(value, dict | list):
                continue
            schema = properties.get(argument, {})
            for other, source in alternatives(value, schema, rows, rng, limit=VALUES_PER_ARGUMENT):
                changed = ToolCall(tool=step.tool, arguments={**step.arguments, argument: other})
                script = (*shape.calls[:index], changed, *shape.calls[index + 1 :])
                yield shape.mutant(
                    f"change-arg-{index + 1}:{step.tool}.{argument}={_shown(other)}",
                    "change-arg",
                    script,
                    target=index,
                    note=f"{argument} {show(value)} became {show(other)} ({source})",
                )


def benign_reordered(shape: SolutionShape) -> Iterator[Mutant]:
    """``reordered:N-M``: each two writes next to each other in order, swapped.

    Two writes with a message to the user between them are not: what the agent
    says between them may be what the second waits for.
    """
    for first, second in zip(shape.writes, shape.writes[1:], strict=False):
        if any(first < message < second for message in shape.messages):
            continue
        calls = list(shape.calls)
        calls[first], calls[second] = calls[second], calls[first]
        yield shape.mutant(
            f"reordered:{first + 1}-{second + 1}",
            "reordered",
            calls,
            benign=True,
            target=first,
            note=f"calls {first + 1} and {second + 1} swapped",
        )


def benign_extra_reads(
    scenario: Scenario, shape: SolutionShape, reads: list[ToolCall]
) -> Mutant | None:
    """``extra-reads``: a read before the first call, after each write, and before the end.

    Fewer when the budget leaves less room; none when it leaves none.
    """
    room = scenario.budget - len(shape.calls) - (1 if shape.submitted else 0)
    if room <= 0 or not reads:
        return None
    slots = [0, *(index + 1 for index in shape.writes), shape.tail]
    slots = sorted(set(slots))[:room]
    calls: list[ToolCall] = []
    added = 0
    for index in range(len(shape.calls) + 1):
        if index in slots:
            calls.append(reads[added % len(reads)])
            added += 1
        if index < len(shape.calls):
            calls.append(shape.calls[index])
    return shape.mutant(
        "extra-reads",
        "extra-reads",
        calls,
        benign=True,
        note=", ".join(dict.fromkeys(read.tool for read in reads[:added])) + " added",
    )
