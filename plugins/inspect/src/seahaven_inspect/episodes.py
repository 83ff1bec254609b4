"""One trial per sample: made by the task's setup, read by the scorer, closed by its cleanup.

Inspect runs a task's ``setup`` solver before any solver (even one given with
``--solver``), and its ``cleanup`` after the sample has been scored, whether it
finished, raised, hit a limit or was cancelled. ``bind_trial`` makes the
scenario's ``Trial`` there, with the seed ``seahaven eval`` gives the same trial
(``trial_seed(pack, scenario, epoch - 1)``), and puts its tools in
``state.tools``; ``release_trial`` destroys the trial's instances. Between the
two, the trial is found by the sample's ``uuid``: it is not data, so it stays
out of Inspect's store and log.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from inspect_ai.solver import Generate, Solver, TaskState, solver

from seahaven.evaluation import LocalSession, trial_seed
from seahaven.scenarios import Scenario, ScenarioSet, Trial
from seahaven_inspect.tools import episode_tools

__all__ = [
    "Episode",
    "bind_trial",
    "episode_of",
    "live_episodes",
    "live_scenario",
    "release_trial",
]


@dataclass(frozen=True, slots=True)
class Episode:
    """A sample's trial and the session its tools call through."""

    trial: Trial
    session: LocalSession


_live: dict[str, Episode] = {}
_lock = threading.Lock()


def live_episodes() -> int:
    """How many samples of this process hold a trial now (made and not yet released)."""
    with _lock:
        return len(_live)


def live_scenario(scenario_hash: str) -> Scenario | None:
    """The scenario of a sample this process is running, found by its hash; ``None`` if none."""
    with _lock:
        episodes = list(_live.values())
    return next(
        (e.trial.scenario for e in episodes if e.trial.scenario.hash == scenario_hash), None
    )


def episode_of(state: TaskState) -> Episode:
    """The trial ``bind_trial`` made for this sample; a ``RuntimeError`` naming the fix if none."""
    with _lock:
        found = _live.get(state.uuid)
    if found is None:
        raise RuntimeError(
            f"sample {state.sample_id!r} has no Seahaven trial: its task's setup did not run "
            "bind_trial(); build the task with seahaven.inspect.task(...), which adds it"
        )
    return found


@solver
def bind_trial(pack: ScenarioSet, storage: str | None = None) -> Solver:
    """Make the sample's trial and hand its tools (the world's and ``submit``) to the solver."""

    async def setup(state: TaskState, generate: Generate) -> TaskState:
        scenario = pack.get(str(state.sample_id))
        seed = trial_seed(pack.name, scenario.id, state.epoch - 1)
        # A retried sample (--retry-on-error) runs setup again: its old trial goes first.
        _release(state.uuid)
        trial = Trial(scenario, seed=seed, storage=storage)
        try:
            session = LocalSession(trial)
            episode = Episode(trial, session)
            state.tools = list(episode_tools(session))
            with _lock:
                _live[state.uuid] = episode
        except BaseException:
            trial.close()
            raise
        return state

    return setup


async def release_trial(state: TaskState) -> None:
    """Destroy the sample's trial (its instance, and the start and replay it kept)."""
    _release(state.uuid)


def _release(uuid: str) -> None:
    with _lock:
        episode = _live.pop(uuid, None)
    if episode is not None:
        episode.trial.close()
