"""``seahaven report``: a run's numbers and page, and two runs of one pack compared."""

from __future__ import annotations

import contextlib
import html
import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, ship_scenario, shop_pack
from typer.testing import CliRunner

import seahaven
from seahaven import cli
from seahaven.evaluation import (
    PolicySession,
    TrialFailure,
    evaluate,
    pass_hat_k,
    solution_policy,
)
from seahaven.evaluation.report import compare_runs, load_run
from seahaven.evaluation.report_html import comparison_page, run_page

runner = CliRunner()
HOSTILE = '</pre><script>window.pwned = 1</script><img src="http://example.invalid/x">'


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


def mixed(session: PolicySession) -> None:
    """Ship-ada: solved on even seeds, a hostile wrong move on odd ones. ada-total: errored
    on trial seeds divisible by 3 (a model API that failed), else solved."""
    seed = getattr(session, "seed", 0) or 0
    if session.scenario.id == "ada-total" and seed % 3 == 0:
        raise TrialFailure("model", "the model API answered 503 five times")
    if session.scenario.id == "ship-ada" and seed % 2:
        with contextlib.suppress(seahaven.ToolError):
            session.call("set_status", order_id=HOSTILE)  # refused: no status
        session.call("set_status", order_id="o1", status=HOSTILE)
        session.submit(HOSTILE)
        return
    solution_policy(session)


@pytest.fixture
def run(shop: seahaven.World, tmp_path: Path) -> Path:
    out = tmp_path / "run.jsonl"
    evaluate(
        shop_pack(shop),
        mixed,
        trials=6,
        out=out,
        transcripts=tmp_path / "run.transcripts.jsonl",
        max_consecutive_errors=None,
    )
    return out


def test_a_run_report_has_every_k_with_intervals_tags_and_the_errored_apart(run: Path) -> None:
    report = load_run(run)
    results = report.results
    assert report.pack == "shop" and len(results) == 12
    errored = [r for r in results if r.errored]
    assert errored and all(r.scenario == "ada-total" for r in errored)
    assert report.summary.errored == len(errored)
    ship = [r for r in results if r.scenario == "ship-ada"]
    passes = sum(r.passed for r in ship)
    assert 0 < passes < 6
    for k in range(1, 7):
        value = report.summary.pass_hat.get(k)
        if value is None:
            break
        low, high = report.pass_hat_intervals[k]
        assert low <= value <= high
    assert report.summary.pass_hat[1] == pytest.approx(
        (pass_hat_k(6, passes, 1) + 1.0) / 2  # ada-total passes whenever it is scored
    )
    # Tags from the transcripts (the shop pack is not installed here).
    rows = {row.tag: row for row in report.tags}
    assert set(rows) == {"orders", "composed"} and rows["orders"].passed == passes
    text = report.render()
    for expected in ("pass@k  (95% CI)", "tag ", "errored (not the agent's failure", "time "):
        assert expected in text, expected
    assert report.failed() and all(not r.passed for r in report.failed())
    data = report.to_dict()
    assert data["pass_hat_interval"]["1"] and data["per_tag"][0]["tag"] == "composed"


def test_the_page_is_self_contained_escapes_everything_and_shows_failed_transcripts(
    run: Path,
) -> None:
    report = load_run(run)
    page = run_page(report)
    # Nothing from elsewhere: no URL to fetch, and a policy that forbids fetching any.
    head = html.unescape(page.split("<style>", 1)[0])
    assert "Content-Security-Policy" in head and "default-src 'none'" in head
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    # The hostile answer and arguments are text on the page, never markup.
    assert "<script>window.pwned" not in page and "<img src=" not in page
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own, allowed by its hash
    failed = report.failed()[0]
    section = page.split(f'id="trial-{failed.scenario}-{failed.trial}"', 1)[1]
    section = section.split("</details>", 1)[0]
    assert "set_status" in section and "refused" in section  # the transcript
    assert "failed</b>" in section  # the grader's checks, with reasons
    assert 'id="pass-plot"' in page and "<polyline" in page
    assert "Errored trials" in page and "the model API answered 503" in page


def test_report_from_the_command_line(run: Path, tmp_path: Path) -> None:
    page = tmp_path / "pages" / "r.html"
    ran = runner.invoke(cli.build_app(), ["report", str(run), "--html", str(page)])
    assert ran.exit_code == 0, ran.output
    assert "pass@k" in ran.stdout and f"report page in {page}" in ran.stdout
    assert page.read_text().startswith("<!doctype html>")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    as_json = runner.invoke(cli.build_app(), ["report", str(run), "--json"])
    assert json.loads(as_json.stdout)["pack"] == "shop"
    missing = runner.invoke(cli.build_app(), ["report", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "is not a results file" in missing.stderr
    three = runner.invoke(cli.build_app(), ["report", str(run), str(run), str(run)])
    assert three.exit_code == 2


def test_two_runs_are_compared_scenario_by_scenario_with_a_paired_interval(
    shop: seahaven.World, run: Path, tmp_path: Path
) -> None:
    better = tmp_path / "better.jsonl"
    evaluate(shop_pack(shop), solution_policy, trials=6, out=better)
    comparison = compare_runs(load_run(run), load_run(better))
    rows = {row.scenario: row for row in comparison.rows}
    assert rows["ship-ada"].b_mean == 1.0 and rows["ship-ada"].difference > 0
    assert rows["ada-total"].difference == 0.0
    difference = rows["ship-ada"].difference / 2
    assert comparison.difference == pytest.approx(difference)
    low, high = comparison.interval
    assert low <= comparison.difference <= high
    text = comparison.render()
    assert "mean score B - A: +" in text and "paired bootstrap" in text
    ran = runner.invoke(
        cli.build_app(), ["report", str(run), str(better), "--html", str(tmp_path / "c.html")]
    )
    assert ran.exit_code == 0, ran.output
    assert "comparison-table" in (tmp_path / "c.html").read_text()
    assert "two runs compared" in comparison_page(comparison)


def test_a_scenario_that_flipped_is_named_and_one_that_changed_is_left_out(
    shop: seahaven.World, tmp_path: Path
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    evaluate(shop_pack(shop), lambda session: None, trials=2, out=first)
    evaluate(shop_pack(shop), solution_policy, trials=2, out=second)
    comparison = compare_runs(load_run(first), load_run(second))
    assert {row.scenario for row in comparison.flipped("up")} == {"ship-ada", "ada-total"}
    assert "2 flipped up (now pass)" in comparison.render()
    # The same scenario id with other content graded another task: left out.
    changed = seahaven.scenarios.ScenarioSet(
        "shop", "1.0.0", [ship_scenario(shop, instructions="Ship it, and more.")]
    )
    third = tmp_path / "c.jsonl"
    evaluate(changed, solution_policy, trials=2, out=third)
    compared = compare_runs(load_run(first), load_run(third))
    assert compared.changed == ("ship-ada",)
    assert "ship-ada" not in {row.scenario for row in compared.rows}


def test_files_that_cannot_be_reported_are_refused_naming_why(
    shop: seahaven.World, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(seahaven.WorldBug, match="holds no results"):
        load_run(empty)
    both = tmp_path / "both.jsonl"
    evaluate(shop_pack(shop), solution_policy, out=both)
    other = seahaven.scenarios.ScenarioSet("other", "1.0.0", [ship_scenario(shop)])
    evaluate(other, solution_policy, out=both, resume=True)
    with pytest.raises(seahaven.WorldBug, match="packs other, shop"):
        load_run(both)
    elsewhere = tmp_path / "elsewhere.jsonl"
    evaluate(other, solution_policy, out=elsewhere)
    shop_run = tmp_path / "shop.jsonl"
    evaluate(shop_pack(shop), solution_policy, out=shop_run)
    with pytest.raises(seahaven.WorldBug, match="one pack side by side"):
        compare_runs(load_run(shop_run), load_run(elsewhere))


def test_a_run_without_transcripts_still_reports(shop: seahaven.World, tmp_path: Path) -> None:
    out = tmp_path / "plain.jsonl"
    evaluate(shop_pack(shop), lambda session: None, out=out)
    report = load_run(out)
    assert report.transcripts_path is None and report.model_seconds is None
    page = run_page(report)
    assert "No transcript: the run kept none for this trial." in page
    payload: dict[str, Any] = report.to_dict()
    assert payload["transcripts_file"] is None
