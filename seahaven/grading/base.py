"""The grader interface: ``Grader``, what every check and combinator is, and the
``Reference`` to a table, its columns or a tool that a grader names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from seahaven.grading.episode import Episode
from seahaven.grading.grade import Grade
from seahaven.grading.values import show


@dataclass(frozen=True, slots=True)
class Reference:
    """Something a grader names that must exist: a store's table and columns, or a tool."""

    store: str | None = None
    table: str | None = None
    columns: tuple[str, ...] = ()
    tool: str | None = None


class Grader(ABC):
    """Reads a finished episode and grades it."""

    kind: ClassVar[str]

    @abstractmethod
    def grade(self, episode: Episode) -> Grade:
        """The grade of ``episode``."""

    @abstractmethod
    def spec(self) -> Any:
        """This grader as data: ``{kind: arguments}``, what a scenario's YAML writes."""

    def references(self) -> Iterator[Reference]:
        """The tables, columns and tools this grader names, for ``seahaven scenarios check``."""
        return iter(())

    def parts(self) -> tuple[Grader, ...]:
        """The graders this one combines; none for a check."""
        return ()

    def walk(self) -> Iterator[Grader]:
        """This grader and every grader inside it, depth first."""
        yield self
        for part in self.parts():
            yield from part.walk()

    def __call__(self, episode: Episode) -> Grade:
        return self.grade(episode)

    def __repr__(self) -> str:
        return f"<grader {show(self.spec(), 120)}>"
