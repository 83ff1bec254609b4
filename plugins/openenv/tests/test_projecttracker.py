"""``seahaven serve --world projecttracker``: the reference world served, driven and shown.

The world the reference documentation is written against, on a real server: started from
the command line and driven with ``SeahavenClient`` the way the serving page drives it (a
reset with the viewer's startup keyword, the tool list, ``get_issue`` by key, a write, the
state document, an error as data), and worked by hand in its web console in headless
Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path

import projecttracker
import pytest
import test_console as browser_tests
import test_serve_command as command_line
from conftest import Serve

from seahaven.openenv import SeahavenClient

Console = browser_tests.Console
# The console tests' fixtures: headless Chromium, and a fresh tab that fails on a page error.
browser = browser_tests.browser
console = browser_tests.console


def test_serve_projecttracker_from_the_command_line(tmp_path: Path) -> None:
    with command_line.serving(tmp_path, "--world", "projecttracker") as server:
        url = server["urls"]["projecttracker"]
        assert command_line.get(url + "/metadata")["name"] == "projecttracker"
        with SeahavenClient(base_url=url) as env:
            env.reset(
                fixture="small_startup", seed=7, clock_mode="tick", startup={"user_id": "u_3"}
            )
            assert len(env.list_tools()) == 27
            observation = env.call("get_issue", key="ENG-12")
            assert observation.error is None
            assert observation.result["title"] == "The session cookie leaks a stack trace"
            done = env.call("transition_issue", issue_id=observation.result["id"], status="done")
            assert done.result["status"] == "done" and done.result["assignee_id"] is None
            comment = env.call("add_comment", issue_id=observation.result["id"], body="Shipped.")
            assert comment.result["author_id"] == "u_3"
            # The tick clock: one second past the fixture's now for each of the three calls.
            state = env.state()
            assert state.now == "2026-06-01T09:00:03.000Z"
            assert state.world.name == "projecttracker" and state.startup == {"user_id": "u_3"}

            missing = env.call("get_issue", key="ENG-99")
            assert missing.result is None
            assert missing.error is not None and missing.error.error_type == "execution_error"
            assert missing.seahaven_error == {
                "code": "NOT_FOUND",
                "message": "issue ENG-99 not found",
                "details": {"kind": "issue", "key": "ENG-99"},
            }
            # The session goes on after an error, and a later reset starts afresh.
            env.reset(fixture="agency", seed=1)
            found = env.call("search_issues", query="billing")
            assert found.error is None and found.result["issues"]


def test_a_startup_user_naming_nobody_fails_the_reset_and_not_the_server(
    serving: Serve,
) -> None:
    server = serving(projecttracker.world)
    with SeahavenClient(base_url=server.base_url) as env:
        with pytest.raises(RuntimeError):
            env.reset(fixture="small_startup", startup={"user_id": "u_99"})
        env.reset(fixture="small_startup", startup={"user_id": "u_2"})
        assert env.call("get_issue", key="ENG-3").error is None


def test_the_console_works_projecttracker_by_hand(serving: Serve, console: Console) -> None:
    # Imported here: the fixtures have already skipped (or, under CI, failed) without a browser.
    from playwright.sync_api import expect

    server = serving(projecttracker.world)
    console.open(server)
    page = console.page
    expect(page.locator("#world-title")).to_contain_text("projecttracker")
    expect(page.locator("#tool-count")).to_have_text("27")

    page.select_option("#reset-fixture", "small_startup")
    expect(page.locator("#fixture-description")).to_contain_text("Tally")
    console.reset(
        fixture="small_startup", seed="7", startup='{"user_id": "u_2"}', **{"clock-mode": "fixed"}
    )
    expect(page.locator("#reset-error")).to_be_hidden()
    assert console.fact("Fixture") == "small_startup"

    console.choose("get_issue", "get_iss")
    console.field("key").fill("ENG-3")
    console.call()
    issue = console.result()
    assert issue["key"] == "ENG-3" and issue["status"] == "in_progress"

    console.choose("transition_issue", "transition")
    status = console.field("status")
    assert status.locator("option").all_inner_texts() == [
        "choose...",
        "backlog",
        "todo",
        "in_progress",
        "done",
        "canceled",
    ]
    console.field("issue_id").fill(issue["id"])
    status.select_option(label="done")
    console.call()
    closed = console.result()
    assert closed["status"] == "done" and closed["assignee_id"] is None

    # The change log of that call: the issue's one update, and the two trail rows by u_2.
    group = console.group(1)
    expect(group.locator(".call-head .call-tool")).to_have_text("transition_issue")
    update = group.locator('article.record[data-op="update"][data-table="issues"]')
    expect(update).to_have_count(1)
    expect(update.locator('tr.after td[data-column="status"]')).to_have_text("done")
    trail = group.locator('article.record[data-op="insert"][data-table="issue_events"]')
    expect(trail).to_have_count(2)
    expect(trail.first.locator('tr.after td[data-column="actor_id"]')).to_have_text("u_2")

    # A refusal in the product's words, on the same page.
    console.choose("get_issue", "get_iss")
    console.field("key").fill("ENG-999")
    outcome = console.call()
    expect(outcome).to_have_attribute("data-outcome", "tool-error")
    expect(outcome.locator(".error-code")).to_have_text("NOT_FOUND")
    expect(outcome.locator(".error-message")).to_have_text(re.compile("issue ENG-999 not found"))
