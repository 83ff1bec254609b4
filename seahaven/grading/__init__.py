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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from seahaven.grading import graders as _g
from seahaven.grading.actors import ActorFilter
from seahaven.grading.conversation import ToldUser, UserEnded
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
    "ActorFilter",
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
    "told_user",
    "unchanged",
    "user_ended",
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


Actors = str | Sequence[str] | None


def changed(
    table: str,
    where: Where = None,
    *,
    to: Where = None,
    store: str = "main",
    op: str | None = None,
    by: Actors = None,
    not_by: Actors = None,
) -> Grader:
    """The episode inserted or updated a row matching ``where`` so that it holds ``to``.

    ``by`` and ``not_by`` (an actor or a list: ``agent``, ``user``, ``event:<name>``,
    ``event``, ``setup``) count only a change some of them made, or none of them.
    """
    return _g.Changed(table, where, to=to, store=store, op=op, by=by, not_by=not_by)


def deleted(
    table: str,
    where: Where = None,
    *,
    store: str = "main",
    by: Actors = None,
    not_by: Actors = None,
) -> Grader:
    """The episode deleted a row of ``table`` that matched ``where`` (by, or not by, actors)."""
    return _g.Deleted(table, where, store=store, by=by, not_by=not_by)


def unchanged(
    table: str,
    where: Where = None,
    *,
    store: str = "main",
    by: Actors = None,
    not_by: Actors = None,
) -> Grader:
    """The episode left the rows of ``table`` matching ``where`` as it found them.

    With ``by`` (or ``not_by``), only the changes of those actors (or of the others) count.
    """
    return _g.Unchanged(table, where, store=store, by=by, not_by=not_by)


def nothing_else_changed(
    allow: Iterable[Allowance | str | Mapping[str, Any]] = (),
    *,
    by: Actors = None,
    not_by: Actors = None,
) -> Grader:
    """Every net change is one of those ``allow`` lists (``"table"``, ``"store.table"``, ...).

    With ``by`` (or ``not_by``), only those actors' changes (or the others') are held to it.
    """
    return _g.NothingElseChanged(allow, by=by, not_by=not_by)


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
    by: Actors = None,
    not_by: Actors = None,
) -> Grader:
    """``tool`` was called (once or more, or as bounded); ``ok`` counts calls that returned.

    ``by`` and ``not_by`` count only the calls some actors made (or none of them).
    """
    return _g.Called(
        tool,
        arguments=arguments,
        times=times,
        at_least=at_least,
        at_most=at_most,
        ok=ok,
        by=by,
        not_by=not_by,
    )


def told_user(
    contains: str | Sequence[str] | None = None,
    *,
    pattern: str | None = None,
    before: str | None = None,
) -> Grader:
    """The agent's messages to the user carried each of ``contains`` (and ``pattern``).

    Case and commas are ignored; with ``before``, only messages sent before the
    agent's first call to that tool count.
    """
    return ToldUser(contains, pattern=pattern, before=before)


def user_ended() -> Grader:
    """The scenario's user ended the conversation (it said it was done)."""
    return UserEnded()


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
