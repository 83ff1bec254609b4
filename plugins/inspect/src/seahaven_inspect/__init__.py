"""Scenario packs in Inspect AI; imported as ``seahaven.inspect``.

``task(pack, split=..., solver=...)`` is a pack as an Inspect ``Task``: a
sample per scenario, a trial per sample, Inspect's ReAct agent by default and
the scenario's grader as the scorer. ``inspect eval seahaven/PACK`` runs the
same task with no Python written (``seahaven_inspect.registry``, loaded
through the ``inspect_ai`` entry point). The other names are the parts, for a
task of your own: ``dataset``, ``bind_trial`` (the setup), ``release_trial``
(the cleanup), ``seahaven_agent`` and ``seahaven_grader``.
"""

from __future__ import annotations

from seahaven_inspect.agent import seahaven_agent
from seahaven_inspect.episodes import bind_trial, episode_of, live_episodes, release_trial
from seahaven_inspect.samples import dataset
from seahaven_inspect.scorer import seahaven_grader
from seahaven_inspect.task import task
from seahaven_inspect.tools import episode_tools, tool_params

__all__ = [
    "bind_trial",
    "dataset",
    "episode_of",
    "episode_tools",
    "live_episodes",
    "release_trial",
    "seahaven_agent",
    "seahaven_grader",
    "task",
    "tool_params",
]
