"""The ways to combine graders: ``all_of`` (every part; the lowest score), ``any_of``
(some part; the highest score) and ``weighted`` (partial credit).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.base import Grader
from seahaven.grading.episode import Episode
from seahaven.grading.grade import Grade
from seahaven.grading.python_graders import as_grader

# --- combining --------------------------------------------------------------------------------


class _Combined(Grader):
    """Parts graded together; a subclass says how their scores and verdicts combine."""

    def __init__(self, parts: Iterable[Any]) -> None:
        self._parts = tuple(
            as_grader(part, f"{self.kind}[{index}]") for index, part in enumerate(parts)
        )
        if not self._parts:
            raise WorldBug(f"{self.kind} needs at least one grader")

    def parts(self) -> tuple[Grader, ...]:
        return self._parts

    def spec(self) -> Any:
        return {self.kind: [part.spec() for part in self._parts]}

    def grade(self, episode: Episode) -> Grade:
        grades = [part.grade(episode) for part in self._parts]
        score, passed = self._combine([grade.score for grade in grades], [g.passed for g in grades])
        return Grade.combine(score, passed, grades)

    def _combine(self, scores: list[float], verdicts: list[bool]) -> tuple[float, bool]:
        raise NotImplementedError


class AllOf(_Combined):
    """Every part must pass; the score is the lowest part's."""

    kind = "all_of"

    def _combine(self, scores: list[float], verdicts: list[bool]) -> tuple[float, bool]:
        return min(scores), all(verdicts)


class AnyOf(_Combined):
    """Some part must pass; the score is the highest part's."""

    kind = "any_of"

    def _combine(self, scores: list[float], verdicts: list[bool]) -> tuple[float, bool]:
        return max(scores), any(verdicts)


class Weighted(Grader):
    """Partial credit: the weighted mean of the parts' scores; passed at ``pass_at`` or above."""

    kind = "weighted"

    def __init__(self, parts: Iterable[tuple[Any, float]], *, pass_at: float = 1.0) -> None:
        built: list[tuple[Grader, float]] = []
        for index, (part, weight) in enumerate(parts):
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
                raise WorldBug(f"weighted[{index}]: a weight is a number, 0 or more")
            built.append((as_grader(part, f"weighted[{index}]"), float(weight)))
        if not built or sum(weight for _, weight in built) <= 0:
            raise WorldBug("weighted needs at least one grader with a weight above 0")
        if (
            isinstance(pass_at, bool)
            or not isinstance(pass_at, int | float)
            or not (0 <= pass_at <= 1)
        ):
            raise WorldBug(f"weighted: pass_at is a score from 0 to 1, not {pass_at!r}")
        self.weighted = tuple(built)
        self.pass_at = float(pass_at)

    def parts(self) -> tuple[Grader, ...]:
        return tuple(part for part, _ in self.weighted)

    def spec(self) -> Any:
        spec: dict[str, Any] = {
            "parts": [{"weight": weight, "grader": part.spec()} for part, weight in self.weighted]
        }
        if self.pass_at != 1.0:
            spec["pass_at"] = self.pass_at
        return {self.kind: spec}

    def grade(self, episode: Episode) -> Grade:
        total = sum(weight for _, weight in self.weighted)
        grades = [(part.grade(episode), weight) for part, weight in self.weighted]
        score = sum(grade.score * weight for grade, weight in grades) / total
        score = min(1.0, max(0.0, score))
        return Grade.combine(score, score >= self.pass_at - 1e-9, [grade for grade, _ in grades])
