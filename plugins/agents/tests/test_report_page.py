"""The report page in a real browser: Debian's Chromium, headless, driven by Playwright.

A run of the company pack by a scripted model that fails some scenarios (a wrong answer, a call
refused, a hostile string in its answer) is reported with ``seahaven report --html``; the page
is opened from disk and must load nothing else, raise no error, show a failed trial's transcript
beside its checks when opened, and run none of the hostile text.

Without a browser these tests skip, except under ``CI=true``, where a missing browser is a
failure (as the serving plugin's console tests do).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from seahaven_agents import ChatAgent
from seahaven_agents.testing import (
    ChatRequest,
    Reply,
    ScriptedChatServer,
    answer,
    call,
    solution_script,
    tool_calls,
)
from typer.testing import CliRunner

from seahaven import cli
from seahaven.evaluation import evaluate, in_process
from seahaven.scenarios import ScenarioSet

try:
    from playwright.sync_api import Browser, expect, sync_playwright
except ImportError:  # reported by the browser fixture: a skip here, a failure under CI
    sync_playwright = None

CHROMIUM = os.environ.get("SEAHAVEN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
WAIT_MS = 20_000
HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
FAILING = "outstanding-usd"

Start = Callable[..., ScriptedChatServer]


def _no_browser() -> str | None:
    if sync_playwright is None:
        return "playwright is not installed: pip install -e 'plugins/agents[test]'"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return (
            f"no browser at {CHROMIUM}: install Debian's chromium package "
            "(apt-get install chromium)"
        )
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, for this module's tests."""
    missing = _no_browser()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests need a browser under CI: {missing}")
        pytest.skip(missing)
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, timeout=60_000
        )
        expect.set_options(timeout=WAIT_MS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page_file(company: ScenarioSet, scripted: Start, tmp_path: Path) -> Path:
    solution = solution_script(company)

    def script(request: ChatRequest) -> Reply:
        # One scenario goes wrong: a refused call, then a wrong and hostile answer.
        if request.instructions == company.get(FAILING).instructions:
            if request.turn == 0:
                return tool_calls(call("get_invoice", {"invoice_id": "inv_ffffffffffffffff"}))
            return answer(f"About 12 dollars {HOSTILE}")
        return solution(request)

    server = scripted(script)
    out = tmp_path / "r.jsonl"
    evaluate(
        company,
        ChatAgent("scripted", base_url=server.url),
        split="train",
        trials=2,
        out=out,
        transcripts=tmp_path / "r.transcripts.jsonl",
        runner=in_process(concurrency=8),
    )
    page = tmp_path / "report.html"
    ran = CliRunner().invoke(cli.build_app(), ["report", str(out), "--html", str(page)])
    assert ran.exit_code == 0, ran.output
    return page


def test_the_page_opens_with_no_error_and_shows_a_failed_trials_transcript(
    browser: Browser, page_file: Path, company: ScenarioSet
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    outside: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            errors.append(f"console: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )
    url = page_file.as_uri()

    def only_the_page(route: Any) -> None:
        if route.request.url == url:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_page)
    page.goto(url)
    expect(page.locator("#pass-plot")).to_be_visible()
    expect(page.locator("#scenario-table tr")).to_have_count(1 + len(company.split("train")))
    trial = page.locator(f"#trial-{FAILING}-0")
    expect(trial.locator(".transcript")).to_be_hidden()
    trial.locator("summary").first.click()
    transcript = trial.locator(".transcript")
    expect(transcript).to_be_visible()
    expect(transcript).to_contain_text("get_invoice")
    expect(transcript).to_contain_text("refused get_invoice NOT_FOUND: no such invoice")
    expect(transcript).to_contain_text("About 12 dollars <img src=x")  # as text, not markup
    grade = trial.locator(".grade")
    expect(grade.locator(".check.failed").first).to_contain_text("the answer is the number 1600")
    # The filter narrows the table; the button opens every failed trial.
    page.fill("#filter", FAILING)
    expect(page.locator("#scenario-table tr[data-filter]:visible")).to_have_count(1)
    page.click("#open-all")
    expect(page.locator(f"#trial-{FAILING}-1 .transcript")).to_be_visible()
    assert page.evaluate("window.pwned") is None, "the page ran text from the transcript"
    assert page.locator("img").count() == 0
    assert errors == [] and outside == []
