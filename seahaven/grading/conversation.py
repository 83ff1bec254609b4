"""Checks on a conversation: what the agent told the user, and how the conversation ended.

A scenario with a simulated user records its conversation, each message with
its speaker (``agent`` or ``user``), its text, and ``at_call``, how many calls
the instance had dispatched when it was sent (so a message and the call log can
be put in one order). These checks read it:

- ``told_user(contains=[...], pattern=..., before=tool)``: facts the agent's
  messages must carry (tau2-bench's ``communicate_info``), each in some
  message, optionally before the agent first called a tool; the grade names
  the message that carried each fact, or quotes the messages when none did;
- ``user_ended()``: the user ended the conversation (a scripted user stops
  only once what it wanted is done).

What the user did with its own tools is graded by the state checks with
``by: user`` (``seahaven.grading.actors``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.actors import call_actor
from seahaven.grading.base import Grader, Reference
from seahaven.grading.episode import Episode
from seahaven.grading.grade import Check, Grade
from seahaven.grading.values import show
from seahaven.stores.names import AGENT

__all__ = ["AGENT_SPEAKER", "USER_SPEAKER", "ToldUser", "UserEnded", "fold_text"]

AGENT_SPEAKER = "agent"
"""The speaker of the agent's messages to the user."""
USER_SPEAKER = "user"
"""The speaker of the user's replies."""

# How each other ending of an episode reads in a check's reason.
_ENDINGS = {
    "": "the episode has not ended",
    "submit": "the agent submitted",
    "budget": "the budget of calls ran out",
    "finish": "the harness finished the episode",
}
# How many of the agent's messages a failing check quotes, and how much of each.
_QUOTED = 3
_QUOTE_LENGTH = 80


def fold_text(text: str) -> str:
    """Text as ``told_user`` compares it: lower case, without commas (``1,250`` is ``1250``)."""
    return text.casefold().replace(",", "")


def _pieces(value: Any, what: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise WorldBug(f"{what} is a piece of text or a list of them")
    if not all(isinstance(item, str) and item.strip() for item in items):
        raise WorldBug(f"{what} holds text only, none of it empty")
    return tuple(items)


def _agent_messages(episode: Episode) -> list[tuple[int, Mapping[str, Any]]]:
    """The agent's messages, each with its place in the conversation (1 first)."""
    return [
        (position, message)
        for position, message in enumerate(episode.conversation, start=1)
        if message.get("speaker") == AGENT_SPEAKER and isinstance(message.get("text"), str)
    ]


def _quoted(messages: Sequence[tuple[int, Mapping[str, Any]]]) -> str:
    if not messages:
        return "the agent sent the user no message"
    shown = "; ".join(
        f"message {position}: {show(message['text'], _QUOTE_LENGTH)}"
        for position, message in messages[:_QUOTED]
    )
    more = f"; and {len(messages) - _QUOTED} more" if len(messages) > _QUOTED else ""
    return f"the agent's messages were {shown}{more}"


class ToldUser(Grader):
    """The agent's messages to the user carried every fact asked for.

    Each piece of ``contains`` must appear in some message of the agent's
    (ignoring case and commas), and ``pattern`` must be found in one (ignoring
    case). With ``before``, only messages sent before the agent's first call to
    that tool count: "asked for the customer's email before refunding".
    """

    kind = "told_user"

    def __init__(
        self,
        contains: Any = None,
        *,
        pattern: str | None = None,
        before: str | None = None,
    ) -> None:
        self.contains = None if contains is None else _pieces(contains, "told_user: contains")
        if pattern is not None:
            if not isinstance(pattern, str) or not pattern:
                raise WorldBug("told_user: pattern is a regular expression, as text")
            try:
                self._regex = re.compile(pattern, re.IGNORECASE)
            except re.error as error:
                raise WorldBug(
                    f"told_user: pattern {pattern!r} is not a regular expression: {error}"
                ) from None
        self.pattern = pattern
        if self.contains is None and pattern is None:
            raise WorldBug("told_user needs contains (facts the agent must tell) or pattern")
        if before is not None and (not isinstance(before, str) or not before):
            raise WorldBug("told_user: before names a tool, as its surface name")
        self.before = before

    def spec(self) -> Any:
        spec: dict[str, Any] = {}
        if self.contains is not None:
            spec["contains"] = list(self.contains)
        if self.pattern is not None:
            spec["pattern"] = self.pattern
        if self.before is not None:
            spec["before"] = self.before
        return {self.kind: spec}

    def references(self) -> Any:
        if self.before is not None:
            yield Reference(tool=self.before)

    def _title(self) -> str:
        wanted = []
        if self.contains is not None:
            wanted.append(", ".join(show(piece) for piece in self.contains))
        if self.pattern is not None:
            wanted.append(f"/{self.pattern}/")
        title = "told the user " + " and ".join(wanted)
        if self.before is not None:
            title += f" before calling {self.before}"
        return title

    def _deadline(self, episode: Episode) -> int | None:
        """The ordinal of the agent's first call to ``before``, or ``None`` if it made none."""
        for ordinal, call in enumerate(episode.calls):
            if call.get("tool") == self.before and call_actor(call) == AGENT:
                return ordinal
        return None

    def grade(self, episode: Episode) -> Grade:
        messages = _agent_messages(episode)
        counted = messages
        late = ""
        if self.before is not None:
            deadline = self._deadline(episode)
            if deadline is not None:
                counted = [
                    (position, message)
                    for position, message in messages
                    if isinstance(message.get("at_call"), int) and message["at_call"] <= deadline
                ]
                late = f" before the agent's first call to {self.before} (call {deadline})"
        carried: list[str] = []
        missing: list[str] = []
        for piece in self.contains or ():
            folded = fold_text(piece)
            found = next(
                (position for position, message in counted if folded in fold_text(message["text"])),
                None,
            )
            if found is None:
                missing.append(show(piece))
            else:
                carried.append(f"{show(piece)} in message {found}")
        if self.pattern is not None:
            found = next(
                (position for position, message in counted if self._regex.search(message["text"])),
                None,
            )
            if found is None:
                missing.append(f"/{self.pattern}/")
            else:
                carried.append(f"/{self.pattern}/ in message {found}")
        if not missing:
            return Grade.of(Check(self._title(), True, "; ".join(carried)))
        why = f"no message{late} carried {', '.join(missing)}"
        if carried:
            why += f" (found: {'; '.join(carried)})"
        return Grade.of(Check(self._title(), False, f"{why}; {_quoted(counted)}"))


class UserEnded(Grader):
    """The user ended the conversation: it said it was done (a scripted user's ``stop``)."""

    kind = "user_ended"

    def spec(self) -> Any:
        return self.kind

    def grade(self, episode: Episode) -> Grade:
        ended = episode.ended_by == USER_SPEAKER
        if ended:
            why = "the user ended the conversation"
        elif not episode.conversation:
            why = "the agent never wrote to the user"
        else:
            how = _ENDINGS.get(episode.ended_by or "", f"it ended by {episode.ended_by}")
            why = f"{how}, and the user never said it was done"
        return Grade.of(Check("the user ended the conversation", ended, why))
