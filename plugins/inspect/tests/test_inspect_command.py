"""``inspect eval seahaven/PACK`` as a user types it, with Inspect's mock model and a scripted one.

The scripted provider (``--model seahaven/solution``) plays every reference
solution: the log's scores, and each sample's ``state_sha256``, equal what
``seahaven eval --policy seahaven.evaluation:solution_policy`` gives for the
same trials, scenario by scenario and epoch by epoch. The company scenarios run
on a running clock, which stamps rows with the time of the run, so that run
takes them on a ticking clock (``ticking_packs``), through ``seahaven/pack``.
"""

from __future__ import annotations

import math
from pathlib import Path

from conftest import HERE, inspect_eval, instances_left, tiktoken_cache
from ticking_packs import company_tick

from seahaven.evaluation import evaluate, solution_policy
from seahaven.scenarios import load_pack


def test_mockllm_runs_five_samples_offline_and_each_is_graded(tmp_path: Path) -> None:
    log = inspect_eval(
        tmp_path,
        "seahaven/company",
        "--model",
        "mockllm/model",
        "--limit",
        "5",
        TIKTOKEN_CACHE_DIR=str(tiktoken_cache()),
    )
    assert log.status == "success", log.error
    assert log.eval.task == "seahaven/company"
    assert log.samples is not None and len(log.samples) == 5
    pack = load_pack("company")
    assert sorted(str(s.id) for s in log.samples) == sorted(s.id for s in list(pack)[:5])
    for sample in log.samples:
        assert sample.error is None
        score = sample.scores["seahaven_grader"]
        # The mock model answers in text and calls no tool: the episode ends untouched.
        assert score.metadata["ended_by"] == "finish"
        assert score.metadata["calls"] == 0
        assert score.value == 0.0
        checks = score.metadata["checks"]
        assert checks and any(not check["passed"] for check in checks)
        for check in checks:
            assert f"{check['name']}: {check['why']}" in score.explanation
        assert sample.metadata["scenario"] == f"company/{sample.id}"
        assert sample.metadata["scenario_hash"] == pack.get(str(sample.id)).hash
    assert instances_left(tmp_path) == []


def test_the_scripted_provider_scores_as_seahaven_eval_does_epoch_by_epoch(
    tmp_path: Path,
) -> None:
    pack = company_tick()
    log = inspect_eval(
        tmp_path,
        "seahaven/pack",
        "--model",
        "seahaven/solution",
        "-T",
        "pack=ticking_packs:company_tick",
        "-T",
        "split=test",
        "--epochs",
        "2",
        "--epochs-reducer",
        "mean,pass_k_2",
        PYTHONPATH=str(HERE),
    )
    assert log.status == "success", log.error
    assert log.eval.task == "seahaven/company-tick"  # the task is named after its pack
    _, expected = evaluate(pack, solution_policy, split="test", trials=2)
    by_trial = {(result.scenario, result.trial): result for result in expected}
    assert log.samples is not None
    assert len(log.samples) == len(by_trial) == 2 * len(pack.split("test"))
    for sample in log.samples:
        assert sample.error is None
        score = sample.scores["seahaven_grader"]
        result = by_trial[(str(sample.id), sample.epoch - 1)]
        assert score.value == result.score == 1.0, sample.id
        assert score.metadata["passed"] is result.passed is True
        assert score.metadata["state_sha256"] == result.state_sha256, sample.id
        assert score.metadata["seed"] == result.seed
        assert score.metadata["ended_by"] == result.ended_by
        assert score.metadata["calls"] == result.calls
        assert score.answer == result.answer
    # Every reference solution passes, so the mean and pass^2 are both 1.
    assert log.results is not None
    metrics = {
        (found.reducer, name): metric.value
        for found in log.results.scores
        for name, metric in found.metrics.items()
    }
    assert math.isclose(metrics[("mean", "mean")], 1.0)
    assert math.isclose(metrics[("pass_k_2", "mean")], 1.0)
    assert instances_left(tmp_path) == []
