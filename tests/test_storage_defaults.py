"""Where an instance's stores live when nobody names a storage: two defaults, one rule.

A plain ``world.instance(...)`` is held by its caller, so it keeps the seed's
files: one SQLite file per node in one instance directory, ``inst.state_path``
the root's. An instance a runner makes for itself and never hands out (a trial,
an eval's, an episode's, a served session's, ``seahaven mcp``'s) keeps its stores
in memory, where the speed is. ``SEAHAVEN_STORAGE`` sets both for a process.
The serving plugins' own suites check their doors (``seahaven serve``,
``seahaven.http``, ``seahaven mcp``, Ray).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_worlds import make_depot, where_pack, where_scenario
from typer.testing import CliRunner

import seahaven
from seahaven import cli
from seahaven.episodes import Episode, run_episode
from seahaven.episodes.trl import environment
from seahaven.evaluation import evaluate, in_process, run_trial
from seahaven.evaluation.run import LocalSession
from seahaven.registry import plugins
from seahaven.scenarios import Trial
from seahaven.stores import storage as storage_module


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``SEAHAVEN_STORAGE``: each door's own default decides."""
    monkeypatch.delenv("SEAHAVEN_STORAGE", raising=False)


def made_files(work_dir: Path) -> bool:
    """Whether any instance of a world with this ``work_dir`` has had a directory."""
    # A world's own work_dir is made with its first instance on disk, and stays after it.
    return work_dir.exists()


def submit_where(session: LocalSession) -> None:
    """A policy that puts a box and submits where the trial's stores are, as its tool says."""
    session.call("put", id="b1", n=1)
    session.submit(str(session.call("where_stored")))


# --- a plain instance: the seed's files ----------------------------------------------------------


@pytest.mark.usefixtures("unset")
def test_a_plain_instance_keeps_one_file_per_node_in_one_directory() -> None:
    from company_world import world as company

    with company.instance("acme") as inst:
        assert inst.storage == "disk"
        # As the seed's examples read it: the root's file, its siblings beside it.
        root = Path(inst.state_path)
        assert root.name == "state.sqlite" and root.parent == inst.directory
        names = sorted(path.name for path in root.parent.iterdir())
        assert names == [
            "state.chat.sqlite",
            "state.payments.sqlite",
            "state.payments_eu.sqlite",
            "state.portal.sqlite",
            "state.sqlite",
        ]
    assert not root.parent.exists()


@pytest.mark.usefixtures("unset")
def test_a_plain_blank_composite_has_its_files_too(tmp_path: Path) -> None:
    depot = make_depot(tmp_path / "work")
    with depot.instance() as inst:
        inst.call("put", id="b1", n=1)
        inst.call("till_sell", id="s1", n=2)
        assert inst.call("where_stored") == "disk"
        assert sorted(path.name for path in inst.directory.iterdir()) == [
            "state.sqlite",
            "state.till.sqlite",
        ]


# --- runners: memory ------------------------------------------------------------------------------


@pytest.mark.usefixtures("unset")
def test_a_trial_keeps_every_instance_it_makes_in_memory(tmp_path: Path) -> None:
    depot = make_depot(tmp_path / "work")
    with Trial(where_scenario(depot), seed=1, world=depot) as trial:
        assert trial.instance.storage == "memory"
        with pytest.raises(seahaven.WorldBug, match="in memory"):
            _ = trial.instance.state_path
        trial.call("put", id="b1", n=1)
        # The grader opens the start again and replays the solution: two more instances.
        assert trial.finish().score == 1.0
    assert not made_files(tmp_path / "work")


@pytest.mark.usefixtures("unset")
def test_an_eval_in_process_keeps_its_trials_in_memory(tmp_path: Path) -> None:
    depot = make_depot(tmp_path / "work")
    pack = where_pack(depot)
    _, results = evaluate(pack, submit_where, trials=2)
    assert [result.answer for result in results] == ["memory", "memory"]
    _, results = evaluate(pack, submit_where, runner=in_process())
    assert [result.answer for result in results] == ["memory"]
    assert results[0].error is None
    [planned] = seahaven.evaluation.plan(pack, trials=1)
    assert run_trial(planned, submit_where).answer == "memory"
    assert not made_files(tmp_path / "work")


@pytest.mark.usefixtures("unset")
def test_a_trl_environment_keeps_its_trials_in_memory(tmp_path: Path) -> None:
    depot = make_depot(tmp_path / "work")
    env_class = environment(where_pack(depot))
    with env_class() as env:
        env.reset(scenario="where")
        assert env.trial is not None and env.trial.instance.storage == "memory"
    assert not made_files(tmp_path / "work")


@pytest.mark.usefixtures("unset")
def test_an_episode_keeps_its_instance_in_memory() -> None:
    episode = Episode(
        episode_id="e1",
        world="storage_worlds:world",
        calls=[{"tool": "where_stored", "arguments": {}}],
    )
    result = run_episode(episode)
    assert result.status == "ok", result.error
    assert result.calls[0].result == "memory"
    on_disk = run_episode(episode.model_copy(update={"storage": "disk"}))
    assert on_disk.calls[0].result == "disk"


@pytest.mark.usefixtures("unset")
def test_seahaven_episodes_run_keeps_its_instance_in_memory() -> None:
    app = cli.build_app(plugins.make_plugin_manager(entry_points=False))
    script = '[{"tool": "where_stored", "arguments": {}}]'
    found = {}
    for extra in ([], ["--storage", "disk"]):
        result = CliRunner().invoke(
            app, ["episodes", "run", "storage_worlds:world", "--calls", "-", *extra], input=script
        )
        assert result.exit_code == 0, result.output
        found[tuple(extra)] = result.output
    assert 'where_stored() -> "memory"' in found[()], found[()]
    assert 'where_stored() -> "disk"' in found[("--storage", "disk")]


# --- the variable sets both ---------------------------------------------------------------------


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_seahaven_storage_sets_the_default_of_both(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEAHAVEN_STORAGE", where)
    depot = make_depot(tmp_path / "work")
    with depot.instance() as inst:
        assert inst.storage == where
    with Trial(where_scenario(depot), seed=1, world=depot) as trial:
        assert trial.instance.storage == where
    _, results = evaluate(where_pack(depot), submit_where)
    assert [result.answer for result in results] == [where]
    result = run_episode(
        Episode(episode_id="e", world="storage_worlds:world", calls=[{"tool": "where_stored"}])
    )
    assert result.calls[0].result == where
    # Named, a storage has the last word over the variable.
    other = "disk" if where == "memory" else "memory"
    with depot.instance(storage=other) as inst:  # type: ignore[arg-type]
        assert inst.storage == other
    with Trial(where_scenario(depot), seed=1, world=depot, storage=other) as trial:
        assert trial.instance.storage == other


def test_the_two_defaults_are_named_in_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEAHAVEN_STORAGE", raising=False)
    assert storage_module.INSTANCE_STORAGE == "disk"
    assert storage_module.RUNNER_STORAGE == "memory"
    assert storage_module.default_storage() == "disk"
    assert storage_module.default_storage(runner=True) == "memory"
    assert storage_module.runner_storage(None) == "memory"
    assert storage_module.runner_storage("disk") == "disk"
    monkeypatch.setenv("SEAHAVEN_STORAGE", "disk")
    assert storage_module.runner_storage(None) == "disk"
    with pytest.raises(seahaven.WorldBug, match="'memory' or 'disk'"):
        storage_module.runner_storage("tape")
