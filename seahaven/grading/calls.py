"""The check on the calls the agent made: ``called`` (a tool, with some arguments,
a number of times, by some actors).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.actors import actor_filter
from seahaven.grading.base import Grader, Reference
from seahaven.grading.episode import Episode
from seahaven.grading.grade import Check, Grade
from seahaven.grading.matching import (
    identifier,
)
from seahaven.grading.values import same, show


class Called(Grader):
    """The agent called ``tool`` (with ``arguments`` among its arguments) a number of times.

    Without a bound, at least once. ``ok`` counts only calls that returned;
    ``by`` and ``not_by`` only the calls of some actors (``seahaven.grading.actors``).
    """

    kind = "called"

    def __init__(
        self,
        tool: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        times: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
        ok: bool = False,
        by: Any = None,
        not_by: Any = None,
    ) -> None:
        self.tool = identifier(tool, "called: tool")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise WorldBug("called: arguments maps argument names to values")
        self.arguments = dict(arguments) if arguments is not None else None
        for name, bound in (("times", times), ("at_least", at_least), ("at_most", at_most)):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, int) or bound < 0
            ):
                raise WorldBug(f"called: {name} must be a whole number, 0 or more; got {bound!r}")
        if times is not None and (at_least is not None or at_most is not None):
            raise WorldBug("called takes times, or at_least and at_most, not both")
        if times is None and at_least is None and at_most is None:
            at_least = 1
        self.times, self.at_least, self.at_most = times, at_least, at_most
        self.ok = bool(ok)
        self.actors = actor_filter(by, not_by, what="called")

    def spec(self) -> Any:
        spec: dict[str, Any] = {"tool": self.tool}
        if self.arguments is not None:
            spec["arguments"] = dict(self.arguments)
        for name in ("times", "at_least", "at_most"):
            value = getattr(self, name)
            if value is not None and not (name == "at_least" and value == 1 and self._default()):
                spec[name] = value
        if self.ok:
            spec["ok"] = True
        if self.actors is not None:
            spec.update(self.actors.spec())
        return {self.kind: spec}

    def _default(self) -> bool:
        return self.times is None and self.at_most is None and self.at_least == 1

    def references(self) -> Iterator[Reference]:
        yield Reference(tool=self.tool)

    def grade(self, episode: Episode) -> Grade:
        calls = [
            call
            for call in episode.calls_to(self.tool)
            if (not self.ok or call.get("error") is None)
            and (self.actors is None or self.actors.call(call))
            and all(
                name in (call.get("arguments") or {}) and same(call["arguments"][name], value)
                for name, value in (self.arguments or {}).items()
            )
        ]
        count = len(calls)
        if self.times is not None:
            held, wanted = count == self.times, f"exactly {self.times}"
        else:
            held = (self.at_least is None or count >= self.at_least) and (
                self.at_most is None or count <= self.at_most
            )
            if self.at_least is not None and self.at_most is not None:
                wanted = f"from {self.at_least} to {self.at_most}"
            elif self.at_least is not None:
                wanted = f"at least {self.at_least}"
            else:
                wanted = f"at most {self.at_most}"
        times = "time" if wanted.endswith(" 1") else "times"
        with_args = f" with {show(self.arguments)}" if self.arguments else ""
        by = "" if self.actors is None else self.actors.describe()
        title = f"{self.tool} called{with_args}{by} {wanted} {times}"
        why = f"it was called {count} time{'' if count == 1 else 's'}"
        return Grade.of(Check(title, held, why))
