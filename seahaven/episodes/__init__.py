"""Episodes driven from outside an evaluation: as data, as files, in process, as TRL environments.

``model`` (``Episode``, ``EpisodeResult``, ``CallOutcome``: episodes as data),
``run`` (``run_episode`` and ``run_in_process``, the in-process runner every
runner of episodes reuses), ``files`` (episode and result files as JSON lines)
and ``trl`` (scenarios as TRL environments). It sits on the scenarios.

This package's face re-exports the data and the runner, the names
``seahaven.episodes`` has always offered.
"""

from seahaven.episodes.model import (
    EPISODE_OPTION_FIELDS,
    CallError,
    CallOutcome,
    Episode,
    EpisodeError,
    EpisodeResult,
    Policy,
    Timings,
    ToolCall,
    check_unique,
)
from seahaven.episodes.run import WorldLoader, run_episode, run_in_process

__all__ = [
    "EPISODE_OPTION_FIELDS",
    "CallError",
    "CallOutcome",
    "Episode",
    "EpisodeError",
    "EpisodeResult",
    "Policy",
    "Timings",
    "ToolCall",
    "WorldLoader",
    "check_unique",
    "run_episode",
    "run_in_process",
]
