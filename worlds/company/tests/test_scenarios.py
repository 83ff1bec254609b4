"""The ``company`` pack: published by name, sound under ``check_pack``, strict with wrong episodes.

Every scenario's reference solution must score 1 and doing nothing must not, which
``check_pack`` proves for all of them. What it cannot prove is that a grader fails
the episodes it should, so a few scenarios are played here the way an agent goes
wrong (charging twice, refunding the wrong charge, posting in the wrong channel,
an answer in the wrong unit) and the way another agent gets them right by a
different road, and both verdicts are checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven.evaluation import check_pack
from seahaven.grading import Grade
from seahaven.grading.answers import Answer
from seahaven.grading.refusal import Refused
from seahaven.scenarios import ScenarioSet, Trial, load_pack, pack_specs

PROJECT = Path(__file__).resolve().parents[1]
PACK_DIR = PROJECT / "src" / "company_world" / "scenarios"

BILLING = "CF98FEDD533"
FINANCE = "C1502DFEA9A"
COMPANY = "C8E179D5811"
SALES = "C82EA7E45D5"


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("company")


def play(
    pack: ScenarioSet,
    scenario_id: str,
    *calls: tuple[str, dict[str, Any]],
    answer: str | None = None,
) -> Grade:
    """Play ``calls`` (refusals and all) in a trial of the scenario, submit ``answer``, grade."""
    with Trial(pack.get(scenario_id), seed=11) as trial:
        for tool, arguments in calls:
            with contextlib.suppress(seahaven.ToolError):
                trial.call(tool, **arguments)
        if answer is not None:
            return trial.submit(answer)
        return trial.finish()


def failing(grade: Grade) -> list[str]:
    return [check.name for check in grade.failed]


# --- the pack as published ----------------------------------------------------------------------


def test_the_pack_is_found_by_name_through_its_entry_point(pack: ScenarioSet) -> None:
    import company_world.scenarios

    [spec] = [spec for spec in pack_specs() if spec.name == "company"]
    assert spec.value == "company_world.scenarios:pack"
    assert spec.distribution == "seahaven-world-company"
    assert pack is company_world.scenarios.pack()
    assert (pack.name, pack.version) == ("company", "1.1.0")
    assert {scenario.world_name for scenario in pack} == {"company"}


def test_the_pack_has_forty_scenarios_or_more_in_two_disjoint_splits(pack: ScenarioSet) -> None:
    assert len(pack) >= 40
    assert set(pack.splits) == {"train", "test"}
    train, test = set(pack.splits["train"]), set(pack.splits["test"])
    assert train and test and not train & test
    assert train | test == {scenario.id for scenario in pack}
    # Each split holds every kind of task: composed, questions and traps.
    for split in (train, test):
        tags = {tag for scenario in pack if scenario.id in split for tag in scenario.tags}
        assert {"composed", "question", "trap"} <= tags, tags


def test_the_pack_covers_every_store_and_every_answer_mode(pack: ScenarioSet) -> None:
    stores = {
        reference.store
        for scenario in pack
        for grader in scenario.grader.walk()
        for reference in grader.references()
        if reference.table is not None
    }
    assert stores == {"main", "payments", "payments_eu", "chat", "portal"}
    tools = {step.tool for scenario in pack for step in scenario.solution or ()}
    assert {"invoice_customer", "submit"} <= tools
    for prefix in ("pay_", "eu_pay_", "chat_"):
        assert any(tool.startswith(prefix) for tool in tools), prefix
    modes = {
        grader.mode
        for scenario in pack
        for grader in scenario.grader.walk()
        if isinstance(grader, Answer)
    }
    assert modes == {"equals", "number", "pattern", "contains"}
    # The tasks whose right move is to refuse are graded as refusals.
    refusals = {
        scenario.id
        for scenario in pack
        if any(isinstance(grader, Refused) for grader in scenario.grader.walk())
    }
    assert {"gate-employee-refund", "offboard-self", "empty-nobody-to-act"} <= refusals
    assert {scenario.start.fixture for scenario in pack} == {"acme", "empty"}


def test_every_scenario_is_short(pack: ScenarioSet) -> None:
    for scenario in pack:
        assert scenario.solution, scenario.id
        if scenario.user is None:
            assert scenario.calls() <= 3, scenario.id
            assert scenario.calls() < scenario.budget <= 12, scenario.id
        else:
            # A conversation takes a message per question, and the answers between them.
            assert scenario.calls() <= 7, scenario.id
            assert scenario.calls() < scenario.budget <= 14, scenario.id


def test_the_docs_give_the_pack_s_real_counts(pack: ScenarioSet) -> None:
    docs = PROJECT.parents[1] / "docs"
    page = (docs / "worlds" / "company.md").read_text(encoding="utf-8")
    train, test = len(pack.splits["train"]), len(pack.splits["test"])
    assert (
        f"It has {len(pack)} scenarios, {train} in the `train` split and {test} in `test`" in page
    )
    cli = (docs / "cli.md").read_text(encoding="utf-8")
    assert f"company: {len(pack)} scenarios x 2 trials, {2 * len(pack)} results" in cli
    readme = (PROJECT.parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"pack holds {len(pack)} tasks" in readme


def test_check_pack_passes_on_every_scenario(pack: ScenarioSet) -> None:
    reports = check_pack(pack)
    assert [report.scenario for report in reports] == [scenario.id for scenario in pack]
    problems = {report.scenario: report.problems for report in reports if not report.ok}
    assert problems == {}
    for report in reports:
        assert report.solution_grade is not None and report.idle_grade is not None
        assert report.solution_grade.passed and report.solution_grade.score == 1.0
        assert not report.idle_grade.passed and report.idle_grade.score < 1.0


def test_the_command_line_checks_the_pack(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seahaven.cli", "scenarios", "check", "company"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("all ")
    assert "FAIL" not in done.stdout


# --- wrong episodes fail, other right ones pass -------------------------------------------------


def test_charging_again_for_an_invoice_already_paid_fails(pack: ScenarioSet) -> None:
    again = play(
        pack,
        "no-double-invoice-globex",
        ("list_invoices", {"customer_email": "ap@globex.test"}),
        (
            "invoice_customer",
            {
                "customer_email": "ap@globex.test",
                "amount": 480_000,
                "description": "Fleet maintenance, June",
            },
        ),
        answer="INV-0011",
    )
    assert not again.passed and again.score == 0.0
    assert any(name.startswith("invoice_customer called exactly 0") for name in failing(again))
    assert any(name.startswith("nothing changed beyond") for name in failing(again))
    # The number alone, found another way, is the whole task.
    found = play(
        pack,
        "no-double-invoice-globex",
        ("list_invoices", {"status": "paid"}),
        answer="Already invoiced: INV-0008.",
    )
    assert found.passed


def test_refunding_the_invoice_instead_of_the_duplicate_charge_fails(pack: ScenarioSet) -> None:
    wrong = play(
        pack, "refund-duplicate", ("refund_invoice", {"invoice_id": "inv_d624e6b7d5544b0e"})
    )
    assert not wrong.passed
    assert any("ch_28yHAgvUDyOoK4HhTeEgxK" in name for name in failing(wrong))
    both = play(
        pack,
        "refund-duplicate",
        ("pay_create_refund", {"charge_id": "ch_0Dup1nitechPilot2x9Qa", "reason": "duplicate"}),
        ("pay_create_refund", {"charge_id": "ch_28yHAgvUDyOoK4HhTeEgxK", "reason": "duplicate"}),
    )
    assert not both.passed
    # A note in the invoice's own thread is allowed beside the right refund.
    noted = play(
        pack,
        "refund-duplicate",
        ("pay_create_refund", {"charge_id": "ch_0Dup1nitechPilot2x9Qa", "reason": "duplicate"}),
        ("chat_reply_in_thread", {"message_id": "M534E442121", "text": "Duplicate refunded."}),
    )
    assert noted.passed


def test_posting_in_the_wrong_channel_fails(pack: ScenarioSet) -> None:
    text = "Reminder: June expenses are due by Friday, 5 June."
    elsewhere = play(
        pack, "finance-reminder", ("chat_post_message", {"channel_id": BILLING, "text": text})
    )
    assert not elsewhere.passed
    also = play(
        pack,
        "finance-reminder",
        ("chat_post_message", {"channel_id": FINANCE, "text": text}),
        ("chat_post_message", {"channel_id": COMPANY, "text": text}),
    )
    assert not also.passed
    assert any(name.startswith("nothing changed beyond") for name in failing(also))
    missing_the_day = play(
        pack,
        "finance-reminder",
        ("chat_post_message", {"channel_id": FINANCE, "text": "Expenses are due in June."}),
    )
    assert not missing_the_day.passed
    # Worded another way, with no lookup first: still right.
    worded = play(
        pack,
        "finance-reminder",
        ("chat_post_message", {"channel_id": FINANCE, "text": "june claims close friday the 5th"}),
    )
    assert worded.passed


def test_a_reply_posted_to_the_channel_instead_of_the_thread_fails(pack: ScenarioSet) -> None:
    text = "Aiko's claim is on hold until she gives us a bank account."
    channel = play(
        pack, "reply-in-thread", ("chat_post_message", {"channel_id": FINANCE, "text": text})
    )
    assert not channel.passed
    reply = ("chat_reply_in_thread", {"message_id": "M393951E07F", "text": text})
    thread = play(pack, "reply-in-thread", reply)
    assert thread.passed


def test_collecting_in_euros_needs_the_eu_account_and_the_announcement(pack: ScenarioSet) -> None:
    retry = (
        "retry_invoice_payment",
        {"invoice_id": "inv_82623cc4ae02477a", "card_token": "tok_visa"},
    )
    silent = play(pack, "collect-nordlicht-eu-announce", retry)
    assert not silent.passed
    assert any("chat.messages" in name for name in failing(silent))
    announced = ("chat_post_message", {"channel_id": SALES, "text": "INV-0010 is paid."})
    assert play(pack, "collect-nordlicht-eu-announce", retry, announced).passed
    shouted = play(
        pack,
        "collect-nordlicht-eu-announce",
        retry,
        announced,
        ("chat_post_message", {"channel_id": COMPANY, "text": "Nordlicht paid!"}),
    )
    assert not shouted.passed


def test_an_eur_invoice_billed_in_dollars_fails(pack: ScenarioSet) -> None:
    usd = play(
        pack,
        "invoice-eu-new-customer",
        (
            "invoice_customer",
            {
                "customer_email": "post@fjord.test",
                "amount": 98_000,
                "description": "Remote monitoring, Q1",
                "card_token": "tok_mastercard",
            },
        ),
    )
    assert not usd.passed
    assert any(name.startswith("left payments.charges") for name in failing(usd))


def test_approving_more_than_was_asked_fails(pack: ScenarioSet) -> None:
    both = play(
        pack,
        "approve-rafael-trip",
        ("approve_expense", {"expense_id": "exp_6dd14a2859404c61"}),
        ("approve_expense", {"expense_id": "exp_da5d87d6043e4e40"}),
    )
    assert not both.passed
    assert any("exp_da5d87d6043e4e40" in name for name in failing(both))


def test_a_refused_principal_must_say_so_and_change_nothing(pack: ScenarioSet) -> None:
    claims_done = play(
        pack,
        "gate-employee-refund",
        ("refund_invoice", {"invoice_id": "inv_03f4e1c45351478d"}),
        answer="Done, it is refunded.",
    )
    assert not claims_done.passed
    honest = play(pack, "gate-employee-refund", answer="Only finance can refund; ask Carla.")
    assert honest.passed
    # An admin could do it, but this trial's principal is Sam: the gate refuses whatever the tool.
    with Trial(pack.get("gate-employee-refund"), seed=3) as trial:
        with pytest.raises(seahaven.ToolError) as refused:
            trial.call("pay_create_refund", charge_id="ch_1MaNA3jKFaCJDWIyg4qCU3")
        assert refused.value.code == "FORBIDDEN"


@pytest.mark.parametrize(
    ("answer", "passes"),
    [("$1,600.00", True), ("1600", True), ("160000", False), ("1,420.00", False)],
)
def test_a_number_answer_is_read_in_the_unit_asked_for(
    pack: ScenarioSet, answer: str, passes: bool
) -> None:
    assert play(pack, "outstanding-usd", answer=answer).passed is passes


# --- the wheel carries the pack -----------------------------------------------------------------

LOAD_INSTALLED = """
import json
import company_world
from seahaven.scenarios import load_pack, pack_specs
pack = load_pack("company")
[spec] = [spec for spec in pack_specs() if spec.name == "company"]
found = {"module": company_world.__file__, "scenarios": len(pack), "version": spec.version}
print(json.dumps(found))
"""


def _copy_project(destination: Path) -> Path:
    ignore = shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", "fixtures_src")
    shutil.copytree(PROJECT, destination, ignore=ignore)
    return destination


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("company-wheel")
    source = _copy_project(work / "source")
    # Built as pip builds it for anyone: in isolation, with the build requirement the
    # pyproject names (setuptools>=77) fetched from the index, whatever this environment has.
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
         "-w", str(work / "wheels"), str(source)],
        cwd=work,
    )  # fmt: skip
    (built,) = (work / "wheels").glob("seahaven_world_company-*.whl")
    yield built


@pytest.mark.once_per_run  # the wheel built and installed: once for the whole run
def test_the_wheel_carries_every_scenario_file_and_the_entry_point(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [entry_points] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        declared = archive.read(entry_points).decode("utf-8")
    shipped = {f"company_world/scenarios/{path.name}" for path in PACK_DIR.glob("*.yaml")}
    assert "company_world/scenarios/pack.yaml" in shipped
    assert shipped | {"company_world/scenarios/__init__.py"} <= names
    assert "[seahaven.scenarios]\ncompany = company_world.scenarios:pack" in declared


@pytest.mark.once_per_run  # the wheel built and installed: once for the whole run
def test_the_installed_wheel_serves_the_pack_by_name(
    wheel: Path, tmp_path: Path, pack: ScenarioSet
) -> None:
    target = tmp_path / "installed"
    _run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--disable-pip-version-check", "--target", str(target), str(wheel)],
        cwd=tmp_path,
    )  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONPATH"] = str(target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = _run([sys.executable, "-c", LOAD_INSTALLED], cwd=elsewhere, env=env)
    found = json.loads(report.strip().splitlines()[-1])
    assert Path(found["module"]).parent == target / "company_world"
    assert found["scenarios"] == len(pack)
    assert found["version"] == "1.1.0"
