"""The mutants of a solution that talks to the scenario's user, and its one polite variant.

A scenario with a simulated user is graded on what the agent said as well as
on what it changed: that it asked before it acted, that it told the user what
was done. These mutants attack that part of a grader, from the solution's own
``message_user`` calls (``SolutionShape.messages``). Every other kind of
``mutants.py`` runs on such a solution too, over the agent's own tool calls.
The scenario's events are never moved: they are the world's, and fire as they
would in a trial, whatever the agent's calls.

Wrong episodes (must fail):

- ``drop-message-N``: the solution without its N-th call, a message to the
  user (the agent never asks, or never tells);
- ``tell-nothing``: every message replaced by a message that carries nothing
  (``SILENT_MESSAGE``: ``message_user`` refuses an empty text, so the agent
  still talks, and says nothing);
- ``write-before-asking-N:TOOL``: the N-th call moved before the first message,
  where the grader asks for a message before a call to ``TOOL``
  (``told_user(..., before=TOOL)``): the agent acted before it asked. Its end
  state and messages are the solution's; only their order differs, so it is
  never skipped as "the same end".

Right episode (must pass): ``polite-message``, a courteous message
(``POLITE_MESSAGES``) before the solution's first, when the user is scripted
and no turn of its script answers it (so it gets the ``fallback``, which uses
no turn, makes no call and never ends the conversation, and the rest of the
conversation goes as in the solution); skipped, with the reason, otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator

from seahaven.evaluation.mutants import CAPS, Mutant, SolutionShape
from seahaven.grading.conversation import ToldUser
from seahaven.scenarios.model import Scenario, ToolCall
from seahaven.scenarios.users import MESSAGE_USER_TOOL

__all__ = [
    "CONVERSATION_KINDS",
    "POLITE_MESSAGES",
    "SILENT_MESSAGE",
    "conversation_mutants",
    "polite_message",
]

CONVERSATION_KINDS = ("drop-message", "tell-nothing", "write-before-asking")
# The message of tell-nothing: text, so message_user takes it, that says nothing at all.
SILENT_MESSAGE = "."
# The courteous messages the benign variant tries, in order: the first no scripted turn answers.
POLITE_MESSAGES = (
    "Thanks for your patience.",
    "One moment, please.",
    "Thank you.",
)


def _text(call: ToolCall) -> str:
    return str(call.arguments.get("text", ""))


def conversation_mutants(scenario: Scenario, shape: SolutionShape) -> Iterator[Mutant]:
    """``drop-message-N``, ``tell-nothing`` and ``write-before-asking-N:TOOL``."""
    if not shape.messages:
        return
    calls = shape.calls
    for index in shape.messages[: CAPS["drop-message"]]:
        yield shape.mutant(
            f"drop-message-{index + 1}",
            "drop-message",
            calls[:index] + calls[index + 1 :],
            target=index,
            note=f"the message {_text(calls[index])!r} left out",
        )
    silent = tuple(
        ToolCall(tool=MESSAGE_USER_TOOL, arguments={"text": SILENT_MESSAGE})
        if index in shape.messages
        else call
        for index, call in enumerate(calls)
    )
    yield shape.mutant(
        "tell-nothing",
        "tell-nothing",
        silent,
        note=f"every message to the user replaced by {SILENT_MESSAGE!r}",
    )
    first = shape.messages[0]
    asked_before = [
        part.before
        for part in scenario.grader.walk()
        if isinstance(part, ToldUser) and part.before is not None
    ]
    moved: set[int] = set()
    for tool in dict.fromkeys(asked_before):
        at = next(
            (i for i, call in enumerate(calls) if i > first and call.tool == tool),
            None,
        )
        if at is None or at in moved or len(moved) >= CAPS["write-before-asking"]:
            continue
        moved.add(at)
        script = (*calls[:first], calls[at], *calls[first:at], *calls[at + 1 :])
        yield shape.mutant(
            f"write-before-asking-{at + 1}:{tool}",
            "write-before-asking",
            script,
            target=at,
            note=f"{tool} called before the first message to the user",
        )


def polite_message(scenario: Scenario, shape: SolutionShape) -> tuple[Mutant | None, str | None]:
    """The ``polite-message`` variant, or ``None`` and why it is skipped.

    ``None, None`` when the solution says nothing to a user: there is nothing to
    be polite in.
    """
    user = scenario.user
    if user is None or not shape.messages:
        return None, None
    if user.script is None:
        return None, "the user is played by a function, which may answer it any way"
    room = scenario.budget - len(shape.calls) - (1 if shape.submitted else 0)
    if room <= 0:
        return None, "over the budget"
    for text in POLITE_MESSAGES:
        if all(turn.when is not None and not turn.when.holds(text) for turn in user.script):
            first = shape.messages[0]
            polite = ToolCall(tool=MESSAGE_USER_TOOL, arguments={"text": text})
            calls = (*shape.calls[:first], polite, *shape.calls[first:])
            mutant = shape.mutant(
                "polite-message",
                "polite-message",
                calls,
                benign=True,
                target=first,
                note=f"{text!r} said first",
            )
            return mutant, None
    return None, "a turn of the user's script would answer it"
