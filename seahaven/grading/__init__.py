"""Grading a finished episode: the fold, the episode a grader reads, the graders, the grade.

A grader reads an ``Episode`` (the net change per row, the calls, the submitted
answer, read-only views of the end and the start) and returns a ``Grade``: a
score in [0, 1], pass or fail, and every check with its verdict and the reason.
The lower-case names build the built-in graders::

    from seahaven import grading

    grader = grading.all_of(
        grading.changed("invoices", {"number": "INV-0011"}, to={"status": "paid"}),
        grading.nothing_else_changed(allow=["invoices", "payments.charges"]),
    )
    grade = grader(grading.Episode.of(inst))

``fold`` is the net of a change log, for whoever grades by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from seahaven.grading import graders as _g
from seahaven.grading.episode import Episode
from seahaven.grading.fold import Changes, NetChange, fold
from seahaven.grading.grade import Check, Grade
from seahaven.grading.graders import (
    Allowance,
    Grader,
    PythonGrader,
    Reference,
    as_grader,
)
from seahaven.grading.refusal import DEFAULT_MARKERS, Refused
from seahaven.grading.spec import KINDS, grader_from_spec
from seahaven.grading.values import canonical, same

__all__ = [
    "DEFAULT_MARKERS",
    "KINDS",
    "Allowance",
    "Changes",
    "Check",
    "Episode",
    "Grade",
    "Grader",
    "NetChange",
    "PythonGrader",
    "Reference",
    "Refused",
    "absent",
    "all_of",
    "answer",
    "any_of",
    "as_grader",
    "called",
    "canonical",
    "changed",
    "count",
    "deleted",
    "exists",
    "fold",
    "grader_from_spec",
    "matches_solution",
    "nothing_else_changed",
    "python",
    "refused",
    "same",
    "submitted",
    "unchanged",
    "weighted",
]

Where = Mapping[str, Any] | None


def exists(table: str, where: Where = None, *, store: str = "main") -> Grader:
    """At the end, a row of ``table`` (in ``store``) matches ``where``."""
    return _g.Exists(table, where, store=store)


def absent(table: str, where: Where = None, *, store: str = "main") -> Grader:
    """At the end, no row of ``table`` matches ``where``."""
    return _g.Absent(table, where, store=store)


def count(
    table: str,
    where: Where = None,
    *,
    store: str = "main",
    equals: int | None = None,
    at_least: int | None = None,
    at_most: int | None = None,
) -> Grader:
    """At the end, the number of rows of ``table`` matching ``where`` is as given."""
    return _g.Count(table, where, store=store, equals=equals, at_least=at_least, at_most=at_most)


def changed(
    table: str,
    where: Where = None,
    *,
    to: Where = None,
    store: str = "main",
    op: str | None = None,
) -> Grader:
    """The episode inserted or updated a row matching ``where`` so that it holds ``to``."""
    return _g.Changed(table, where, to=to, store=store, op=op)


def deleted(table: str, where: Where = None, *, store: str = "main") -> Grader:
    """The episode deleted a row of ``table`` that matched ``where``."""
    return _g.Deleted(table, where, store=store)


def unchanged(table: str, where: Where = None, *, store: str = "main") -> Grader:
    """The episode left the rows of ``table`` matching ``where`` as it found them."""
    return _g.Unchanged(table, where, store=store)


def nothing_else_changed(allow: Iterable[Allowance | str | Mapping[str, Any]] = ()) -> Grader:
    """Every net change is one of those ``allow`` lists (``"table"``, ``"store.table"``, ...)."""
    return _g.NothingElseChanged(allow)


def matches_solution(ignore: Iterable[str] = ()) -> Grader:
    """The net changes are the reference solution's from the same start, ``ignore`` left out."""
    return _g.MatchesSolution(ignore)


def refused(
    *,
    pattern: str | None = None,
    reason_contains: str | list[str] | None = None,
    markers: str | None = None,
    allow: Iterable[Allowance | str | Mapping[str, Any]] = (),
) -> Grader:
    """A refusal: the agent submitted an answer that refuses and says why, and changed nothing.

    ``pattern`` and ``reason_contains`` name the reason the answer must give;
    ``markers`` replaces ``DEFAULT_MARKERS``, what reads as a refusal; ``allow``
    lists changes a refusing episode may still make, as ``nothing_else_changed``'s.
    """
    return Refused(pattern=pattern, reason_contains=reason_contains, markers=markers, allow=allow)


def answer(**wanted: Any) -> Grader:
    """The submitted answer: ``equals``, ``number`` (``tolerance``), ``pattern``, ``contains``."""
    return _g.Answer(**wanted)


def submitted() -> Grader:
    """The agent ended the episode by submitting an answer."""
    return _g.Submitted()


def called(
    tool: str,
    *,
    arguments: Mapping[str, Any] | None = None,
    times: int | None = None,
    at_least: int | None = None,
    at_most: int | None = None,
    ok: bool = False,
) -> Grader:
    """``tool`` was called (once or more, or as bounded); ``ok`` counts calls that returned."""
    return _g.Called(
        tool, arguments=arguments, times=times, at_least=at_least, at_most=at_most, ok=ok
    )


def all_of(*parts: Any) -> Grader:
    """Every part passes; the score is the lowest part's."""
    return _g.AllOf(as_grader(part, f"all_of[{index}]") for index, part in enumerate(parts))


def any_of(*parts: Any) -> Grader:
    """Some part passes; the score is the highest part's."""
    return _g.AnyOf(as_grader(part, f"any_of[{index}]") for index, part in enumerate(parts))


def weighted(parts: Iterable[tuple[Any, float]], *, pass_at: float = 1.0) -> Grader:
    """Partial credit: ``[(grader, weight), ...]``, passed when the score reaches ``pass_at``."""
    built = [
        (as_grader(part, f"weighted[{index}]"), weight)
        for index, (part, weight) in enumerate(parts)
    ]
    return _g.Weighted(built, pass_at=pass_at)


def python(fn: Callable[[Episode], Any], *, name: str | None = None) -> Grader:
    """A grader written as a function of the episode."""
    return _g.PythonGrader(fn, name=name)
