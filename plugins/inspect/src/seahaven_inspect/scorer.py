"""The scorer: the scenario's grader on the episode, its checks as the explanation.

The episode is ended where it stands if the solver did not end it
(``Trial.finish()``, as ``seahaven eval`` does for a policy that returns), and
graded. The score's value is the grade's score; its answer is the submitted
answer; its explanation lists every check with its verdict and reason; its
metadata holds what a ``seahaven eval`` result line holds for the trial
(passed, the checks, calls, how it ended, ``state_sha256``, the seed). A
failure of the world under the agent (a tool that raised something other than
a refusal) fails the sample instead of scoring it, as an errored trial is left
out of ``seahaven eval``'s scores.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from seahaven.grading import Grade
from seahaven_inspect.episodes import episode_of

__all__ = ["explanation", "seahaven_grader"]


class WorldFailure(RuntimeError):
    """The world (or its grader) failed under the agent: the sample is not scored."""


def explanation(grade: Grade) -> str:
    """Every check of a grade on a line: its verdict, its name and why."""
    lines = [grade.summary()]
    lines.extend(
        f"{'pass' if check.passed else 'FAIL'} {check.name}: {check.why}" for check in grade.checks
    )
    return "\n".join(lines)


@scorer(metrics=[mean(), stderr()])
def seahaven_grader() -> Scorer:
    """Grade the sample's episode with its scenario's grader."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = episode_of(state)
        trial, session = episode.trial, episode.session
        if session.failure is not None:
            raise WorldFailure(session.failure.message)
        grade = trial.finish()
        return Score(
            value=grade.score,
            answer=trial.answer,
            explanation=explanation(grade),
            metadata={
                "passed": grade.passed,
                "checks": [check.to_dict() for check in grade.checks],
                "calls": trial.calls_made,
                "ended_by": trial.ended_by,
                "seed": trial.seed,
                "scenario_hash": trial.scenario.hash,
                "state_sha256": trial.state_sha256(),
            },
        )

    return score
