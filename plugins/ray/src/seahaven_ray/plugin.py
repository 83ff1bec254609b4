"""The Ray plugin's hook: the runner behind ``seahaven episodes run --ray ADDRESS``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from seahaven import hookimpl

if TYPE_CHECKING:
    from seahaven.episodes import Episode, EpisodeResult
    from seahaven.registry.hookspecs import EpisodeFileRunner

__all__ = ["seahaven_episode_file_runner"]


@hookimpl
def seahaven_episode_file_runner(address: str) -> EpisodeFileRunner | None:
    """Run ``seahaven episodes run --ray ADDRESS`` on Ray's actors; ``None`` without Ray."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return None

    def run(
        episodes: Iterable[Episode],
        *,
        workers: int | None,
        instances_per_worker: int,
        max_attempts: int,
        episode_timeout: float | None,
    ) -> Iterator[EpisodeResult]:
        from seahaven_ray.cluster import run_episodes

        return run_episodes(
            episodes,
            address=None if address == "local" else address,
            workers=workers,
            instances_per_worker=instances_per_worker,
            max_attempts=max_attempts,
            episode_timeout=episode_timeout,
        )

    return run
