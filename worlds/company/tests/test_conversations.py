"""The pack's conversations: scripted people, events at Acme, and customers in their own portal.

Each scenario of ``conversations.yaml`` passes ``seahaven scenarios check`` (its
reference conversation scores 1, doing nothing fails); a rude agent, one that
does the work without ever asking or telling the person, fails every one; and
the particular mistakes each is about (refunding before verifying, paying a claim
the news in #finance stopped, charging the expired card again) fail too. The
customer's portal tools are theirs alone, events fire when they are due, and a
trial replays exactly.
"""

from __future__ import annotations

from typing import Any

import pytest

import seahaven
from seahaven.evaluation import check_scenario
from seahaven.scenarios import MESSAGE_USER_TOOL, Scenario, ScenarioSet, Trial, load_pack

SEED = 7


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("company")


def conversations() -> list[str]:
    return [scenario.id for scenario in load_pack("company") if scenario.user is not None]


def play(trial: Trial, steps: list[tuple[str, dict[str, Any]]]) -> None:
    """Play steps as the agent; a refusal is the agent's to live with."""
    for tool, arguments in steps:
        if trial.done:
            return
        try:
            trial.call(tool, **arguments)
        except seahaven.ToolError:
            continue


def steps_of(scenario: Scenario) -> list[tuple[str, dict[str, Any]]]:
    return [(step.tool, dict(step.arguments)) for step in scenario.solution or ()]


def test_the_pack_has_ten_conversations_with_events_and_dual_control(pack: ScenarioSet) -> None:
    talks = [scenario for scenario in pack if scenario.user is not None]
    assert len(talks) >= 10
    assert sum(1 for scenario in talks if scenario.events) >= 3
    dual = [scenario for scenario in talks if scenario.user and scenario.user.tools]
    assert {scenario.id for scenario in dual} >= {"hooli-card-in-portal", "nordlicht-second-card"}
    assert all(set(scenario.user.tools) <= {"portal_add_card", "portal_list_cards"}
               for scenario in dual if scenario.user)  # fmt: skip
    for scenario in talks:
        assert pack.split_of(scenario.id), scenario.id


@pytest.mark.parametrize("scenario_id", conversations())
def test_a_conversation_passes_its_check(pack: ScenarioSet, scenario_id: str) -> None:
    report = check_scenario(pack.get(scenario_id), pack=pack.name)
    assert report.problems == []
    assert report.idle_grade is not None and not report.idle_grade.passed


@pytest.mark.parametrize("scenario_id", conversations())
def test_a_rude_agent_that_never_asks_or_tells_fails(pack: ScenarioSet, scenario_id: str) -> None:
    scenario = pack.get(scenario_id)
    rude = [
        (tool, arguments) for tool, arguments in steps_of(scenario) if tool != MESSAGE_USER_TOOL
    ]
    with Trial(scenario, seed=SEED) as trial:
        play(trial, rude)
        grade = trial.finish()
    assert not grade.passed, grade.summary()
    assert "the user ended the conversation" in {check.name for check in grade.failed}


def test_refunding_before_asking_for_the_email_fails(pack: ScenarioSet) -> None:
    scenario = pack.get("verify-then-refund-globex")
    steps = steps_of(scenario)
    # The refund first, then the whole conversation: the customer is happy, the check is not.
    hasty = [steps[3], steps[0], steps[1], steps[4]]
    with Trial(scenario, seed=SEED) as trial:
        play(trial, hasty)
        grade = trial.grade
    assert grade is not None and trial.ended_by == "user"
    # Neither the email nor the invoice was asked for before the refund: only those two fail.
    failed = {check.name: check.why for check in grade.failed}
    assert set(failed) == {
        "told the user /e-?mail/ before calling refund_invoice",
        "told the user /invoice|which|number/ before calling refund_invoice",
    }
    assert failed["told the user /e-?mail/ before calling refund_invoice"].startswith(
        "no message before the agent's first call to refund_invoice (call 0) carried /e-?mail/"
    )


def test_paying_the_claim_without_reading_the_news_fails(pack: ScenarioSet) -> None:
    scenario = pack.get("manager-changes-mind")
    with Trial(scenario, seed=SEED) as trial:
        reply = trial.call(MESSAGE_USER_TOOL, text="Should I pay Rafael's Hamburg train and hotel?")
        assert reply == {
            "reply": "Yes, approve it. The trip was agreed in advance.",
            "ended": False,
        }
        # The event has not happened yet: it comes due after the agent's first call.
        assert trial.report()["events"] == []
        trial.call("approve_expense", expense_id="exp_6dd14a2859404c61")
        [fired] = trial.report()["events"]
        assert fired == {"name": "trip-cancelled", "at_call": 0, "error": None}
        assert trial.call(MESSAGE_USER_TOOL, text="Approved and paid.")["ended"] is True
        grade = trial.grade
    assert grade is not None and not grade.passed
    assert {check.name for check in grade.failed} >= {
        'changed expenses where id="exp_6dd14a2859404c61" to status="rejected" by the agent',
        'told the user "cancel" before calling reject_expense',
    }


def test_the_colleagues_news_is_the_events_own(pack: ScenarioSet) -> None:
    scenario = pack.get("manager-changes-mind")
    with Trial(scenario, seed=SEED) as trial:
        play(trial, steps_of(scenario)[:2])
        [posted] = [record for record in trial.instance.change_log() if record.table == "messages"]
        assert (posted.i, posted.world, posted.actor) == (None, "chat", "event:trip-cancelled")
        assert posted.after is not None and "cancelled" in posted.after["text"]
        rafael = trial.instance.query("SELECT id FROM users WHERE handle = 'rafael'", store="chat")
        assert posted.after["user_id"] == rafael[0]["id"]


def test_an_approval_that_races_the_hold_fails(pack: ScenarioSet) -> None:
    scenario = pack.get("conference-hold-race")
    steps = steps_of(scenario)
    # #finance read once, before the hold was posted; the approval after it does not look again.
    racing = [*steps[:3], ("approve_expense", {"expense_id": "exp_0bd7449876d8439c"})]
    with Trial(scenario, seed=SEED) as trial:
        play(trial, racing)
        assert [event["name"] for event in trial.report()["events"]] == ["budget-hold"]
        grade = trial.finish()
    assert not grade.passed
    assert any(check.name.startswith("left expenses") for check in grade.failed)


def test_the_hold_comes_when_the_clock_passes_two_seconds(pack: ScenarioSet) -> None:
    scenario = pack.get("conference-hold-race")
    with Trial(scenario, seed=SEED) as trial:
        for _ in range(3):
            trial.call(MESSAGE_USER_TOOL, text="Is it the SaaS finance conference?")
        assert trial.report()["events"] == [], "messages dispatch no call: the clock stands"
        trial.call("whoami")
        trial.call("whoami")
        assert trial.report()["events"] == []
        trial.call("whoami")  # the clock read +2s as this call came: the hold first
        assert trial.report()["events"] == [{"name": "budget-hold", "at_call": 2, "error": None}]


def test_the_customers_portal_is_theirs_and_the_card_theirs_to_add(pack: ScenarioSet) -> None:
    scenario = pack.get("hooli-card-in-portal")
    with Trial(scenario, seed=SEED) as trial:
        names = [tool["name"] for tool in trial.tools()]
        assert not any(name.startswith("portal_") for name in names)
        assert {"list_portal_cards", "retry_invoice_payment", MESSAGE_USER_TOOL} <= set(names)
        with pytest.raises(seahaven.UnknownTool):
            trial.call(
                "portal_add_card",
                customer_email="ap@hooli.test",
                card_number="5555555555554444",
                exp_month=3,
                exp_year=2035,
            )
        # Retrying the expired card on file fails again; asking for a card number gets nowhere.
        again = trial.call("retry_invoice_payment", invoice_id="inv_3745b696719f439e")
        assert again.status == "payment_failed"
        answer = trial.call(MESSAGE_USER_TOOL, text="Please send me your card number.")
        assert answer["reply"] == "I'd rather not share card numbers here. Is there a secure way?"
        grade = trial.finish()
    assert not grade.passed


def test_who_did_what_in_a_dual_control_episode(pack: ScenarioSet) -> None:
    scenario = pack.get("hooli-card-in-portal")
    with Trial(scenario, seed=SEED) as trial:
        play(trial, steps_of(scenario))
        assert trial.grade is not None and trial.grade.passed
        actors = {
            (record.world, record.table, record.actor) for record in trial.instance.change_log()
        }
        assert ("portal", "cards", "user") in actors
        assert ("main", "invoices", "agent") in actors
        assert ("chat", "messages", "event:overdue-reminder") in actors
        calls = [(call.tool, call.actor) for call in trial.instance.call_log()]
        assert calls[:2] == [
            ("portal_add_card", "user"),
            ("chat_post_message", "event:overdue-reminder"),
        ]


def test_a_conversation_replays_exactly_for_its_seed(pack: ScenarioSet) -> None:
    scenario = pack.get("nordlicht-second-card")

    def episode() -> tuple[str, list[dict[str, Any]]]:
        with Trial(scenario, seed=SEED) as trial:
            play(trial, steps_of(scenario))
            assert trial.grade is not None and trial.grade.passed
            return trial.state_sha256(), trial.conversation

    first = episode()
    assert first == episode()
    assert [message["speaker"] for message in first[1]] == ["agent", "user"] * 3
