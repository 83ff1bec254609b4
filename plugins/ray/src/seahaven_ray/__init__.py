"""Seahaven episodes and evals on Ray: ``seahaven.ray``.

Episodes are data (``Episode``), and so are their results
(``EpisodeResult``). ``run_episodes`` runs them on a Ray cluster's actors and
streams the results back as they finish; ``run_episode`` and
``run_in_process`` (the core's ``seahaven.episodes``, re-exported here) run
them here, with the same code, and so the same state documents. The core's
``seahaven episodes run`` command does either from the shell: this plugin
gives it the Ray runner, through the ``seahaven_episode_file_runner`` hook.

``trial_runner`` is the runner ``seahaven eval --ray`` uses: an eval's trials
on the same pool of actors, each graded as in process
(``seahaven.evaluation.evaluate(pack, policy, runner=trial_runner("auto"))``).

Importing this package does not import Ray; running on Ray does.
"""

from __future__ import annotations

from seahaven.episodes import (
    CallError,
    CallOutcome,
    Episode,
    EpisodeError,
    EpisodeResult,
    Policy,
    Timings,
    ToolCall,
    WorldLoader,
    run_episode,
    run_in_process,
)
from seahaven.episodes.files import EpisodeFileError, read_done, read_episodes
from seahaven_ray.cluster import (
    ACTOR_NAME_PREFIX,
    TRIAL_ACTOR_PREFIX,
    EpisodeWorker,
    PoolWorker,
    run_episodes,
)
from seahaven_ray.trials import RayTrialRunner, trial_runner

__version__ = "0.1.0"

__all__ = [
    "ACTOR_NAME_PREFIX",
    "TRIAL_ACTOR_PREFIX",
    "CallError",
    "CallOutcome",
    "Episode",
    "EpisodeError",
    "EpisodeFileError",
    "EpisodeResult",
    "EpisodeWorker",
    "Policy",
    "PoolWorker",
    "RayTrialRunner",
    "Timings",
    "ToolCall",
    "WorldLoader",
    "__version__",
    "read_done",
    "read_episodes",
    "run_episode",
    "run_episodes",
    "run_in_process",
    "trial_runner",
]
