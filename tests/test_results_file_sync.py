"""A results file: each line reaches the system as written, the disk at most once a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from seahaven.evaluation import evaluate, solution_policy
from seahaven.evaluation import results as results_module
from seahaven.evaluation.results import ResultsFile
from seahaven.scenarios import ScenarioSet, load_pack


@pytest.fixture(scope="module")
def company() -> ScenarioSet:
    return load_pack("company")


def test_a_results_file_is_synced_at_most_once_a_second_and_when_closed(
    company: ScenarioSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(results_module.os, "fsync", synced.append)
    _, results = evaluate(company, solution_policy, trials=1)
    file = ResultsFile(tmp_path / "r.jsonl")
    file.open(resume=False)
    for result in results:
        file.write(result)
        # Every line reaches the system as it is written: another reader sees it.
        assert (tmp_path / "r.jsonl").read_text().count("\n") == results.index(result) + 1
    during = len(synced)
    file.close()
    assert len(synced) == during + 1
    # The writes took well under a second each: at most one sync per second passed.
    assert during <= 1 + int(sum(result.seconds for result in results))
    assert [r.key for r in ResultsFile(tmp_path / "r.jsonl").read()] == [r.key for r in results]


def test_a_results_file_syncs_each_line_once_its_interval_has_passed(
    company: ScenarioSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(results_module.os, "fsync", synced.append)
    monkeypatch.setattr(results_module, "SYNC_SECONDS", 0.0)
    _, results = evaluate(company, solution_policy, trials=1, scenarios=[next(iter(company)).id])
    file = ResultsFile(tmp_path / "r.jsonl")
    file.open(resume=False)
    for result in results * 3:
        file.write(result)
    assert len(synced) == 3
    file.close()
    assert len(synced) == 4
