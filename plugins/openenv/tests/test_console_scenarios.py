"""Playing a scenario in the web console, in headless Chromium against a real server (issue 38).

Choosing a scenario sets the rest of the episode form (the fields the scenario
sets itself are cleared and turned off, and come back when none is chosen); a
bound episode shows its instructions and the calls left, takes an answer to
submit, and shows the grade with each check's reason when it ends. The browser,
the page's checks (nothing fetched elsewhere, no error in the page or its
console) and the helpers are ``test_console``'s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import company_world
import pytest
from conftest import Serve

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_console
from test_console import Console

# test_console's fixtures: the browser (a skip without one, a failure under CI) and a tab whose
# page must load nothing from elsewhere and log no error; and playwright's expect, when installed.
browser = test_console.browser
console = test_console.console
expect = getattr(test_console, "expect", None)

OUTSTANDING = "company/outstanding-usd"
PAID_COUNT = "company/paid-invoice-count"


def choose_scenario(tab: Console, reference: str) -> None:
    tab.show("episode")
    tab.page.select_option("#reset-scenario", reference)


def start(tab: Console) -> None:
    tab.page.click("#reset-button")
    tab.settled()
    expect(tab.page.locator("#reset-error")).to_be_hidden()


@pytest.fixture
def company_console(serving: Serve, console: Console) -> Console:
    """The console of a company server (its installed pack's scenarios can be named)."""
    return console.open(serving(company_world.world))


def test_choosing_a_scenario_sets_the_rest_of_the_form(company_console: Console) -> None:
    page = company_console.page
    fixture = page.locator("#reset-fixture")
    expect(fixture).to_have_value("acme")
    page.fill("#reset-seed", "")
    page.select_option("#reset-clock-mode", "tick")
    expect(page.locator("#scenario-field")).to_be_visible()
    options = page.locator("#reset-scenario option").all_inner_texts()
    assert "outstanding-usd" in options and "approve-rafael-trip" in options

    choose_scenario(company_console, OUTSTANDING)
    # The fields the scenario sets are emptied and off; seed and episode id stay the caller's.
    expect(fixture).to_be_disabled()
    expect(fixture).to_have_value("")
    expect(page.locator("#reset-clock-mode")).to_be_disabled()
    expect(page.locator("#reset-now")).to_be_disabled()
    expect(page.locator("#reset-seed")).to_be_enabled()
    description = page.locator("#scenario-description")
    expect(description).to_contain_text("How much are we still owed in dollars")
    expect(description).to_contain_text("6 calls")
    expect(page.locator("#fixture-description")).to_contain_text("The scenario chooses")

    # None again: every field is back as it was.
    page.select_option("#reset-scenario", "")
    expect(fixture).to_be_enabled()
    expect(fixture).to_have_value("acme")
    expect(page.locator("#reset-clock-mode")).to_have_value("tick")
    expect(description).to_be_hidden()


def test_a_scenario_is_played_to_its_grade_with_a_submitted_answer(
    company_console: Console,
) -> None:
    page = company_console.page
    choose_scenario(company_console, OUTSTANDING)
    start(company_console)
    sent = json.loads(next(text for text in reversed(company_console.sent) if '"reset"' in text))
    # The scenario, and none of the keys it sets itself.
    assert sent["data"]["scenario"] == OUTSTANDING
    assert set(sent["data"]) <= {"scenario", "seed", "episode_id", "state_format"}

    card = page.locator("#scenario-card")
    expect(card).to_be_visible()
    expect(card.locator(".scenario-name")).to_have_text(OUTSTANDING)
    expect(card.locator(".scenario-instructions")).to_contain_text("still owed in dollars")
    expect(card.locator(".calls-left")).to_have_text("6 of 6")
    expect(card.locator(".scenario-status")).to_have_text("in progress")

    # A call from a tool's form counts against the budget.
    company_console.choose("list_invoices")
    company_console.field("status").select_option("payment_failed")
    company_console.field("currency").select_option("usd")
    company_console.call()
    assert company_console.result()["invoices"]
    expect(card.locator(".calls-left")).to_have_text("5 of 6")

    page.fill("#scenario-answer", "$1,600.00")
    page.click("#scenario-submit")
    company_console.settled()
    grade = card.locator(".grade")
    expect(grade).to_have_attribute("data-passed", "true")
    expect(grade.locator(".grade-score")).to_have_text("score 1.00")
    expect(card.locator(".scenario-status")).to_have_text("ended by submit")
    expect(card.locator(".scenario-given-answer")).to_have_text("$1,600.00")
    checks = grade.locator(".check")
    assert checks.count() >= 2
    for index in range(checks.count()):
        check = checks.nth(index)
        expect(check).to_have_attribute("data-passed", "true")
        assert check.locator(".check-why").inner_text().strip()
    # The answer box and its buttons are gone: the episode is over.
    expect(page.locator("#scenario-submit")).to_have_count(0)


def test_a_wrong_answer_shows_which_check_failed_and_why(company_console: Console) -> None:
    page = company_console.page
    choose_scenario(company_console, PAID_COUNT)
    start(company_console)
    page.fill("#scenario-answer", "41")
    page.click("#scenario-submit")
    company_console.settled()
    grade = page.locator("#scenario-card .grade")
    expect(grade).to_have_attribute("data-passed", "false")
    failed = grade.locator('.check[data-passed="false"]')
    expect(failed).to_have_count(1)
    expect(failed.locator(".check-why")).to_contain_text("41")


def test_ending_without_an_answer_grades_the_episode_where_it_stands(
    company_console: Console,
) -> None:
    page = company_console.page
    choose_scenario(company_console, OUTSTANDING)
    start(company_console)
    page.click("#scenario-finish")
    company_console.settled()
    card = page.locator("#scenario-card")
    expect(card.locator(".scenario-status")).to_have_text("ended by finish")
    expect(card.locator(".grade")).to_have_attribute("data-passed", "false")
    # A free episode after it: the card goes, and the form starts from the fixture again.
    page.select_option("#reset-scenario", "")
    start(company_console)
    expect(card).to_be_hidden()
    assert company_console.fact("Fixture") == "acme"


def test_a_split_and_an_index_also_set_the_rest_of_the_form(company_console: Console) -> None:
    page = company_console.page
    company_console.show("episode")
    page.click("#reset-more summary")
    page.fill("#reset-split", "test")
    expect(page.locator("#reset-fixture")).to_be_disabled()
    expect(page.locator("#reset-scenario")).to_be_disabled()
    page.fill("#reset-split", "")
    expect(page.locator("#reset-fixture")).to_be_enabled()
    expect(page.locator("#reset-fixture")).to_have_value("acme")


def test_get_scenarios_lists_what_a_reset_can_name_and_never_a_grader(
    serving: Serve, beacon_world
) -> None:
    import http.client

    def listing(server) -> list[dict]:
        connection = http.client.HTTPConnection(server.host, server.port, timeout=60)
        try:
            connection.request("GET", "/scenarios")
            response = connection.getresponse()
            assert response.status == 200
            return json.loads(response.read())
        finally:
            connection.close()

    listed = listing(serving(company_world.world, scenarios=["company"]))
    by_name = {entry["scenario"]: entry for entry in listed}
    entry = by_name[OUTSTANDING]
    assert entry["pack"] == "company" and entry["id"] == "outstanding-usd"
    assert entry["served"] is True and entry["budget"] == 6
    assert entry["instructions"].startswith("How much are we still owed")
    assert set(entry) == {"scenario", "pack", "id", "served", "instructions", "budget", "tags"}
    # Only scenarios of the world served: no pack holds one of the beacon test world's.
    assert listing(serving(beacon_world)) == []
