"""``trial_runner``: an eval on a real local Ray cluster scores every trial as in process.

The pack is ``trial_cases``'s: scenarios on a shop world of that module and on the
installed company world. Each test compares, trial by trial, what matters of a
result (score, pass, checks, calls, answer, error, and ``state_sha256``, the hash of
the change log and the call log) between ``evaluate(...)`` in this process and
``evaluate(..., runner=trial_runner(...))`` on the module's cluster.
"""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trial_cases
from seahaven_ray import TRIAL_ACTOR_PREFIX, trial_runner

import seahaven
from seahaven.evaluation import (
    Policy,
    TrialResult,
    describe_policy,
    evaluate,
    idle_policy,
    plan,
    run_in_process,
    solution_policy,
)
from seahaven.registry import refresh
from seahaven.scenarios import Scenario, ScenarioSet, load_pack, refresh_packs

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An installed distribution publishing the shop world and a pack, here and on the workers."""
    folder = tmp_path_factory.mktemp("site")
    dist_info = folder / "raytrials_dist-1.0.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: raytrials-dist\nVersion: 1.0.0\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        textwrap.dedent(
            f"""\
            [seahaven.worlds]
            {trial_cases.world.name} = trial_cases:world

            [seahaven.scenarios]
            {trial_cases.INSTALLED} = trial_cases:installed_pack
            """
        ),
        encoding="utf-8",
    )
    sys.path.insert(0, str(folder))
    refresh()
    refresh_packs()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        refresh()
        refresh_packs()


@pytest.fixture(scope="module")
def worker_paths(site: Path) -> list[Path]:
    """The workers see the installed distribution too."""
    return [site]


def comparable(result: TrialResult) -> dict[str, Any]:
    """Everything of a result but where and how fast it ran, and which policy ran it."""
    return result.model_dump(
        exclude={"runner", "seconds", "episode_seconds", "grade_seconds", "policy"}
    )


def by_key(results: list[TrialResult]) -> dict[tuple[str, int], dict[str, Any]]:
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for result in results:
        assert result.key not in found, f"{result.key} has two results"
        found[result.key] = comparable(result)
    return found


def on_ray(**options: Any) -> Any:
    return trial_runner(None, **{"workers": 2, **options})


def assert_same_as_in_process(
    pack: ScenarioSet, policy: Policy, trials: int = 2, **ray_options: Any
) -> list[TrialResult]:
    here_summary, here = evaluate(pack, policy, trials=trials)
    there_summary, there = evaluate(pack, policy, trials=trials, runner=on_ray(**ray_options))
    assert by_key(there) == by_key(here)
    assert {result.policy for result in there} == {describe_policy(policy)}
    assert all(result.grade_seconds is not None for result in there)
    assert there_summary == here_summary
    assert all(result.runner.startswith(f"ray actor {TRIAL_ACTOR_PREFIX}-") for result in there)
    return there


@pytest.mark.parametrize("policy", [solution_policy, idle_policy], ids=["solution", "idle"])
def test_an_eval_on_ray_scores_every_trial_as_in_process(policy: Policy) -> None:
    pack = load_pack("trial_cases:pack")
    assert pack.source == "trial_cases:pack"  # each worker imports it itself
    there = assert_same_as_in_process(pack, policy)
    assert len(there) == 2 * len(pack)
    assert len({result.runner for result in there}) == 2
    scores = {result.score for result in there}
    assert scores == ({1.0} if policy is solution_policy else {0.0})
    # The seed is the trial's, so the two trials of a scenario that mints ids differ.
    minted = {result.state_sha256 for result in there if result.scenario == "order-for-ada"}
    assert len(minted) == (2 if policy is solution_policy else 1)


def test_an_async_policy_is_awaited_on_ray_as_in_process() -> None:
    pack = load_pack("trial_cases:pack")
    there = assert_same_as_in_process(pack, trial_cases.async_solution, trials=1)
    _, solved = evaluate(pack, solution_policy, trials=1)
    assert by_key(there) == by_key(solved)


def test_a_policy_named_module_attr_and_its_errors_are_the_same_on_ray() -> None:
    pack = load_pack("trial_cases:pack")
    specs = plan(pack, trials=2)
    here = list(run_in_process(specs, trial_cases.flaky_policy))
    there = list(on_ray()(specs, "trial_cases:flaky_policy"))
    assert by_key(there) == by_key(here)
    errors = [result for result in there if result.error is not None]
    assert errors and all(result.error.kind == "policy" for result in errors if result.error)
    assert any(
        "lost the thread" in (result.error.message if result.error else "") for result in errors
    )


def test_a_pack_built_in_python_travels_pickled_with_a_policy_object() -> None:
    pack = trial_cases.make_pack()
    assert pack.source is None
    there = assert_same_as_in_process(pack, trial_cases.Greedy(times=2), trials=1)
    assert {result.score for result in there} == {0.0, 1.0}


def test_a_world_object_in_a_pack_travels_by_its_registered_name() -> None:
    pack = trial_cases.make_pack(shop=trial_cases.world)
    assert isinstance(pack.get("ship-o1").world, seahaven.World)
    assert_same_as_in_process(pack, solution_policy, trials=1)


def test_a_world_object_that_is_not_registered_cannot_travel() -> None:
    stray = seahaven.World(
        name="stray-shop",
        version="1.0.0",
        schema=trial_cases.world.schema,
        state_format="seahaven.state/1",
    )
    pack = trial_cases.make_pack(shop=stray)
    with pytest.raises(seahaven.WorldBug, match="holds the World 'stray-shop' itself") as raised:
        list(on_ray()(plan(pack), solution_policy))
    assert "world='module:attr'" in str(raised.value)


def test_an_installed_pack_is_loaded_by_name_on_each_worker() -> None:
    pack = load_pack(trial_cases.INSTALLED)
    assert pack.source == trial_cases.INSTALLED
    assert_same_as_in_process(pack, solution_policy, trials=1)


def test_a_worker_with_another_version_of_the_pack_is_a_world_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The driver's copy of the installed pack says 9.9.9; the workers' still say 1.0.0.
    monkeypatch.setenv(trial_cases.VERSION_ENV, "9.9.9")
    refresh_packs()
    try:
        pack = load_pack(trial_cases.INSTALLED)
        assert pack.version == "9.9.9"
        with pytest.raises(seahaven.WorldBug, match="is not the driver's") as raised:
            list(on_ray()(plan(pack, trials=1), solution_policy))
        message = str(raised.value)
        assert "version 1.0.0 there, 9.9.9 in the driver" in message
        assert "install the same version of the pack on every worker" in message
    finally:
        monkeypatch.delenv(trial_cases.VERSION_ENV)
        refresh_packs()


def test_a_policy_that_does_not_pickle_is_a_world_bug_before_ray_starts(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with pytest.raises(
        seahaven.WorldBug, match="cannot be sent to Ray workers: it does not pickle"
    ):
        evaluate(trial_cases.pack, trial_cases.Locked(), out=out, runner=on_ray())
    assert not out.exists()  # refused before the first trial: no file at all
    with pytest.raises(seahaven.WorldBug, match="is of type int, not a function"):
        on_ray()(plan(trial_cases.pack), 42)


def test_a_policy_the_workers_cannot_import_is_a_world_bug(tmp_path: Path) -> None:
    folder = tmp_path / "driver-only"
    folder.mkdir()
    (folder / "driver_only_policy.py").write_text(
        "def play(session):\n    return None\n", encoding="utf-8"
    )
    sys.path.insert(0, str(folder))
    try:
        driver_only_policy = importlib.import_module("driver_only_policy")
        with pytest.raises(seahaven.WorldBug, match="cannot be loaded on ray actor") as raised:
            evaluate(trial_cases.pack, driver_only_policy.play, runner=on_ray())
        message = str(raised.value)
        assert "the policy driver_only_policy:play" in message
        assert "ModuleNotFoundError" in message and "importable on every worker" in message
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("driver_only_policy", None)


def test_a_trial_whose_world_fails_stops_the_eval_as_in_process() -> None:
    broken = Scenario.model_validate(
        {
            "id": "no-fixture",
            "world": trial_cases.SHOP,
            "instructions": "Start from a fixture the shop does not have.",
            "start": {"fixture": "nowhere"},
            "grader": "nothing_else_changed",
        }
    )
    pack = ScenarioSet("broken", "1.0.0", [*trial_cases.scenarios()[:2], broken])
    with pytest.raises(seahaven.WorldBug) as here:
        evaluate(pack, solution_policy)
    with pytest.raises(seahaven.WorldBug) as there:
        evaluate(pack, solution_policy, runner=on_ray())
    assert str(here.value) in str(there.value)
    assert str(there.value).startswith("trial broken/no-fixture/0 on ray actor")


def test_a_trial_whose_worker_dies_runs_again_elsewhere_once(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    pack = trial_cases.pack
    _, there = evaluate(
        pack, trial_cases.DiesOnce(str(marker)), trials=2, runner=on_ray(max_attempts=3)
    )
    assert marker.exists(), "no worker died"
    _, here = evaluate(pack, solution_policy, trials=2)
    assert by_key(there) == by_key(here)
    dead_pid = marker.read_text(encoding="utf-8")
    again = [result for result in there if result.scenario == trial_cases.GATED]
    assert again and all(f"pid {dead_pid})" not in result.runner for result in again)


def test_a_trial_whose_worker_dies_every_time_is_a_runner_error() -> None:
    pack = trial_cases.pack
    _, there = evaluate(pack, trial_cases.dying_policy, trials=1, runner=on_ray(max_attempts=1))
    _, here = evaluate(pack, solution_policy, trials=1)
    found, expected = by_key(there), by_key(here)
    assert sorted(found) == sorted(expected)
    died = found.pop((trial_cases.GATED, 0))
    assert died["score"] == 0.0 and died["passed"] is False and died["state_sha256"] is None
    assert died["error"]["kind"] == "runner" and died["errored"] is True
    assert "the worker died on each of 1 attempts" in died["error"]["message"]
    assert died["world"] == "raytrial-shop" and died["world_version"] == "1.2.0"
    for key, result in found.items():
        # A trial that waited on the same actor went down with it, with no attempt left.
        if result["error"] is not None and result["error"]["kind"] == "runner":
            assert "the worker died" in result["error"]["message"]
        else:
            assert result == expected[key]


def test_a_trial_past_its_time_limit_is_a_timeout_and_the_rest_run_on(tmp_path: Path) -> None:
    pack = trial_cases.pack
    stalls = trial_cases.Stalls(str(tmp_path / "never"))
    _, there = evaluate(pack, stalls, trials=1, runner=on_ray(trial_timeout=20))
    _, here = evaluate(pack, solution_policy, trials=1)
    found, expected = by_key(there), by_key(here)
    stalled = found.pop((trial_cases.GATED, 0))
    # The agent's failure, scored: a trial that runs out of time has failed the task.
    assert stalled["error"]["kind"] == "timeout" and stalled["score"] == 0.0
    assert stalled["errored"] is False
    assert "ran longer than the 20 seconds allowed (trial_timeout)" in stalled["error"]["message"]
    assert found == {key: value for key, value in expected.items() if key in found}
    assert len(found) == len(expected) - 1


def test_ctrl_c_stops_the_actors_and_the_file_resumes(tmp_path: Path) -> None:
    import ray

    pack = trial_cases.pack
    out = tmp_path / "results.jsonl"

    def interrupt_at_three(result: TrialResult, done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(
            pack, solution_policy, trials=2, out=out, runner=on_ray(), progress=interrupt_at_three
        )
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    # The eval closed the runner as it stopped: none of its actors is left running.
    alive = [
        name
        for name in ray.util.list_named_actors()
        if name.startswith(TRIAL_ACTOR_PREFIX) and _alive(ray, name)
    ]
    assert alive == []

    summary, _ = evaluate(pack, solution_policy, trials=2, out=out, resume=True, runner=on_ray())
    assert summary.results == 2 * len(pack) and summary.missing == 0
    expected = tmp_path / "in-process.jsonl"
    evaluate(pack, solution_policy, trials=2, out=expected)
    assert trial_cases.summary_of(out) == trial_cases.summary_of(expected)


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


def answer_where_the_stores_are(session: Any) -> None:
    """A policy that submits where its trial's instance keeps its stores (a test's peek)."""
    session.submit(session._trial.instance.storage)


def test_storage_reaches_the_trials_on_the_actors() -> None:
    pack = load_pack("trial_cases:pack")
    for where in ("disk", "memory"):
        _, there = evaluate(pack, answer_where_the_stores_are, runner=on_ray(storage=where))
        assert {result.answer for result in there} == {where}
        assert all(result.error is None for result in there)
    # Named nowhere: the actor's SEAHAVEN_STORAGE (the driver's, which the local cluster
    # inherits), else memory, as for every runner.
    _, there = evaluate(pack, answer_where_the_stores_are, runner=on_ray())
    assert {result.answer for result in there} == {os.environ.get("SEAHAVEN_STORAGE") or "memory"}
    with pytest.raises(seahaven.WorldBug, match="storage must be 'memory' or 'disk'"):
        trial_runner(None, storage="tape")


def test_bad_options_are_refused_and_no_trials_start_nothing() -> None:
    for options in (
        {"workers": 0},
        {"trials_per_worker": 0},
        {"max_attempts": 0},
        {"trial_timeout": -1},
        {"trial_timeout": "10"},
    ):
        with pytest.raises(seahaven.WorldBug):
            trial_runner(None, **options)
    assert list(on_ray()([], solution_policy)) == []
