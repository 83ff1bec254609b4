"""run_episodes on a real local Ray cluster (2 CPUs, no dashboard), against in-process runs."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from episode_cases import BlockOnce, Explodes, Stalls, comparable, mixed, scripted
from seahaven_ray import ACTOR_NAME_PREFIX, Episode, EpisodeResult, ToolCall, run_in_process

import seahaven

pytestmark = pytest.mark.usefixtures("ray_cluster")


def run_on_ray(episodes: list[Episode], **options: Any) -> list[EpisodeResult]:
    from seahaven_ray import run_episodes

    return list(run_episodes(episodes, **options))


def by_id(results: list[EpisodeResult]) -> dict[str, EpisodeResult]:
    counts = Counter(result.episode_id for result in results)
    doubled = sorted(episode_id for episode_id, count in counts.items() if count > 1)
    assert not doubled, f"more than one result for {doubled}"
    return {result.episode_id: result for result in results}


def assert_same_as_in_process(episodes: list[Episode], results: list[EpisodeResult]) -> None:
    found = by_id(results)
    assert sorted(found) == sorted(episode.episode_id for episode in episodes)
    for expected in run_in_process(episodes):
        assert comparable(found[expected.episode_id]) == comparable(expected), expected.episode_id


def test_200_episodes_on_ray_give_one_result_each_and_the_in_process_state_documents() -> None:
    episodes = mixed(200)
    results = run_on_ray(episodes, workers=2)

    assert len(results) == 200
    assert_same_as_in_process(episodes, results)
    assert all(result.ok for result in results)
    assert all(result.worker.startswith(f"ray actor {ACTOR_NAME_PREFIX}-") for result in results)
    assert len({result.worker for result in results}) == 2
    logged = [result.state["state"]["db"]["log"] for result in results if result.state]
    assert sum(len(log) for log in logged) > 1000, "the episodes changed next to nothing"
    stores = {record["world"] for log in logged for record in log}
    assert stores == {"main", "payments", "chat"}


def test_actors_that_run_several_episodes_at_once_give_the_same_answers() -> None:
    episodes = mixed(30)
    results = run_on_ray(episodes, workers=1, instances_per_worker=3)
    assert_same_as_in_process(episodes, results)
    assert len({result.worker for result in results}) == 1


def test_results_stream_back_before_the_run_ends() -> None:
    from seahaven_ray import run_episodes

    episodes = mixed(10)
    stream = run_episodes(iter(episodes), workers=1)
    first = next(stream)
    assert first.episode_id in {episode.episode_id for episode in episodes}
    rest = list(stream)
    assert len(rest) == 9
    by_id([first, *rest])


def test_a_killed_actor_loses_no_episode_and_doubles_none(tmp_path: Path) -> None:
    import ray

    marker = tmp_path / "blocked-on"
    episodes = mixed(60)
    episodes[20] = Episode(
        episode_id="blocked",
        world="company",
        fixture="acme",
        seed=99,
        clock_mode="tick",
        policy=BlockOnce(str(marker)),
    )
    from seahaven_ray import run_episodes

    results: list[EpisodeResult] = []
    killed: list[str] = []
    for result in run_episodes(episodes, workers=2):
        results.append(result)
        if not killed and marker.exists():
            actor_name = marker.read_text(encoding="utf-8").splitlines()[0]
            ray.kill(ray.get_actor(actor_name), no_restart=True)
            killed.append(actor_name)

    assert killed, "the blocking episode never started, so no actor was killed"
    assert len(results) == 60
    found = by_id(results)
    blocked = found["blocked"]
    assert blocked.ok and blocked.attempts == 2
    assert killed[0] not in blocked.worker
    # Whatever else was in flight on the dead actor was run again elsewhere, once.
    assert all(killed[0] not in result.worker for result in results if result.attempts > 1)
    assert_same_as_in_process(episodes, results)  # the marker exists now: nothing blocks


def test_an_episode_past_its_time_limit_is_given_up_and_its_actor_replaced() -> None:
    episodes = mixed(12)
    episodes[3] = Episode(
        episode_id="stalls", world="company", fixture="acme", seed=5, policy=Stalls(120.0)
    )
    results = run_on_ray(episodes, workers=2, episode_timeout=15.0)
    found = by_id(results)
    stalled = found.pop("stalls")
    assert stalled.status == "failed" and stalled.error is not None
    assert stalled.error.kind == "timeout" and stalled.attempts == 1
    assert "longer than the 15 seconds allowed" in stalled.error.message
    # The rest ran to their ends, as they do in process: on the other actor, or on the one
    # started in the stopped one's place once it has started (the rest may finish first).
    others = [episode for episode in episodes if episode.episode_id != "stalls"]
    assert_same_as_in_process(others, list(found.values()))
    stopped = stalled.error.message.split(" on ", 1)[1].split(",", 1)[0]
    assert stopped.startswith(ACTOR_NAME_PREFIX)
    assert all(result.worker for result in found.values())


def test_an_actors_start_is_not_counted_against_its_first_episodes_time_limit() -> None:
    # Loading this world takes an actor longer than each episode may run; the episodes
    # themselves take milliseconds, so each must come back done, on one actor.
    from slow_start_world import START_SECONDS

    limit = START_SECONDS / 2
    episodes = [
        Episode(
            episode_id=f"slow-start-{index}",
            world="slow_start_world:world",
            seed=index,
            now="2026-06-01T09:00:00Z",
            clock_mode="fixed",
            calls=[ToolCall(tool="note", arguments={"text": f"note {index}"})],
        )
        for index in range(3)
    ]
    results = run_on_ray(episodes, workers=1, episode_timeout=limit)
    assert [result.status for result in results] == ["ok"] * 3, [result.error for result in results]
    assert len({result.worker for result in results}) == 1
    assert_same_as_in_process(episodes, results)


def test_an_actor_that_never_starts_in_time_is_replaced_until_none_are_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Here an actor may take a second to start, and loading the world takes each six.
    import seahaven_ray.cluster

    monkeypatch.setattr(seahaven_ray.cluster, "ACTOR_START_SECONDS", 1.0)
    episodes = [
        Episode(
            episode_id=f"never-{index}",
            world="slow_start_world:world",
            calls=[ToolCall(tool="note", arguments={"text": "never written"})],
        )
        for index in range(2)
    ]
    results = run_on_ray(episodes, workers=1, max_attempts=2, episode_timeout=0.5)
    assert sorted(result.episode_id for result in results) == ["never-0", "never-1"]
    for result in results:
        assert result.status == "failed" and result.error is not None
        assert result.error.kind == "worker", result.error
        assert "no worker is left to run it" in result.error.message


def test_world_and_policy_errors_are_results_and_are_not_retried() -> None:
    episodes = [
        scripted(1),
        Episode(episode_id="no-fixture", world="company", fixture="nowhere", calls=[]),
        Episode(
            episode_id="raises",
            world="company",
            fixture="acme",
            clock_mode="tick",  # the world's default clock runs on, and would differ
            policy=Explodes(),
        ),
        Episode(episode_id="no-world", world="no-such-world", calls=[]),
    ]
    found = by_id(run_on_ray(episodes, workers=2))
    assert found["scripted-1"].ok
    for episode_id, kind in (("no-fixture", "world"), ("raises", "policy"), ("no-world", "world")):
        result = found[episode_id]
        assert result.status == "failed" and result.error is not None, episode_id
        assert result.error.kind == kind and result.attempts == 1, episode_id
    raised = found["raises"].error
    assert raised is not None and "lost its train of thought" in raised.message
    assert_same_as_in_process(episodes, list(found.values()))


def test_a_policy_that_cannot_be_pickled_fails_its_episode_only() -> None:
    class Holding:
        def __init__(self) -> None:
            self.lock = threading.Lock()

        def __call__(self, tools: Any, seen: Any) -> None:
            return None

    episodes = [
        Episode(episode_id="locked", world="company", fixture="acme", policy=Holding()),
        scripted(3),
    ]
    found = by_id(run_on_ray(episodes, workers=1))
    assert found["scripted-3"].ok
    locked = found["locked"]
    assert locked.status == "failed" and locked.error is not None
    assert locked.error.kind == "policy" and "cannot be sent to a worker" in locked.error.message


def test_bad_arguments_and_a_repeated_id_are_refused() -> None:
    from seahaven_ray import run_episodes

    for options in (
        {"workers": 0},
        {"instances_per_worker": 0},
        {"max_attempts": 0},
        {"episode_timeout": 0},
        {"episode_timeout": "10"},
    ):
        with pytest.raises(seahaven.WorldBug):
            run_episodes([scripted(1)], **options)
    stream = run_episodes([scripted(1), scripted(2), scripted(1)], workers=1)
    with pytest.raises(seahaven.WorldBug, match="given twice"):
        list(stream)


def test_no_episodes_give_no_results() -> None:
    assert run_on_ray([], workers=1) == []


def test_the_pool_actors_are_gone_after_a_run() -> None:
    import ray

    run_on_ray(mixed(4), workers=2)
    # A killed actor may take a moment to leave the list of named actors, but never comes back.
    alive = [
        name
        for name in ray.util.list_named_actors()
        if name.startswith(ACTOR_NAME_PREFIX) and _alive(ray, name)
    ]
    assert alive == []


def _alive(ray: Any, name: str) -> bool:
    try:
        handle = ray.get_actor(name)
    except ValueError:
        return False
    try:
        ray.get(handle.where.remote(), timeout=30)
    except Exception:
        return False
    return True


def test_the_command_line_joins_a_running_cluster_by_its_address(tmp_path: Path) -> None:
    """The address check before ``ray.init`` lets a real cluster's head through."""
    import ray

    address = ray.get_runtime_context().gcs_address
    episodes = tmp_path / "in.jsonl"
    episodes.write_text(
        "".join(
            json.dumps({"episode_id": f"joined-{n}", "calls": [{"tool": "whoami"}]}) + "\n"
            for n in range(2)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    command = ["episodes", "run", "company", "--episodes", str(episodes), "--out", str(out)]
    result = subprocess.run(
        [sys.executable, "-m", "seahaven.cli", *command, "--ray", address, "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(line["episode_id"] for line in lines) == ["joined-0", "joined-1"]
    assert all(line["worker"].startswith(f"ray actor {ACTOR_NAME_PREFIX}-") for line in lines)
