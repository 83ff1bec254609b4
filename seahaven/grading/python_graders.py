"""Graders written as Python: ``PythonGrader`` (any callable of the episode, or one
named ``module:function``) and ``as_grader``, which takes a grader or a callable.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import math
from collections.abc import Callable
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.base import Grader
from seahaven.grading.episode import Episode
from seahaven.grading.grade import Check, Grade
from seahaven.registry.targets import import_target

# --- graders written in Python ----------------------------------------------------------------


def _source_sha256(fn: Callable[..., Any]) -> str | None:
    try:
        # The file may have been edited since it was first read: read what it holds now.
        linecache.checkcache(inspect.getsourcefile(fn))
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _qualified(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}:{name}"


class PythonGrader(Grader):
    """Any callable ``fn(episode)``, returning a ``Grade``, a ``Check``, a bool or a score.

    A bool passes or fails; a number from 0 to 1 is the score, passing at 1. In a
    scenario's YAML, ``python: module:function`` names one. Its content hash
    covers the function's source, so editing it changes the scenario's hash.
    """

    kind = "python"

    def __init__(self, fn: Callable[[Episode], Any], *, name: str | None = None) -> None:
        if not callable(fn):
            raise WorldBug(f"python: {fn!r} is not callable")
        self.fn = fn
        self.name = name or _qualified(fn)
        # Read once, with the function: the hash covers the code this grader runs.
        self.source_sha256 = _source_sha256(fn)

    @classmethod
    def named(cls, target: str, what: str = "python") -> PythonGrader:
        """The grader at ``module:attr``, imported now."""
        found: Any = import_target(
            target, label=what, what="a function", example="my_graders:refund_issued"
        )
        return cls(found, name=target)

    def spec(self) -> Any:
        if self.source_sha256 is None:
            return {self.kind: self.name}
        return {self.kind: self.name, "source_sha256": self.source_sha256}

    def grade(self, episode: Episode) -> Grade:
        try:
            verdict = self.fn(episode)
        except WorldBug:
            raise
        except Exception as error:
            raise WorldBug(
                f"grader {self.name} raised {type(error).__name__}: {error}; a grader returns "
                "a verdict, it does not raise"
            ) from error
        if isinstance(verdict, Grade):
            return verdict
        if isinstance(verdict, Check):
            return Grade.of(verdict)
        if isinstance(verdict, bool):
            why = f"{self.name} returned {verdict}"
            return Grade.of(Check(self.name, verdict, why))
        if isinstance(verdict, int | float) and math.isfinite(verdict) and 0 <= verdict <= 1:
            score = float(verdict)
            return Grade.of(Check(self.name, score >= 1.0, f"{self.name} scored {score:g}", score))
        raise WorldBug(
            f"grader {self.name} returned {verdict!r}; return a Grade, a Check, a bool, or a "
            "score from 0 to 1"
        )


def as_grader(value: Any, what: str = "grader") -> Grader:
    """A grader object as it is, or a plain callable as a ``PythonGrader``.

    A grader's data form (a mapping, a list, a kind's name) is read by
    ``seahaven.grading.spec.as_grader``, which accepts all three.
    """
    if isinstance(value, Grader):
        return value
    if callable(value):
        return PythonGrader(value)
    raise WorldBug(
        f"{what}: {value!r} is not a grader; give a grader, or a function of the episode"
    )
