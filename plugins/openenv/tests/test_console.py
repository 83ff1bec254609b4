"""The web console, driven in a real browser: headless Chromium against a real server.

Every test here opens ``/console`` of a server from ``serve.running`` (uvicorn on
a free port of 127.0.0.1) in Debian's ``chromium``, driven by Playwright, and
works the page the way a person would: choose, type, click, read. The browser
may load nothing but the server's own address; a request anywhere else fails
the test, and so does an exception in the page.

Without a browser these tests skip, except under ``CI=true``, where a missing
browser is a failure: ``./scripts/test`` installs Debian's package when it can.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import payments_world
import pytest
from conftest import Serve
from harbour import make_harbour

import seahaven
from seahaven.openenv import serve

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:  # reported by the browser fixture: a skip here, a failure under CI
    sync_playwright = None

REPO = Path(__file__).resolve().parents[3]
SCREENSHOT = REPO / "docs" / "images" / "console-company.png"
CHROMIUM = os.environ.get("SEAHAVEN_CHROMIUM", "/usr/bin/chromium")
# The machine's network is closed: nothing in the browser may try to reach out.
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
# How long any one wait in the page may take before the test fails (milliseconds).
WAIT_MS = 20_000
EXPENSE = "exp_6dd14a2859404c61"  # waiting for a decision in company's acme fixture
STATE_HEAD = '{"type":"state","data":'


def _no_browser() -> str | None:
    if sync_playwright is None:
        return "playwright is not installed: pip install -e 'plugins/openenv[test]'"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return (
            f"no browser at {CHROMIUM}: install Debian's chromium package "
            "(apt-get install chromium), or run ./scripts/test as root, which does"
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


class Console:
    """One browser tab on a console page, with the frames its socket carried."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.received: list[str] = []
        self.sent: list[str] = []
        self.outside: list[str] = []
        self.sockets: list[str] = []
        self.errors: list[str] = []
        self.allowed_console_errors: re.Pattern[str] | None = None
        self.origin = ""
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("console", self._console_message)
        page.on("websocket", self._watch)

    def _console_message(self, message: Any) -> None:
        if message.type != "error":
            return
        allowed = self.allowed_console_errors
        if allowed is None or not allowed.search(message.text):
            self.errors.append(f"console error: {message.text}")

    def _watch(self, socket: Any) -> None:
        self.sockets.append(socket.url)
        socket.on("framereceived", lambda payload: self.received.append(_text(payload)))
        socket.on("framesent", lambda payload: self.sent.append(_text(payload)))

    # --- opening and the episode form ------------------------------------------------------

    def load(self, server: serve.RunningServer, path: str = "/console") -> None:
        """Load the page; it may load nothing but the server's own address."""
        if not self.origin:
            self.page.route("**/*", self._only_the_server)
        self.origin = server.base_url
        self.page.goto(server.base_url + path)

    def open(self, server: serve.RunningServer, path: str = "/console") -> Console:
        """Load the page and wait until it has listed the tools and read the state."""
        self.load(server, path)
        expect(self.page.locator("#connection")).to_have_attribute("data-state", "connected")
        # Attached rather than visible: on a phone the tools are a section of their own.
        expect(self.page.locator("#tool-list .tool").first).to_be_attached()
        expect(self.page.locator("#download-state")).to_be_enabled()
        self.settled()
        return self

    def _only_the_server(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.origin + "/"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def settled(self) -> None:
        """Wait until the exchange a click started has finished (the buttons come back)."""
        expect(self.page.locator("#refresh-state")).to_be_enabled()

    def show(self, view: str) -> None:
        """Show a section (``episode``, ``tools``, ``state``) where only one shows at a time."""
        tab = self.page.locator(f"#view-{view}")
        if tab.is_visible():
            tab.click()

    def reset(self, **fields: str) -> None:
        """Fill the episode form (by field id suffix) and press Start episode."""
        self.show("episode")
        more = {"state-format", "episode-id", "setup-sql", "startup"}
        if more & set(fields) and not self.page.locator("#reset-more").evaluate("e => e.open"):
            self.page.click("#reset-more summary")
        for name, value in fields.items():
            locator = self.page.locator(f"#reset-{name}")
            if locator.evaluate("element => element.tagName") == "SELECT":
                locator.select_option(value)
            else:
                locator.fill(value)
        self.page.click("#reset-button")
        self.settled()

    def fact(self, name: str) -> str:
        """A fact of the state view (Episode, Fixture, Calls, Steps, ...)."""
        return (
            self.page.locator(".fact", has=self.page.locator("dt", has_text=name))
            .locator("dd")
            .inner_text()
        )

    # --- tools -----------------------------------------------------------------------------

    def choose(self, tool: str, filter_text: str | None = None) -> None:
        """Find a tool through the filter box and open its panel."""
        self.show("tools")
        self.page.fill("#tool-filter", filter_text if filter_text is not None else tool)
        self.page.click(f'#tool-list [data-tool="{tool}"]')
        expect(self.panel).to_have_attribute("data-tool", tool)

    @property
    def panel(self) -> Any:
        """The open tool panel."""
        return self.page.locator("#tool-panel .tool-panel")

    def field(self, path: str) -> Any:
        """The control of one generated field, by its path (``agent.name``, ``cargo[]``)."""
        return self.panel.locator(f'[name="{path}"]')

    def box(self, path: str) -> Any:
        """The box around one generated field."""
        return self.panel.locator(f'.field-box[data-field="{path}"]')

    def call(self) -> Any:
        """Press the call button and wait for the outcome; return the outcome element."""
        self.panel.locator(".call-button").click()
        self.settled()
        return self.panel.locator(".outcome")

    def result(self) -> Any:
        """The JSON the last call returned, as shown."""
        outcome = self.panel.locator(".outcome")
        expect(outcome).to_have_attribute("data-outcome", "result")
        return json.loads(outcome.locator("pre.json").inner_text())

    def group(self, ordinal: int) -> Any:
        """The change-log group of one call."""
        return self.page.locator(f'#change-log .call-group[data-call="{ordinal}"]')

    def last_state_frame(self) -> str:
        """The text of the last state frame the page received."""
        frames = [text for text in self.received if text.startswith(STATE_HEAD)]
        assert frames, "the page received no state frame"
        return frames[-1]

    def horizontal_overflow(self) -> int:
        """How many pixels the page is wider than the window (0 when it fits)."""
        overflow: int = self.page.evaluate(
            "() => document.documentElement.scrollWidth - window.innerWidth"
        )
        return overflow


def _text(payload: str | bytes) -> str:
    return payload if isinstance(payload, str) else payload.decode("utf-8")


@pytest.fixture
def console(browser: Browser) -> Iterator[Console]:
    """A fresh tab at laptop size; at the end, no page errors and nothing fetched elsewhere."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    context.set_default_timeout(WAIT_MS)
    try:
        tab = Console(context.new_page())
        yield tab
        assert tab.errors == [], tab.errors
        assert tab.outside == [], f"the page tried to load from elsewhere: {tab.outside}"
    finally:
        context.close()


@pytest.fixture
def harbour_world(tmp_path: Path) -> seahaven.World:
    """A harbour world of this test's own."""
    work_dir = tmp_path / "instances"
    work_dir.mkdir()
    return make_harbour(work_dir)


def wait_until(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the condition did not come true in time")
        time.sleep(0.02)


# --- the page and its files ----------------------------------------------------------------------


def _get(server: serve.RunningServer, path: str) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_the_page_and_its_two_assets_are_served_with_a_policy_of_nothing_from_outside(
    serving: Serve, harbour_world: seahaven.World
) -> None:
    server = serving(harbour_world)
    status, headers, body = _get(server, "/console")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in headers["content-security-policy"]
    page = body.decode()
    assert 'src="console/console.js"' in page and 'href="console/console.css"' in page
    for name, media_type in (("console.js", "text/javascript"), ("console.css", "text/css")):
        status, headers, body = _get(server, f"/console/{name}")
        assert status == 200 and headers["content-type"].startswith(media_type)
        assert b"http://" not in body and b"https://" not in body, name
    assert b"http://" not in page.encode() and b"https://" not in page.encode()
    status, headers, _ = _get(server, "/console/secrets.txt")
    assert status == 404
    status, headers, _ = _get(server, "/console/")
    assert status == 308 and headers["location"] == "../console"
    # The console's routes stay out of the OpenAPI schema of the protocol.
    assert "/console" not in json.loads(_get(server, "/openapi.json")[2])["paths"]


def test_no_console_leaves_the_page_out(serving: Serve, harbour_world: seahaven.World) -> None:
    server = serving(harbour_world, console=False)
    assert _get(server, "/console")[0] == 404
    assert _get(server, "/console/console.js")[0] == 404
    assert _get(server, "/health")[0] == 200


# --- an episode by hand, on the composite company world ------------------------------------------


def test_reset_from_a_fixture_find_a_tool_fill_its_form_call_it_and_see_the_change_log(
    serving: Serve, console: Console
) -> None:
    import company_world

    server = serving(company_world.world)
    console.open(server)
    page = console.page
    expect(page.locator("#world-title")).to_contain_text("company")
    assert console.fact("Episode") == "no episode yet: start one"
    assert console.fact("Steps") == "none" and console.fact("Calls") == "none"

    # The fixture list has the world's fixtures, each described.
    page.select_option("#reset-fixture", "acme")
    expect(page.locator("#fixture-description")).to_contain_text("Acme Robotics")
    console.reset(fixture="acme", seed="7", **{"clock-mode": "tick"})
    expect(page.locator("#reset-error")).to_be_hidden()
    assert console.fact("Fixture") == "acme"
    assert console.fact("Seed") == "7"
    assert console.fact("Steps") == "0" and console.fact("Calls") == "0"
    assert console.fact("Format") == "seahaven.state+calls/1"

    # The filter narrows the flat list of 73 tools.
    expect(page.locator("#tool-count")).to_have_text("73")
    page.fill("#tool-filter", "approve")
    expect(page.locator('#tool-list [data-tool="approve_expense"]')).to_be_visible()
    expect(page.locator('#tool-list [data-tool="whoami"]')).to_have_count(0)
    expect(page.locator("#tool-count")).to_contain_text("of 73")
    console.choose("approve_expense", "approve")
    expect(console.panel.locator(".tool-description")).to_contain_text("reimburse")
    expect(console.box("expense_id")).to_contain_text("required")
    expect(console.box("note")).to_contain_text("optional")

    console.field("expense_id").fill(EXPENSE)
    console.field("note").fill("Receipt checked")
    outcome = console.call()
    expect(outcome).to_have_attribute("data-outcome", "result")
    expect(outcome.locator(".ordinal")).to_have_text("call #0")
    result = console.result()
    assert result["id"] == EXPENSE and result["status"] == "reimbursed"
    assert result["decision"]["note"] == "Receipt checked"

    # Refreshed after the call: the step count, and the call's rows under its tool and arguments.
    assert console.fact("Steps") == "1" and console.fact("Calls") == "1"
    group = console.group(0)
    head = group.locator(".call-head")
    expect(head.locator(".call-tool")).to_have_text("approve_expense")
    expect(head.locator(".call-arguments")).to_have_text(
        f'(expense_id="{EXPENSE}", note="Receipt checked")'
    )
    expect(group).to_have_class(re.compile(r"\blatest\b"))
    records = group.locator("article.record")
    expect(records).to_have_count(5)
    stores = {records.nth(n).get_attribute("data-store") for n in range(5)}
    assert stores == {"main", "payments"}
    update = group.locator('article.record[data-op="update"][data-table="expenses"]')
    expect(update).to_have_count(1)
    changed = {
        cell.get_attribute("data-column") for cell in update.locator("tr.after td.changed").all()
    }
    assert changed == {"status", "payout_id", "decided_at"}
    # The key column is shown but not marked, and before/after hold the old and new values.
    key_cell = update.locator('tr.after td[data-column="id"]')
    expect(key_cell).to_have_class("key")
    expect(key_cell).to_have_text(EXPENSE)
    expect(update.locator('tr.before td[data-column="status"]')).to_have_text("submitted")
    expect(update.locator('tr.after td[data-column="status"]')).to_have_text("reimbursed")
    expect(update.locator('thead th[data-column="status"]')).to_have_class("changed")


def test_a_failing_call_shows_its_error_type_and_the_worlds_code_message_and_details(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    console.open(serving(harbour_world))
    console.reset(seed="1")
    console.choose("move_vessel", "moor")
    console.field("vessel_id").fill("v_missing")
    console.field("berth").fill("B4")
    outcome = console.call()
    expect(outcome).to_have_attribute("data-outcome", "tool-error")
    expect(outcome.locator(".outcome-title")).to_have_text("move_vessel failed")
    expect(outcome.locator(".error-type")).to_have_text("execution_error")
    expect(outcome.locator(".error-code")).to_have_text("VESSEL_NOT_FOUND")
    expect(outcome.locator(".error-message")).to_have_text("no vessel v_missing in the register")
    details = json.loads(outcome.locator(".error-details pre").inner_text())
    assert details == {"vessel_id": "v_missing", "hint": "register_vessel returns the id"}
    # What was typed stays, and the log says the call raised and changed nothing.
    expect(console.field("vessel_id")).to_have_value("v_missing")
    expect(console.group(0).locator(".call-error")).to_have_text(
        "raised: no vessel v_missing in the register"
    )
    expect(console.group(0).locator(".nothing")).to_have_text("It raised, so it changed nothing.")

    # Arguments the world refuses are invalid_args with the framework's code.
    console.choose("fill_moorings", "ring")
    console.field("count").fill("twelve")
    outcome = console.call()
    expect(outcome.locator(".error-type")).to_have_text("invalid_args")
    expect(outcome.locator(".error-code")).to_have_text("invalid_arguments")
    expect(console.field("count")).to_have_value("twelve")

    # A reset that fails leaves the session without an instance: a call is refused, plainly.
    console.choose("register_vessel", "register")
    console.reset(**{"setup-sql": "DROP TABLE vessels"})
    expect(console.page.locator("#reset-error")).to_be_visible()
    console.field("name").fill("Aurora")
    outcome = console.call()
    expect(outcome).to_have_attribute("data-outcome", "refused")
    expect(outcome.locator(".error-code")).to_have_text("EXECUTION_ERROR")
    expect(outcome.locator(".error-message")).to_contain_text("send a reset")


def test_the_downloaded_document_is_the_state_frame_the_console_received(
    serving: Serve, console: Console
) -> None:
    import company_world

    console.open(serving(company_world.world))
    console.reset(fixture="acme", seed="3", **{"clock-mode": "fixed", "episode-id": "by-hand"})
    console.choose("approve_expense", "approve_exp")
    console.field("expense_id").fill(EXPENSE)
    console.call()
    console.choose("get_staff")
    console.field("staff_id").fill("emp_0000000000000000")
    outcome = console.call()
    expect(outcome.locator(".error-code")).to_have_text("NOT_FOUND")

    with console.page.expect_download() as info:
        console.page.click("#download-state")
    download = info.value
    assert download.suggested_filename == "company-by-hand-state.json"
    saved = Path(download.path()).read_bytes().decode("utf-8")
    frame = console.last_state_frame()
    # Byte for byte the frame's data, and so equal to it as JSON.
    assert saved == frame[len(STATE_HEAD) : -1]
    document = json.loads(saved)
    assert document == json.loads(frame)["data"]
    assert document["episode_id"] == "by-hand" and document["step_count"] == 2
    assert [call["tool"] for call in document["state"]["calls"]] == ["approve_expense", "get_staff"]
    assert document["state"]["calls"][1]["error"].startswith("no such member of staff")
    # What the page shows is that document.
    assert console.fact("Calls") == str(document["call_count"]) == "2"
    shown_records = console.page.locator("#change-log article.record")
    expect(shown_records).to_have_count(len(document["state"]["db"]["log"]))


def test_a_composite_world_shows_every_store_and_filters_the_log_by_store_and_table(
    serving: Serve, console: Console, tmp_path: Path
) -> None:
    import company_world

    console.open(serving(company_world.world))
    page = console.page
    # A fixed episode id, seed and clock: the same picture every run.
    console.reset(fixture="acme", seed="11", **{"clock-mode": "tick", "episode-id": "acme-by-hand"})
    page.click("#reset-more summary")  # closed again, as a first visit shows it
    console.choose("get_staff")
    console.field("staff_id").fill("emp_0000000000000000")
    console.call()
    console.choose("invoice_customer", "invoice_c")
    console.field("customer_email").fill("ap@cyberdyne.test")
    console.field("customer_name").fill("Cyberdyne Systems")
    console.field("amount").fill("275000")
    console.field("description").fill("Arm calibration, May")
    console.field("card_token").fill("tok_visa")
    console.call()
    console.choose("approve_expense", "approve")
    console.field("expense_id").fill(EXPENSE)
    console.field("note").fill("Receipt checked")
    console.call()

    rows = page.locator("#composition tbody tr")
    expect(rows).to_have_count(5)
    composition = {
        row.get_attribute("data-store"): row.locator("td").all_inner_texts() for row in rows.all()
    }
    assert set(composition) == {"main", "payments", "chat", "payments_eu", "portal"}
    assert composition["payments_eu"][1:4] == ["payments", "1.0.0", "eu"]
    assert composition["chat"][1] == "chat"

    # Newest call first; the failed call is there with nothing changed.
    ordinals = [group.get_attribute("data-call") for group in page.locator(".call-group").all()]
    assert ordinals == ["2", "1", "0"]
    expect(console.group(1).locator("article.record")).to_have_count(7)

    page.select_option("#log-store", "payments")
    records = page.locator("#change-log article.record")
    expect(records).to_have_count(6)
    assert {record.get_attribute("data-store") for record in records.all()} == {"payments"}
    tables = page.locator("#log-table option").all_inner_texts()
    assert tables == [
        "every table",
        "balance_transactions",
        "charges",
        "customers",
        "payment_methods",
        "payouts",
    ]
    page.select_option("#log-table", "charges")
    expect(records).to_have_count(1)
    expect(records.first).to_have_attribute("data-table", "charges")
    expect(page.locator(".call-group")).to_have_count(1)
    page.select_option("#log-store", "")
    expect(records).to_have_count(12)

    # The picture in docs/serving.md: this page, as it stands.
    page.fill("#tool-filter", "approve")
    page.locator("#tool-filter").blur()
    page.evaluate("() => window.scrollTo(0, 0)")
    # From the top of the page to the end of the latest call's rows.
    latest = console.group(2).bounding_box()
    assert latest is not None
    height = latest["y"] + latest["height"] + 16
    page.screenshot(
        path=str(tmp_path / "console-company.png"),
        full_page=True,
        clip={"x": 0, "y": 0, "width": 1440, "height": height},
    )
    if os.environ.get("SEAHAVEN_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tmp_path / "console-company.png", SCREENSHOT)


# --- the episode form ----------------------------------------------------------------------------


def test_a_failed_reset_shows_the_error_and_leaves_the_form_as_it_was(
    serving: Serve, console: Console
) -> None:
    console.open(serving(payments_world.world))
    page = console.page
    console.reset(
        fixture="small_shop",
        seed="42",
        now="2026-07-01T00:00:00.000Z",
        **{"setup-sql": "DROP TABLE customers", "episode-id": "doomed"},
    )
    error = page.locator("#reset-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("EXECUTION_ERROR: reset failed:")
    expect(error).to_contain_text("setup_sql")
    expect(page.locator("#reset-fixture")).to_have_value("small_shop")
    expect(page.locator("#reset-seed")).to_have_value("42")
    expect(page.locator("#reset-now")).to_have_value("2026-07-01T00:00:00.000Z")
    expect(page.locator("#reset-setup-sql")).to_have_value("DROP TABLE customers")
    expect(page.locator("#reset-episode-id")).to_have_value("doomed")
    assert console.fact("Episode") == "no episode yet: start one"

    # Startup keywords that are not JSON are caught before anything is sent.
    sent = len(console.sent)
    page.fill("#reset-setup-sql", "")
    console.reset(startup="{keeper: ada")
    expect(error).to_contain_text("The startup keywords are not JSON")
    assert len(console.sent) == sent
    expect(page.locator("#reset-startup")).to_have_value("{keeper: ada")

    # An unknown startup keyword is the world's refusal, shown as it came.
    console.reset(startup='{"lamp": "on"}')
    expect(error).to_contain_text("reset failed")
    expect(error).to_contain_text("lamp")

    # Fixed, the same form starts the episode and the error goes.
    console.reset(startup="")
    expect(error).to_be_hidden()
    assert console.fact("Episode") == "doomed"
    assert console.fact("Fixture") == "small_shop" and console.fact("Seed") == "42"


# --- the generated forms -------------------------------------------------------------------------


def test_the_form_draws_every_shape_and_sends_exactly_what_was_filled(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    console.open(serving(harbour_world))
    console.reset(seed="5", **{"state-format": "seahaven.state/1"})
    console.choose("register_vessel", "register")
    page = console.page
    # Kinds of field, each drawn as its own control.
    expect(console.box("name")).to_contain_text("string")
    expect(console.box("crew")).to_contain_text("integer")
    expect(console.box("length_m")).to_contain_text("number")
    expect(console.box("status")).to_contain_text("optional, default expected")
    assert console.field("flag").locator("option").all_inner_texts() == [
        "choose...",
        "nl",
        "de",
        "no",
    ]
    assert console.field("status").locator("option").all_inner_texts() == [
        "leave out (default expected)",
        "expected",
        "berthed",
        "null",
    ]
    assert console.field("hazardous").locator("option").all_inner_texts() == [
        "choose...",
        "true",
        "false",
    ]
    expect(console.box("fees")).to_contain_text("object, as JSON")

    console.field("name").fill("Aurora")
    console.field("length_m").fill("88.5")
    console.field("crew").fill("12")
    console.field("flag").select_option(label="de")
    console.field("hazardous").select_option(label="true")
    add = console.box("cargo").locator("button", has_text="Add item")
    add.click()
    add.click()
    add.click()
    items = console.box("cargo").locator('[name="cargo[]"]')
    items.nth(0).fill("grain")
    items.nth(1).fill("timber")
    console.box("cargo").locator("li").nth(2).locator("button.remove").click()
    expect(items).to_have_count(2)
    console.field("agent.name").fill("Ines Duarte")
    console.field("status").select_option(label="null")
    console.field("fees").fill('{"pilotage": 120, "berth": 45}')

    sent = len(console.sent)
    result = (console.call(), console.result())[1]
    arguments = {
        "name": "Aurora",
        "length_m": 88.5,
        "crew": 12,
        "flag": "de",
        "hazardous": True,
        "cargo": ["grain", "timber"],
        "agent": {"name": "Ines Duarte"},
        "status": None,
        "fees": {"pilotage": 120, "berth": 45},
    }
    step = json.loads(console.sent[sent])
    assert step == {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": "register_vessel", "arguments": arguments},
    }
    assert result == {
        **arguments,
        "id": result["id"],
        "agent": {"name": "Ines Duarte", "phone": None},
        "callsign": None,
    }
    # The document's format is the world's own (no calls), so the console's own record
    # of the call heads its rows.
    expect(console.group(0).locator(".call-tool")).to_have_text("register_vessel")
    expect(console.group(0).locator(".call-arguments")).to_contain_text("status=null")

    # The same arguments as JSON, edited there, and back in the form.
    page.click("text=Edit as JSON")
    box = console.panel.locator("textarea.arguments-json")
    assert json.loads(box.input_value()) == arguments
    box.fill(json.dumps({**arguments, "crew": 13, "callsign": "PD6543"}))
    page.click("text=Edit as form")
    expect(console.field("crew")).to_have_value("13")
    expect(console.field("callsign")).to_have_value("PD6543")
    expect(console.field("status")).to_have_value("__null__")
    # A key the form has no field for keeps the arguments in JSON, untouched.
    page.click("text=Edit as JSON")
    box.fill('{"name": "Aurora", "draught": 7}')
    page.click("text=Edit as form")
    expect(console.panel.locator(".tool-arguments > .problem")).to_contain_text(
        "cannot hold these arguments"
    )
    expect(box).to_have_value('{"name": "Aurora", "draught": 7}')


def test_a_form_that_cannot_be_sent_says_which_field_and_sends_nothing(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    console.open(serving(harbour_world))
    console.reset()
    console.choose("register_vessel", "register")
    console.box("cargo").locator("button", has_text="Add item").click()
    console.field("fees").fill("{pilotage: 120")
    sent = len(console.sent)
    console.panel.locator(".call-button").click()
    expect(console.box("fees").locator(".field-problem")).to_contain_text("This is not JSON")
    expect(console.box("cargo[]").locator(".field-problem")).to_contain_text("This item is empty")
    expect(console.panel.locator(".tool-arguments > .problem")).to_contain_text(
        "2 fields need attention"
    )
    assert len(console.sent) == sent
    expect(console.field("fees")).to_have_value("{pilotage: 120")


# --- robustness ----------------------------------------------------------------------------------


def test_a_dropped_connection_is_shown_with_a_button_to_start_again(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    # The server reaps a session idle for half a second: the page's socket is closed under it.
    server = serving(harbour_world, session_timeout=0.5)
    console.open(server)
    page = console.page
    console.choose("move_vessel", "moor")
    console.field("berth").fill("kept across the drop")
    page.fill("#reset-seed", "9")
    page.click("#reset-button")
    lost = page.locator("#lost")
    expect(lost).to_be_visible()
    expect(lost).to_contain_text("idle")
    expect(page.locator("#connection")).to_have_attribute("data-state", "lost")
    expect(page.locator("#reset-button")).to_be_disabled()
    expect(console.panel.locator(".call-button")).to_be_disabled()
    # The last state it had can still be downloaded.
    expect(page.locator("#download-state")).to_be_enabled()

    page.click("#restart")
    expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    expect(lost).to_be_hidden()
    console.settled()
    assert console.fact("Episode") == "no episode yet: start one"
    expect(page.locator("#reset-seed")).to_have_value("9")
    expect(console.field("berth")).to_have_value("kept across the drop")
    expect(console.panel.locator(".call-button")).to_be_enabled()


def test_a_server_at_capacity_is_said_plainly(
    serving: Serve, console: Console, harbour_world: seahaven.World, wire: Any
) -> None:
    # Refused at once rather than queued, so the page has something to say.
    server = serving(harbour_world, max_concurrent_envs=1, admission_queue=0)
    holder = wire(server)
    holder.reset()  # the one session the server admits is taken
    console.load(server)
    lost = console.page.locator("#lost")
    expect(lost).to_be_visible()
    expect(lost).to_contain_text("capacity")
    expect(console.page.locator("#connection")).to_have_attribute("data-state", "lost")
    # Once the session ends, Start again gets in.
    holder.send({"type": "close"})
    wait_until(lambda: server.hub.active_sessions == 0)
    console.page.click("#restart")
    expect(console.page.locator("#connection")).to_have_attribute("data-state", "connected")
    expect(console.page.locator('#tool-list [data-tool="register_vessel"]')).to_be_visible()


def test_a_long_result_and_a_long_log_are_shown_a_page_at_a_time(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    console.open(serving(harbour_world))
    page = console.page
    console.reset()
    console.choose("fill_moorings", "ring")
    console.field("count").fill("650")
    console.call()
    # 650 rings are 2,602 lines of JSON: 400 are drawn, and a button draws the next 400.
    pre = console.panel.locator(".outcome pre.json")
    assert pre.inner_text().count("\n") == 399
    more = console.panel.locator(".outcome .more-lines button").first
    expect(more).to_have_text("Show 400 more lines (2,202 left)")
    more.click()
    assert pre.inner_text().count("\n") == 799

    records = page.locator("#change-log article.record")
    expect(records).to_have_count(200)
    expect(records.first.locator('td[data-column="n"]')).to_have_text("1")
    status = page.locator(".pager-status").first
    expect(status).to_have_text("Entries 1 to 200 of 650 · page 1 of 4")
    page.locator('.pager [data-page="older"]').first.click()
    expect(status).to_have_text("Entries 201 to 400 of 650 · page 2 of 4")
    expect(records).to_have_count(200)
    expect(page.locator(".call-head .hint")).to_have_text("(continued)")
    page.locator(".pager button", has_text="Oldest").first.click()
    expect(records).to_have_count(50)
    expect(records.last.locator('td[data-column="n"]')).to_have_text("650")


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_page_fits_a_laptop_and_a_phone(
    serving: Serve, console: Console, harbour_world: seahaven.World, width: int, height: int
) -> None:
    console.page.set_viewport_size({"width": width, "height": height})
    console.open(serving(harbour_world))
    assert console.horizontal_overflow() <= 0
    console.reset()
    console.choose("register_vessel", "register")
    console.field("name").fill("A long vessel name " * 8)
    console.call()
    console.choose("move_vessel", "moor")
    console.field("vessel_id").fill("v_nowhere")
    console.field("berth").fill("B" * 120)
    console.call()
    console.choose("fill_moorings", "ring")
    console.field("count").fill("3")
    console.call()
    expect(console.page.locator("#change-log article.record")).to_have_count(3)
    assert console.horizontal_overflow() <= 0
    # Everything that matters is on screen when scrolled to (in its section, on a phone).
    views = {
        "#reset-button": "episode",
        ".call-button": "tools",
        "#download-state": "state",
        "#log-store": "state",
    }
    for selector, view in views.items():
        console.show(view)
        locator = console.page.locator(selector)
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, selector


def test_each_world_of_a_server_of_several_has_its_own_console(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    server = serving([payments_world.world, harbour_world])
    # The root is an index of the worlds, each linking its console.
    console.load(server, "/console")
    expect(console.page.locator("h1")).to_have_text("Seahaven worlds")
    assert console.page.url == server.base_url + "/"
    console.page.click("#worlds a:text-is('harbour')")
    expect(console.page.locator("#connection")).to_have_attribute("data-state", "connected")
    assert console.page.url == server.base_url + "/worlds/harbour/console"
    console.open(server, "/worlds/harbour/console")
    expect(console.page.locator("#world-title")).to_contain_text("harbour")
    expect(console.page.locator('#tool-list [data-tool="register_vessel"]')).to_be_visible()
    console.load(server, "/worlds/payments/console")
    expect(console.page.locator("#connection")).to_have_attribute("data-state", "connected")
    expect(console.page.locator('#tool-list [data-tool="create_customer"]')).to_be_visible()
    expect(console.page.locator("#reset-fixture option[value=small_shop]")).to_have_count(1)
    console.settled()
    console.reset(fixture="small_shop")
    assert console.fact("Fixture") == "small_shop"
    assert console.sockets[-1] == server.base_url.replace("http", "ws") + "/worlds/payments/ws"
    assert console.page.evaluate("() => document.title") == "payments · Seahaven console"


# --- what the page may reach, and the keyboard, the phone and the defaults -----------------------


def test_every_response_of_the_console_carries_its_policy_and_nosniff(
    serving: Serve, harbour_world: seahaven.World
) -> None:
    server = serving(harbour_world)
    for path in ("/console", "/console/console.js", "/console/secrets.txt", "/console/"):
        _, headers, _ = _get(server, path)
        assert headers["x-content-type-options"] == "nosniff", path
        policy = headers["content-security-policy"]
        # The page's sockets may go to its own host alone.
        assert "connect-src 'self';" in policy and "ws:" not in policy, path


def test_the_page_can_open_a_socket_to_its_own_server_and_to_no_other(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    server = serving(harbour_world)
    console.allowed_console_errors = re.compile("violates the following Content Security Policy")
    console.open(server)  # its own socket connected: 'self' covers ws: to the page's host
    # The same server under another name is another host to the policy.
    other = f"ws://localhost:{server.port}/ws"
    outcome = console.page.evaluate(
        """(url) => new Promise((resolve) => {
            document.addEventListener("securitypolicyviolation",
                (event) => resolve(`blocked ${event.effectiveDirective}`), { once: true });
            try {
                const socket = new WebSocket(url);
                socket.addEventListener("open", () => resolve("opened"));
            } catch (error) {
                resolve(`blocked ${error.name}`);
            }
            setTimeout(() => resolve("no answer"), 10000);
        })""",
        other,
    )
    assert outcome.startswith("blocked"), outcome
    assert console.sockets == [server.base_url.replace("http", "ws") + "/ws"]


def test_the_filter_ranks_a_name_that_holds_the_words_first(
    serving: Serve, console: Console
) -> None:
    import company_world

    console.open(serving(company_world.world))
    page = console.page
    page.fill("#tool-filter", "approve expense")
    names = page.locator("#tool-list .tool").evaluate_all(
        "buttons => buttons.map(button => button.dataset.tool)"
    )
    assert names[0] == "approve_expense"
    assert "submit_expense" in names  # its description holds both words: found, ranked lower
    page.press("#tool-filter", "Enter")
    expect(console.panel).to_have_attribute("data-tool", "approve_expense")
    # Enter put the keyboard in the tool's first field.
    expect(console.field("expense_id")).to_be_focused()


def test_a_tool_without_arguments_is_called_from_the_keyboard(
    serving: Serve, console: Console
) -> None:
    import company_world

    console.open(serving(company_world.world))
    console.reset(fixture="acme")
    page = console.page
    page.keyboard.press("/")
    page.keyboard.type("whoami")
    page.keyboard.press("Enter")
    expect(console.panel).to_have_attribute("data-tool", "whoami")
    expect(console.panel.locator(".call-button")).to_be_focused()
    sent = len(console.sent)
    page.keyboard.press("Enter")
    console.settled()
    expect(console.panel.locator(".outcome")).not_to_have_attribute("data-outcome", "none")
    step = json.loads(console.sent[sent])
    assert step["data"] == {"type": "call_tool", "tool_name": "whoami", "arguments": {}}


def test_on_a_phone_the_change_log_is_a_tap_from_the_top(
    serving: Serve, console: Console, harbour_world: seahaven.World
) -> None:
    width, height = 390, 844
    console.page.set_viewport_size({"width": width, "height": height})
    console.open(serving(harbour_world))
    console.reset()
    console.choose("fill_moorings", "ring")
    console.field("count").fill("3")
    console.call()
    console.page.locator("#view-state").click()
    console.page.evaluate("() => window.scrollTo(0, 0)")
    log = console.page.locator("#change-log article.record").first
    expect(log).to_be_visible()
    box = log.bounding_box()
    assert box is not None and box["y"] < height, box
    expect(console.page.locator("#view-state")).to_contain_text("1 call")
    # The other sections are a tap away too, and what was typed is kept.
    console.page.locator("#view-tools").click()
    expect(console.field("count")).to_have_value("3")


def test_the_episode_form_starts_from_the_worlds_first_fixture(
    serving: Serve, console: Console
) -> None:
    console.open(serving(payments_world.world))
    first = payments_world.world.fixtures()[0].id
    expect(console.page.locator("#reset-fixture")).to_have_value(first)
    console.page.click("#reset-button")
    console.settled()
    assert console.fact("Fixture") == first
    # A blank instance is still one choice away.
    console.reset(fixture="")
    assert console.fact("Fixture") == "blank"


def test_a_server_that_stops_is_said_in_words(
    console: Console, harbour_world: seahaven.World
) -> None:
    with serve.running(harbour_world) as server:
        console.open(server)
    lost = console.page.locator("#lost")
    expect(lost).to_be_visible()
    expect(lost).to_contain_text("stopped or restarted")
    assert "code 1012" not in lost.inner_text()
    # The server was stopped on purpose: a request the page still had in flight (the console
    # reads the scenarios and the schema as it opens) may be refused, which the browser logs.
    # Any other error still fails the test.
    console.errors[:] = [
        error for error in console.errors if "net::ERR_CONNECTION_REFUSED" not in error
    ]
