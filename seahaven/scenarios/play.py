"""Playing one episode of a scenario as its agent: the one path every episode's calls take.

A ``Play`` is the agent's side of an episode on an instance: the ``submit`` tool
beside the world's, every call counted against the scenario's budget (the call
that spends it ends the episode after it returns or raises), and, when the
scenario has people, its ``Cast``: the events due fired before each of the
agent's calls, ``message_user`` answered by the user after the user has acted,
the user's own tools refused to the agent, and the conversation ended when the
user ends it. It knows nothing of grading: it says how the episode ended
(``ended_by``) and hands graders the ``Episode`` it left.

Three things drive one. A ``Trial`` (``trial.py``) wraps it with a lock, the
instance it makes, and the grade once the episode ends; the replay of a
scenario's reference solution plays the solution through one; and the mutant
panel of ``seahaven scenarios check`` plays each of its episodes through a fresh
one on an instance restored to the start (``seahaven.evaluation.stage``). So a
panel's episode, a replay and a trial take the same calls the same way, user
and events included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seahaven.errors import ArgumentError, ToolError, WorldBug
from seahaven.grading.episode import Episode
from seahaven.scenarios.model import SUBMIT_TOOL
from seahaven.scenarios.people import Cast, has_people
from seahaven.scenarios.users import UserPlayer

if TYPE_CHECKING:
    from seahaven.grading.fold import Changes
    from seahaven.instance.instance import Instance
    from seahaven.scenarios.model import Scenario
    from seahaven.stores.db import Db

__all__ = ["MAX_ANSWER_LENGTH", "EpisodeOver", "Play", "submit_listing", "submitted_answer"]

# An answer longer than this is refused: it is a report, not an answer, and it travels.
MAX_ANSWER_LENGTH = 20_000


class EpisodeOver(ToolError):
    """A call after the episode ended (the answer was submitted, or the budget spent)."""

    def __init__(self, ended_by: str, budget: int) -> None:
        reason = (
            "an answer was submitted"
            if ended_by == "submit"
            else f"its budget of {budget} tool calls is spent"
            if ended_by == "budget"
            else "the user ended the conversation"
            if ended_by == "user"
            else "it was finished"
        )
        super().__init__(
            "episode_over",
            f"the episode has ended ({reason}); no more calls are taken",
            {"ended_by": ended_by},
        )


def submit_listing() -> dict[str, Any]:
    """The ``submit`` tool as a tool list shows it."""
    return {
        "name": SUBMIT_TOOL,
        "description": (
            "Submit your final answer and end the episode. Call it once, when the task is "
            "done: put the answer to the question you were asked in `answer`, or a short note "
            "of what you did (or why you refused) when no answer is asked for. No tool can be "
            "called after it."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "answer": {
                    "type": "string",
                    "description": "The final answer, or a short note of what was done.",
                }
            },
            "required": ["answer"],
            "additionalProperties": False,
        },
    }


def submitted_answer(arguments: dict[str, Any]) -> str:
    """The answer of a ``submit`` call; an ``ArgumentError`` as a tool's would read."""
    violations: list[dict[str, Any]] = []
    stray = sorted(set(arguments) - {"answer"})
    for name in stray:
        violations.append(
            {"loc": [name], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
        )
    if "answer" not in arguments:
        violations.append({"loc": ["answer"], "msg": "Field required", "type": "missing"})
    elif not isinstance(arguments["answer"], str):
        violations.append(
            {"loc": ["answer"], "msg": "Input should be a valid string", "type": "string_type"}
        )
    elif len(arguments["answer"]) > MAX_ANSWER_LENGTH:
        violations.append(
            {
                "loc": ["answer"],
                "msg": f"String should have at most {MAX_ANSWER_LENGTH} characters",
                "type": "string_too_long",
            }
        )
    if violations:
        raise ArgumentError(SUBMIT_TOOL, violations)
    answer: str = arguments["answer"]
    return answer


class Play:
    """The agent's side of one episode of a scenario on ``instance``: calls, people, ending.

    ``calls_made`` starts the count of an episode taken up from an image of one
    that had made that many calls; the user's and the events' state is not in
    an image, so a scenario with people always plays from its start.
    """

    def __init__(
        self,
        scenario: Scenario,
        instance: Instance,
        *,
        seed: int | None,
        player: UserPlayer | None = None,
        calls_made: int = 0,
    ) -> None:
        self.scenario = scenario
        self.instance = instance
        self.seed = seed
        #: The scenario's user and events on this episode, when it has any.
        self.cast: Cast | None = None
        if has_people(scenario):
            if calls_made:
                raise WorldBug(
                    f"scenario {scenario.id!r} has a user or events, whose state an image of "
                    "the instance does not hold: play its episodes from the start"
                )
            self.cast = Cast(scenario, instance, seed=seed, player=player)
        #: How many calls the agent has made (an accepted ``submit`` not counted).
        self.calls_made = calls_made
        #: The submitted answer, once there is one.
        self.answer: str | None = None
        #: How the episode ended: ``submit``, ``budget``, ``user`` or ``finish``; ``None`` before.
        self.ended_by: str | None = None

    # --- what the agent sees -----------------------------------------------------------------

    @property
    def budget(self) -> int:
        """How many tool calls the agent may make."""
        return self.scenario.budget

    @property
    def calls_left(self) -> int:
        """How many more tool calls the agent may make."""
        return max(0, self.scenario.budget - self.calls_made)

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.ended_by is not None

    @property
    def submitted(self) -> bool:
        """Whether the agent ended the episode with ``submit``."""
        return self.ended_by == "submit"

    def tools(self) -> list[dict[str, Any]]:
        """The world's tool list as the agent sees it, ``submit`` last.

        With a user, the user's own tools are left out and ``message_user`` comes
        before ``submit``.
        """
        listing = self.instance.tools()
        if self.cast is not None:
            listing = self.cast.agent_tools(listing)
        return [*listing, submit_listing()]

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The conversation with the scenario's user so far, each message with its speaker."""
        return [] if self.cast is None else [dict(message) for message in self.cast.conversation]

    # --- the agent's moves -------------------------------------------------------------------

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool as the agent: the world's, ``message_user`` (with a user), or ``submit``.

        Every call counts against the budget but a ``submit`` that is accepted;
        the call that spends the budget ends the episode after it returns or
        raises. After the end, every call raises ``EpisodeOver``.
        """
        if self.ended_by is not None:
            raise EpisodeOver(self.ended_by, self.scenario.budget)
        cast = self.cast
        if cast is not None:
            cast.before_agent_call(self.calls_made)
        if tool == SUBMIT_TOOL:
            try:
                answer = submitted_answer(arguments)
            except ArgumentError:
                self._count_call()
                raise
            self.submit(answer)
            return {"submitted": True, "answer": answer}
        try:
            if cast is not None and cast.takes(tool):
                answered = cast.agent_message(arguments)
                if answered["ended"]:
                    self.ended_by = "user"  # the user ended the conversation, and the episode
                return answered
            return self.instance.call(tool, **arguments)
        finally:
            self._count_call()

    def submit(self, answer: str) -> None:
        """End the episode with the agent's answer."""
        if self.ended_by is not None:
            raise EpisodeOver(self.ended_by, self.scenario.budget)
        answer = submitted_answer({"answer": answer})
        if self.cast is not None:
            # Submitting is the agent's move too: what was due before it happens first.
            self.cast.before_agent_call(self.calls_made)
        self.answer = answer
        self.ended_by = "submit"

    def finish(self) -> None:
        """End the episode where it stands, if it has not ended."""
        if self.ended_by is None:
            self.ended_by = "finish"

    def _count_call(self) -> None:
        self.calls_made += 1
        if self.calls_made >= self.scenario.budget and self.ended_by is None:
            self.ended_by = "budget"

    # --- the outcome -------------------------------------------------------------------------

    def episode(
        self,
        *,
        start: Callable[[], Db] | None = None,
        solution: Callable[[], Changes] | None = None,
    ) -> Episode:
        """The episode as graders read it, as the instance holds it now."""
        return Episode.of(
            self.instance,
            answer=self.answer,
            submitted=self.submitted,
            start=start,
            solution=solution,
            conversation=self.conversation,
            ended_by=self.ended_by,
        )

    def report(self) -> dict[str, Any]:
        """What the people of the episode add to a trial's report (empty keys without any)."""
        return self.cast.report() if self.cast is not None else Cast.report_of_none()
