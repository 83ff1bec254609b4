"""What grading an episode answers: a score, a verdict, and every check with its reason."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seahaven.errors import WorldBug

__all__ = ["Check", "Grade"]


def _unit(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise WorldBug(f"{what} must be a number from 0 to 1, not {value!r}")
    if not 0.0 <= value <= 1.0:
        raise WorldBug(f"{what} must be from 0 to 1, not {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Check:
    """One thing a grader looked at: what, whether it held, a score in [0, 1], and why.

    Without a ``score``, a check that held scores 1 and one that did not scores 0.
    """

    name: str
    passed: bool
    why: str
    score: float = math.nan

    def __post_init__(self) -> None:
        if isinstance(self.score, float) and math.isnan(self.score):
            object.__setattr__(self, "score", 1.0 if self.passed else 0.0)
        object.__setattr__(self, "score", _unit(self.score, f"check {self.name!r}'s score"))

    def to_dict(self) -> dict[str, Any]:
        """The check as a result file and the wire carry it."""
        return {"name": self.name, "passed": self.passed, "score": self.score, "why": self.why}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Check:
        """A check read back from ``to_dict``'s shape."""
        return cls(
            name=str(data["name"]),
            passed=bool(data["passed"]),
            why=str(data["why"]),
            score=float(data["score"]),
        )


@dataclass(frozen=True, slots=True)
class Grade:
    """An episode's grade: a score in [0, 1], pass or fail, and the checks behind them."""

    score: float
    passed: bool
    checks: tuple[Check, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", _unit(self.score, "a grade's score"))
        object.__setattr__(self, "checks", tuple(self.checks))

    @classmethod
    def of(cls, check: Check) -> Grade:
        """The grade of one check: its score and verdict."""
        return cls(score=check.score, passed=check.passed, checks=(check,))

    @classmethod
    def combine(cls, score: float, passed: bool, parts: Iterable[Grade]) -> Grade:
        """A grade made of others, keeping every check they hold, in order."""
        checks = tuple(check for part in parts for check in part.checks)
        return cls(score=score, passed=passed, checks=checks)

    @property
    def failed(self) -> list[Check]:
        """The checks that did not hold."""
        return [check for check in self.checks if not check.passed]

    def summary(self) -> str:
        """One line: the score, the verdict, and the first failing check's reason."""
        verdict = "passed" if self.passed else "failed"
        line = f"{verdict}, score {self.score:.3g} ({len(self.checks)} checks"
        failed = self.failed
        if failed:
            line += f", {len(failed)} failed; first: {failed[0].name}: {failed[0].why}"
        return line + ")"

    def to_dict(self) -> dict[str, Any]:
        """The grade as a result file, an observation's metadata and the state document hold it."""
        return {
            "score": self.score,
            "passed": self.passed,
            "checks": [check.to_dict() for check in self.checks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Grade:
        """A grade read back from ``to_dict``'s shape."""
        return cls(
            score=float(data["score"]),
            passed=bool(data["passed"]),
            checks=tuple(Check.from_dict(check) for check in data.get("checks", ())),
        )
