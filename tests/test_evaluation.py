"""Evals: trial seeds, pass@k and pass^k, the results file and resuming, and checking a pack."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, question_scenario, ship_scenario, shop_pack

import seahaven
from seahaven import grading
from seahaven.evaluation import (
    PolicySession,
    ResultsFile,
    TrialResult,
    TrialSpec,
    bootstrap_interval,
    check_pack,
    check_scenario,
    evaluate,
    idle_policy,
    pass_at_k,
    pass_hat_k,
    plan,
    run_in_process,
    solution_policy,
    trial_seed,
)
from seahaven.evaluation.run import LocalSession
from seahaven.evaluation.stats import paired_bootstrap_interval
from seahaven.scenarios import ScenarioSet, Trial


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


# --- seeds and the plan -----------------------------------------------------------------------


def test_trial_seeds_are_stable_and_differ_per_trial() -> None:
    # Fixed numbers: the same on every machine and in every release that keeps the rule.
    assert trial_seed("shop", "ship-ada", 0) == trial_seed("shop", "ship-ada", 0)
    assert trial_seed("shop", "ship-ada", 0) == 1277285240
    seeds = {trial_seed("shop", "ship-ada", trial) for trial in range(50)}
    assert len(seeds) == 50
    assert trial_seed("shop", "ada-total", 0) != trial_seed("shop", "ship-ada", 0)
    assert trial_seed("other", "ship-ada", 0) != trial_seed("shop", "ship-ada", 0)


def test_the_plan_is_scenarios_times_trials_in_order(shop: seahaven.World) -> None:
    pack = shop_pack(shop)
    specs = plan(pack, trials=2)
    assert [spec.key for spec in specs] == [
        ("ship-ada", 0),
        ("ship-ada", 1),
        ("ada-total", 0),
        ("ada-total", 1),
    ]
    assert [spec.key for spec in plan(pack, split="test")] == [("ada-total", 0)]
    assert [spec.key for spec in plan(pack, scenarios=["ship-ada"])] == [("ship-ada", 0)]
    with pytest.raises(seahaven.WorldBug, match="has no scenario 'ghost'"):
        plan(pack, scenarios=["ghost"])
    with pytest.raises(seahaven.WorldBug, match="trials is a whole number"):
        plan(pack, trials=0)
    assert specs[0].episode_id == "shop/ship-ada/0"


# --- the numbers ------------------------------------------------------------------------------


def test_pass_at_k_and_pass_hat_k_match_a_hand_computation() -> None:
    # 5 trials, 3 passing. pass^2 = C(3,2)/C(5,2) = 3/10; pass@2 = 1 - C(2,2)/C(5,2) = 9/10.
    assert pass_hat_k(5, 3, 1) == pytest.approx(3 / 5)
    assert pass_hat_k(5, 3, 2) == pytest.approx(3 / 10)
    assert pass_hat_k(5, 3, 3) == pytest.approx(1 / 10)
    assert pass_hat_k(5, 3, 4) == 0.0
    assert pass_at_k(5, 3, 1) == pytest.approx(3 / 5)
    assert pass_at_k(5, 3, 2) == pytest.approx(9 / 10)
    assert pass_at_k(5, 3, 3) == 1.0
    assert pass_at_k(5, 0, 5) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)


def test_the_interval_is_stable_and_brackets_the_mean() -> None:
    scores = {f"s{index}": [index % 3 / 2, (index + 1) % 2] for index in range(20)}
    low, high = bootstrap_interval(scores)
    assert (low, high) == bootstrap_interval(scores)
    mean = sum(sum(values) for values in scores.values()) / 40
    assert low <= mean <= high and low < high
    assert bootstrap_interval({"only": [0.5]}) == (0.5, 0.5)


def test_the_intervals_are_the_ones_random_randrange_draws_for_the_seed() -> None:
    # The draws are made without randrange's argument checks, for speed: the same numbers.
    import random

    def by_randrange(groups: list[list[float]], seed: int) -> tuple[float, float]:
        sums = [(sum(group), len(group)) for group in groups]
        rng = random.Random(seed)
        means = []
        for _ in range(2000):
            picked = [sums[rng.randrange(len(sums))] for _ in range(len(sums))]
            means.append(sum(t for t, _ in picked) / sum(c for _, c in picked))
        means.sort()
        return means[50], means[1950]

    def paired_by_randrange(values: list[float], seed: int) -> tuple[float, float]:
        rng = random.Random(seed)
        count = len(values)
        means = sorted(
            sum(values[rng.randrange(count)] for _ in range(count)) / count for _ in range(2000)
        )
        return means[50], means[1950]

    for size, seed in ((2, 0), (3, 7), (62, 0), (100, 3)):
        groups = [[(index * 7 % 5) / 4, (index % 3) / 2] for index in range(size)]
        scores = {f"s{index}": group for index, group in enumerate(groups)}
        assert bootstrap_interval(scores, seed=seed) == by_randrange(groups, seed)
        differences = [(index * 13 % 9 - 4) / 4 for index in range(size)]
        assert paired_bootstrap_interval(differences, seed=seed) == paired_by_randrange(
            differences, seed
        )


def policy_that_passes_half(session: PolicySession) -> None:
    """Solve trials with an even seed; do nothing on the others."""
    assert isinstance(session, LocalSession)
    if (session.seed or 0) % 2 == 0:
        solution_policy(session)


def test_an_eval_summarises_pass_at_k_and_pass_hat_k_per_scenario(shop: seahaven.World) -> None:
    pack = shop_pack(shop)
    summary, results = evaluate(pack, policy_that_passes_half, trials=4)
    assert summary.results == 8 and summary.scenarios == 2 and summary.trials == 4
    passes: dict[str, list[bool]] = {}
    for result in results:
        passes.setdefault(result.scenario, []).append(result.passed)
        assert result.passed is (result.seed % 2 == 0)
    for k in range(1, 5):
        by_hand = [pass_hat_k(len(trials), sum(trials), k) for trials in passes.values()]
        assert summary.pass_hat[k] == pytest.approx(sum(by_hand) / len(by_hand))
        at_hand = [pass_at_k(len(trials), sum(trials), k) for trials in passes.values()]
        assert summary.pass_at[k] == pytest.approx(sum(at_hand) / len(at_hand))
    assert summary.mean == pytest.approx(sum(r.score for r in results) / 8)
    text = summary.render()
    assert "pass@k  pass^k" in text and "2 scenarios x 4 trials" in text


def test_a_summary_of_one_trial_counts_it_in_the_singular(shop: seahaven.World) -> None:
    summary, _ = evaluate(
        shop_pack(shop), policy_that_passes_half, trials=1, scenarios=["ship-ada"]
    )
    assert summary.render().splitlines()[0].endswith(": 1 scenario x 1 trial, 1 result")


# --- what a trial records ---------------------------------------------------------------------


def test_a_result_says_which_task_it_graded_and_what_happened(shop: seahaven.World) -> None:
    pack = shop_pack(shop)
    _, results = evaluate(pack, solution_policy, split="test")
    [result] = results
    scenario = pack.get("ada-total")
    assert result.scenario == "ada-total" and result.scenario_hash == scenario.hash
    assert (result.pack, result.pack_version, result.trial) == ("shop", "1.0.0", 0)
    assert result.seed == trial_seed("shop", "ada-total", 0)
    assert (result.world, result.world_version) == ("shop", "1.0.0")
    assert (result.score, result.passed, result.calls) == (1.0, True, 1)
    assert (result.ended_by, result.answer) == ("submit", "65.00")
    assert [check["passed"] for check in result.checks] == [True, True]
    assert result.state_sha256 is not None and result.error is None
    assert result.runner == "in process"
    # The trial's time, split: the episode (instance and play) and the grading within it.
    assert result.grade_seconds is not None and result.episode_seconds is not None
    assert result.grade_seconds > 0 and result.episode_seconds > 0
    assert result.episode_seconds + result.grade_seconds == pytest.approx(result.seconds)


def test_a_policy_that_raises_is_an_error_and_its_episode_is_graded(
    shop: seahaven.World,
) -> None:
    def crashes(session: PolicySession) -> None:
        session.call("set_status", order_id="o1", status="shipped")
        raise RuntimeError("the model server went away")

    pack = shop_pack(shop)
    _, [result] = evaluate(pack, crashes, split="train")
    assert result.error is not None and result.error.kind == "policy"
    assert result.error.message == "RuntimeError: the model server went away"
    assert result.calls == 1 and not result.passed and result.ended_by == "finish"


def test_results_are_appended_as_trials_end_and_resume_runs_the_rest(
    shop: seahaven.World, tmp_path: Path
) -> None:
    pack = shop_pack(shop)
    out = tmp_path / "results.jsonl"
    ran: list[tuple[str, int]] = []

    def interrupted(specs: Sequence[TrialSpec], policy: Any) -> Iterator[TrialResult]:
        for index, result in enumerate(run_in_process(specs, policy)):
            if index == 3:
                raise KeyboardInterrupt
            ran.append(result.key)
            yield result

    with pytest.raises(KeyboardInterrupt):
        evaluate(pack, solution_policy, trials=3, out=out, runner=interrupted)
    lines = out.read_text().splitlines()
    assert [tuple(json.loads(line)[k] for k in ("scenario", "trial")) for line in lines] == [
        ("ship-ada", 0),
        ("ship-ada", 1),
        ("ship-ada", 2),
    ]
    # A line cut off by the stop is dropped, and its trial runs again.
    with out.open("a") as handle:
        handle.write('{"pack": "shop", "scen')
    with pytest.raises(seahaven.WorldBug, match="already holds results; pass --resume"):
        evaluate(pack, solution_policy, trials=3, out=out)
    ran.clear()
    summary, results = evaluate(pack, solution_policy, trials=3, out=out, resume=True)
    assert summary.results == 6 and summary.missing == 0 and summary.mean == 1.0
    assert len(results) == 6
    assert [result.key for result in ResultsFile(out).read()] == [
        ("ship-ada", 0),
        ("ship-ada", 1),
        ("ship-ada", 2),
        ("ada-total", 0),
        ("ada-total", 1),
        ("ada-total", 2),
    ]


def test_an_eval_that_stops_early_closes_its_runner_at_once(
    shop: seahaven.World, tmp_path: Path
) -> None:
    """A runner on a cluster stops its work when its iterator closes: the eval closes it."""
    pack = shop_pack(shop)
    closed: list[int] = []

    def counting(specs: Sequence[TrialSpec], policy: Any) -> Iterator[TrialResult]:
        try:
            yield from run_in_process(specs, policy)
        finally:
            closed.append(len(specs))

    def interrupt(result: TrialResult, done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    out = tmp_path / "results.jsonl"
    with pytest.raises(KeyboardInterrupt) as raised:
        evaluate(pack, solution_policy, trials=2, out=out, runner=counting, progress=interrupt)
    # Closed before the exception left evaluate, not whenever the traceback lets it go.
    assert closed == [4]
    del raised
    assert len(out.read_text().splitlines()) == 2
    evaluate(pack, solution_policy, trials=2, runner=counting)
    assert closed == [4, 4]


def test_resuming_against_a_changed_scenario_is_refused(
    shop: seahaven.World, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    evaluate(shop_pack(shop), solution_policy, out=out)
    changed = ScenarioSet(
        "shop",
        "1.0.0",
        [ship_scenario(shop, budget=9), question_scenario(shop)],
        splits={"train": ["ship-ada"], "test": ["ada-total"]},
    )
    with pytest.raises(seahaven.WorldBug, match="holds trials of scenario 'ship-ada' as it was"):
        evaluate(changed, solution_policy, out=out, resume=True)


def test_a_results_file_that_is_not_one_is_named(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text('{"hello": 1}\n')
    with pytest.raises(seahaven.WorldBug, match=r"results.jsonl:1 is not a trial result"):
        ResultsFile(out).read()


def test_in_process_and_repeated_evals_give_the_same_results(shop: seahaven.World) -> None:
    pack = shop_pack(shop)
    _, first = evaluate(pack, solution_policy, trials=2)
    _, second = evaluate(pack, solution_policy, trials=2)
    stable = ["scenario", "trial", "seed", "score", "passed", "checks", "state_sha256"]
    assert [r.model_dump(include=set(stable)) for r in first] == [
        r.model_dump(include=set(stable)) for r in second
    ]


def test_a_local_session_hands_the_policy_json(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)

    @shop.tool
    def order_model(ctx: seahaven.Ctx) -> grading.Check:
        """Answer a dataclass, as a world might answer a model."""
        return grading.Check("c", True, "why")

    with Trial(scenario, seed=1, world=shop) as trial:
        session = LocalSession(trial)
        assert session.call("order_model") == {
            "name": "c",
            "passed": True,
            "why": "why",
            "score": 1.0,
        }
        assert session.calls_left == scenario.budget - 1


# --- checking a pack --------------------------------------------------------------------------


def test_a_sound_pack_checks_clean(shop: seahaven.World) -> None:
    reports = check_pack(shop_pack(shop))
    assert [(report.scenario, report.problems) for report in reports] == [
        ("ship-ada", []),
        ("ada-total", []),
    ]
    assert all(report.solution_grade and report.solution_grade.passed for report in reports)
    assert all(report.idle_grade and not report.idle_grade.passed for report in reports)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"solution": None, "grader": "submitted"}, "it has no reference solution"),
        ({"solution": None}, "compares with the reference solution (matches_solution)"),
        (
            {"solution": [{"tool": "set_status", "arguments": {"order_id": "o2", "status": "x"}}]},
            "its reference solution scores 0, not 1",
        ),
        ({"grader": "nothing_else_changed"}, "doing nothing passes it"),
        ({"grader": {"exists": {"table": "order"}}}, "names table 'order'"),
        ({"grader": {"exists": {"table": "orders", "where": {"colour": 1}}}}, "orders.colour"),
        ({"grader": {"exists": {"table": "entries", "store": "bank"}}}, "names store 'bank'"),
        ({"grader": {"called": {"tool": "refund"}}}, "names tool 'refund'"),
        ({"start": {"fixture": "nowhere"}}, "start.fixture 'nowhere' is not a fixture"),
        ({"solution": [{"tool": "teleport"}]}, "solution[0] calls 'teleport'"),
    ],
)
def test_check_names_what_is_wrong_with_a_scenario(
    shop: seahaven.World, changes: dict[str, Any], problem: str
) -> None:
    report = check_scenario(ship_scenario(shop, **changes), world=shop)
    assert not report.ok
    assert any(problem in found for found in report.problems), report.problems


def test_unsolved_scenarios_may_be_allowed(shop: seahaven.World) -> None:
    unsolved = ship_scenario(shop, solution=None, grader={"answer": {"pattern": "shipped"}})
    report = check_scenario(unsolved, world=shop, allow_unsolved=True)
    assert report.ok and report.idle_grade is not None
    assert report.verdicts == {"do-nothing": "killed", "submit-empty": "killed"}
    # With nothing to mutate, the panel still tries an empty answer: "submitted" alone passes it.
    loose = ship_scenario(shop, solution=None, grader={"submitted": None})
    found = check_scenario(loose, world=shop, allow_unsolved=True)
    assert [(f.kind, f.mutant) for f in found.findings] == [("survived", "submit-empty")]
    compared = check_scenario(ship_scenario(shop, solution=None), world=shop, allow_unsolved=True)
    assert compared.problems == [
        "its grader compares with the reference solution (matches_solution), and it has none"
    ]


def test_a_scenario_in_no_split_is_reported(shop: seahaven.World) -> None:
    pack = ScenarioSet(
        "shop", "1", [ship_scenario(shop), question_scenario(shop)], splits={"test": ["ada-total"]}
    )
    reports = check_pack(pack)
    assert reports[0].problems == ["it is in none of the pack's splits (test); name it in one"]


def test_a_grader_that_disagrees_with_itself_is_caught(shop: seahaven.World) -> None:
    calls = iter(range(100))

    def flaky(episode: grading.Episode) -> float:
        return 1.0 if next(calls) == 0 else 0.5

    report = check_scenario(ship_scenario(shop, grader=grading.python(flaky)), world=shop)
    [unstable] = [finding for finding in report.findings if finding.kind == "unstable"]
    assert unstable.message == "grading the solution's episode twice gave two grades"
    assert unstable.line() in report.problems
    # Its mutants would say nothing: none is run.
    assert report.mutants["generated"] == 1  # do-nothing alone


def test_the_idle_policy_does_nothing(shop: seahaven.World) -> None:
    with Trial(ship_scenario(shop), seed=1, world=shop) as trial:
        idle_policy(LocalSession(trial))
        assert trial.calls_made == 0 and not trial.done


def test_an_in_process_runner_keeps_the_trials_stores_where_it_is_told(
    shop: seahaven.World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seahaven.evaluation import in_process
    from seahaven.evaluation import trials as run_module

    monkeypatch.delenv("SEAHAVEN_STORAGE", raising=False)
    seen: list[str] = []

    class Recorded(Trial):
        def __init__(self, *args: Any, **options: Any) -> None:
            super().__init__(*args, **options)
            seen.append(self.instance.storage)

    monkeypatch.setattr(run_module, "Trial", Recorded)
    pack = shop_pack(shop)
    stable = ["scenario", "trial", "seed", "score", "passed", "checks", "state_sha256"]
    found = {}
    for where in ("disk", "memory"):
        seen.clear()
        _, results = evaluate(pack, solution_policy, trials=2, runner=in_process(storage=where))
        assert seen == [where] * len(results)
        found[where] = [result.model_dump(include=set(stable)) for result in results]
    assert found["disk"] == found["memory"]
    seen.clear()
    evaluate(pack, solution_policy, runner=in_process())
    assert set(seen) == {"memory"}  # the default, with SEAHAVEN_STORAGE unset
    with pytest.raises(seahaven.WorldBug, match="storage must be 'memory' or 'disk'"):
        in_process(storage="tape")


# --- the summary's table ----------------------------------------------------------------------


def test_the_summary_has_a_row_per_scenario_and_says_why_the_worst_failed(
    shop: seahaven.World,
) -> None:
    pack = shop_pack(shop)
    summary, results = evaluate(pack, policy_that_passes_half, trials=4)
    rows = {row.scenario: row for row in summary.per_scenario}
    assert list(rows) == ["ship-ada", "ada-total"]
    for name, row in rows.items():
        mine = [result for result in results if result.scenario == name]
        passed = sum(result.passed for result in mine)
        assert (row.trials, row.passed, row.errored) == (4, passed, 0)
        assert row.mean == pytest.approx(sum(result.score for result in mine) / 4)
        assert row.pass_hat == pytest.approx(pass_hat_k(4, passed, 4))
    ship = rows["ship-ada"]
    failing = [
        check["name"]
        for result in results
        if result.scenario == "ship-ada"
        for check in result.checks
        if not check["passed"]
    ]
    assert ship.most_failed is not None
    assert ship.most_failed[1] == max(failing.count(name) for name in failing)
    assert ship.reasons[0][2] == ship.most_failed[1]
    assert rows["ada-total"].reasons == (
        ("the answer is the number 65 within 0.01", "no answer was submitted", 2),
    )
    text = summary.render()
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), text
    head = lines.index("scenario   trials  passed   mean  pass^4  most failed check")
    assert lines[head + 1].startswith(f"ship-ada        4       {ship.passed}  {ship.mean:.3f}")
    assert lines[head + 1].endswith(f"({ship.most_failed[1]})")
    assert "why the worst scenarios failed" in text
    assert "    2x the answer is the number 65 within 0.01: no answer was submitted" in lines
    # --json carries the same, every row and every reason.
    data = summary.to_dict()
    assert [row["scenario"] for row in data["per_scenario"]] == ["ship-ada", "ada-total"]
    assert data["per_scenario"][1]["reasons"] == [
        {
            "check": "the answer is the number 65 within 0.01",
            "why": "no answer was submitted",
            "trials": 2,
        }
    ]
    assert data["worst"][0] == min(rows.values(), key=lambda row: row.mean or 0).scenario
    assert json.loads(json.dumps(data)) == data


def test_a_long_scenario_id_and_check_name_are_cut_to_fit(shop: seahaven.World) -> None:
    long_id = "refund-the-duplicate-charge-and-tell-the-customer-in-the-thread"
    scenario = ship_scenario(shop, id=long_id)
    pack = ScenarioSet("shop", "1.0.0", [scenario])
    summary, _ = evaluate(pack, idle_policy, trials=1)
    text = summary.render()
    assert all(len(line) <= 100 for line in text.splitlines()), text
    assert "refund-the-duplicate-charge…" in text
