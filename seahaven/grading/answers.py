"""The checks on how the agent ended the episode: ``answer`` (the submitted answer is
the one asked for) and ``submitted``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.base import Grader
from seahaven.grading.episode import Episode
from seahaven.grading.grade import Check, Grade
from seahaven.grading.matching import (
    one_of,
)
from seahaven.grading.values import as_number, same, show

# --- what the agent did -----------------------------------------------------------------------

_UNSET: Any = object()


def _as_json(value: Any) -> Any:
    # An answer is text; when the wanted value is not, the text is read as the JSON it spells.
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else show(value, 10_000)


class Answer(Grader):
    """The agent submitted an answer, and it is the one asked for.

    One of: ``equals`` (the same value; text compared ignoring case and the
    spaces around it unless ``case_sensitive``), ``number`` (within
    ``tolerance``; text like ``"$1,250.00"`` is read as a number), ``pattern`` (a
    regular expression found in the answer) or ``contains`` (a piece of text, or
    a list of pieces, all in the answer).
    """

    kind = "answer"

    def __init__(
        self,
        *,
        equals: Any = _UNSET,
        number: float | None = None,
        tolerance: float = 0.0,
        pattern: str | None = None,
        contains: str | list[str] | None = None,
        case_sensitive: bool = False,
    ) -> None:
        modes = {
            "equals": None if equals is _UNSET else True,
            "number": number,
            "pattern": pattern,
            "contains": contains,
        }
        self.mode = one_of(modes, list(modes), "answer")
        self.equals = equals
        # The number as given stays in the spec (and the scenario's hash); this is what compares.
        self._number_value = None if number is None else as_number(number)
        if number is not None and self._number_value is None:
            raise WorldBug(f"answer: number must be a number, not {number!r}")
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            raise WorldBug(f"answer: tolerance is a number, 0 or more; got {tolerance!r}")
        self.number = number
        self.tolerance = float(tolerance)
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:
                raise WorldBug(
                    f"answer: pattern {pattern!r} is not a regular expression: {error}"
                ) from None
        self.pattern = pattern
        if contains is not None and not (
            isinstance(contains, str)
            or (isinstance(contains, list) and all(isinstance(item, str) for item in contains))
        ):
            raise WorldBug("answer: contains is a piece of text or a list of them")
        self.contains = contains
        self.case_sensitive = bool(case_sensitive)

    def spec(self) -> Any:
        spec: dict[str, Any] = {}
        if self.mode == "equals":
            spec["equals"] = self.equals
        elif self.mode == "number":
            spec["number"] = self.number
            if self.tolerance:
                spec["tolerance"] = self.tolerance
        elif self.mode == "pattern":
            spec["pattern"] = self.pattern
        else:
            spec["contains"] = self.contains
        if self.case_sensitive:
            spec["case_sensitive"] = True
        return {self.kind: spec}

    def _fold(self, text: str) -> str:
        return text.strip() if self.case_sensitive else text.strip().casefold()

    def grade(self, episode: Episode) -> Grade:
        title = f"the answer {self._wanted()}"
        if not episode.submitted:
            return Grade.of(Check(title, False, "no answer was submitted"))
        answer = episode.answer
        if self.mode == "equals":
            if isinstance(answer, str) and isinstance(self.equals, str):
                held = self._fold(answer) == self._fold(self.equals)
            else:
                held = same(_as_json(answer), self.equals)
        elif self.mode == "number":
            value = as_number(answer)
            assert self._number_value is not None
            held = value is not None and abs(value - self._number_value) <= self.tolerance + 1e-9
        elif self.mode == "pattern":
            assert self.pattern is not None
            flags = 0 if self.case_sensitive else re.IGNORECASE
            held = re.search(self.pattern, _as_text(answer), flags) is not None
        else:
            pieces = (
                [self.contains] if isinstance(self.contains, str) else list(self.contains or [])
            )
            text = self._fold(_as_text(answer))
            held = all(self._fold(piece) in text for piece in pieces)
        why = f"the answer was {show(answer)}"
        return Grade.of(Check(title, held, why))

    def _wanted(self) -> str:
        if self.mode == "equals":
            return f"is {show(self.equals)}"
        if self.mode == "number":
            within = f" within {self.tolerance:g}" if self.tolerance else ""
            return f"is the number {self.number}{within}"
        if self.mode == "pattern":
            return f"matches /{self.pattern}/"
        return f"contains {show(self.contains)}"


class Submitted(Grader):
    """The agent ended the episode by submitting an answer."""

    kind = "submitted"

    def spec(self) -> Any:
        return self.kind

    def grade(self, episode: Episode) -> Grade:
        why = "the agent submitted an answer" if episode.submitted else "the agent never submitted"
        return Grade.of(Check("an answer was submitted", episode.submitted, why))
