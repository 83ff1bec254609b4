"""The ``small_startup`` fixture: Tally, three people making invoicing software."""

from __future__ import annotations

import random
from datetime import timedelta

import seahaven

if __package__:
    from .tracker_model import (
        IssueSpec,
        LabelSpec,
        Person,
        ProjectSpec,
        TeamSpec,
        Tracker,
        day,
    )
    from .tracker_writing import SEED, load_tracker
else:  # run as a script (python fixtures_src/generate.py): this directory is on the path
    from tracker_model import (
        IssueSpec,
        LabelSpec,
        Person,
        ProjectSpec,
        TeamSpec,
        Tracker,
        day,
    )
    from tracker_writing import SEED, load_tracker


# --- small_startup: Tally, three people making invoicing software ---------------------------------

_TALLY_PEOPLE = (
    Person("Maya Chen", "maya@tally.test", "admin", "2026-03-02", ("ENG",)),
    Person("Jonas Berg", "jonas@tally.test", "member", "2026-03-02", ("ENG",)),
    Person("Priya Raman", "priya@tally.test", "member", "2026-03-16", ("ENG",)),
)

_TALLY_TEAMS = (
    TeamSpec(
        "ENG",
        "Engineering",
        "Everyone at Tally: the web app, the API and the invoices they produce.",
        "2026-03-02",
    ),
)

_BETA = "Public beta"
_RECURRING = "Recurring invoices"

_TALLY_PROJECTS = (
    ProjectSpec(
        "ENG",
        _BETA,
        "Open sign-up to the first two hundred freelancers on the waiting list: onboarding, "
        "the invoice editor, card payments and the client portal, stable enough to charge for.",
        "active",
        "maya@tally.test",
        "2026-03-30",
        target_date="2026-06-30",
    ),
    ProjectSpec(
        "ENG",
        _RECURRING,
        "Invoices that send themselves on a schedule (weekly, monthly, quarterly), with "
        "reminders for late payers and a preview of the next run.",
        "active",
        "jonas@tally.test",
        "2026-04-06",
        target_date="2026-07-31",
    ),
)

_TALLY_LABELS = (
    LabelSpec("ENG", "bug", "#e5484d", "Something that worked, or should have, and does not."),
    LabelSpec("ENG", "feature", "#3e63dd", "Something new for our users."),
    LabelSpec("ENG", "chore", "#8b8d98", "Upkeep nobody outside the team will notice."),
    LabelSpec("ENG", "frontend", "#12a594", "The web app in the browser."),
    LabelSpec("ENG", "backend", "#f76b15", "The API, the database and the jobs behind them."),
    LabelSpec("ENG", "security", "#8e4ec6", "Anything an attacker would be glad to find."),
)

# In key order: the n-th line becomes ENG-n. Project, title, description, labels, priority,
# estimate.
_TALLY_ISSUES: tuple[tuple[str, str, str, tuple[str, ...], int, int | None], ...] = (
    (
        _BETA,
        "Set up continuous integration for the web app",
        "Run the unit tests and the type checker on every push, and block merges on red.",
        ("chore",),
        3,
        2,
    ),
    (
        _BETA,
        "Sign-up form accepts an empty company name",
        "The company name is required by the invoice header, but the form lets it through and "
        "the first invoice then renders with a blank sender.",
        ("bug", "frontend"),
        2,
        1,
    ),
    (
        _BETA,
        "Invoice PDF shows the wrong currency symbol",
        "An account set to EUR still gets $ on the PDF. The HTML preview is right, so the PDF "
        "renderer is reading the default locale instead of the account's.",
        ("bug", "backend"),
        2,
        3,
    ),
    (
        _BETA,
        "Password reset email lands in spam",
        "Two beta testers found the reset email in their spam folder. We send it from a "
        "no-reply address without the domain's signing records set up.",
        ("bug", "backend"),
        2,
        2,
    ),
    (
        _BETA,
        "Dark mode for the dashboard",
        "Several people on the waiting list asked for it. Start with the dashboard and the "
        "invoice list; the editor can follow.",
        ("feature", "frontend"),
        4,
        5,
    ),
    (
        _RECURRING,
        "Recurring schedule skips February 29",
        "A monthly schedule that starts on the 29th, 30th or 31st should fall back to the last "
        "day of a shorter month instead of skipping it.",
        ("bug", "backend"),
        3,
        2,
    ),
    (
        _BETA,
        "Dashboard totals count refunded invoices twice",
        "Revenue this month includes a refunded invoice once as paid and once as a negative "
        "line, so the total is off by the refund.",
        ("bug", "backend"),
        1,
        3,
    ),
    (
        _BETA,
        "Move file uploads to signed URLs",
        "Logos and attachments are public today. Serve them through short-lived signed URLs.",
        ("security", "backend"),
        2,
        3,
    ),
    (
        _BETA,
        "Client list search is case sensitive",
        "Searching for 'acme' does not find 'Acme Studio'.",
        ("bug", "frontend"),
        3,
        1,
    ),
    (
        _BETA,
        "Billing settings page",
        "One page for the plan, the card on file and the billing email, instead of three "
        "places in the account menu.",
        ("feature", "frontend"),
        3,
        5,
    ),
    (
        _BETA,
        "Onboarding checklist forgets dismissed steps",
        "Dismissing a step hides it until the next reload, then it comes back.",
        ("bug", "frontend"),
        4,
        1,
    ),
    (
        _BETA,
        "The session cookie leaks a stack trace",
        "When the session cookie fails to decode, the API answers with the full Python "
        "traceback in the response body, including file paths. It should answer 401 and log "
        "the rest.",
        ("bug", "security", "backend"),
        1,
        2,
    ),
    (
        _BETA,
        "Rate-limit the login endpoint",
        "Nothing stops a script from trying passwords as fast as it likes. Limit by account "
        "and by address.",
        ("security", "backend"),
        1,
        3,
    ),
    (
        _RECURRING,
        "Overdue reminders sent twice to the same client",
        "The reminder job and the manual 'remind now' button do not see each other, so a "
        "client can get two reminders within a minute.",
        ("bug", "backend"),
        2,
        2,
    ),
    (
        _BETA,
        "Tax IDs on invoices",
        "EU freelancers need their VAT number and their client's on every invoice.",
        ("feature", "backend"),
        2,
        3,
    ),
    (
        _BETA,
        "Export invoices as CSV",
        "For accountants: one row per invoice with number, client, dates, totals and status.",
        ("feature", "backend"),
        3,
        2,
    ),
    (
        _BETA,
        "Invoice table overflows on small screens",
        "On a phone the amount column is pushed off screen. Collapse to cards below 600px.",
        ("bug", "frontend"),
        3,
        2,
    ),
    (
        _BETA,
        "Upgrade the database driver",
        "We are two major versions behind, and the connection pool fix we need is in the latest.",
        ("chore", "backend"),
        4,
        2,
    ),
    (
        _BETA,
        "Draft invoices disappear after the session times out",
        "Autosave posts after the session has expired, gets a 401 and drops the draft without "
        "telling anyone.",
        ("bug", "frontend"),
        1,
        3,
    ),
    (
        _BETA,
        "Audit log for invoice edits",
        "Keep who changed what on a sent invoice, and show it on the invoice page.",
        ("feature", "backend"),
        3,
        5,
    ),
    (
        _RECURRING,
        "Late fee rounds down instead of to the nearest cent",
        "A 1.5% late fee on 333.33 comes out as 4.99 instead of 5.00.",
        ("bug", "backend"),
        2,
        1,
    ),
    (
        _BETA,
        "Review the copy of the pricing table",
        "Maya wants the plan names and the feature list reworded before the beta opens.",
        ("chore", "frontend"),
        4,
        None,
    ),
    (
        _BETA,
        "Webhook retries have no backoff",
        "A failing payment webhook is retried every second until it succeeds. Back off "
        "exponentially and give up after a day.",
        ("bug", "backend"),
        2,
        2,
    ),
    (
        _BETA,
        "Pay an invoice in the client portal without an account",
        "Clients should be able to pay from the emailed link without signing up.",
        ("feature", "frontend", "backend"),
        2,
        5,
    ),
    (
        _BETA,
        "Billing history is slow for accounts with many invoices",
        "The billing history page loads every invoice the account ever sent. Paginate it, and "
        "add the missing index on invoices by account and date.",
        ("bug", "backend"),
        2,
        3,
    ),
    (
        _RECURRING,
        "Due dates shown in UTC instead of the account's time zone",
        "An invoice due on the 5th shows as due on the 4th for accounts west of Greenwich.",
        ("bug", "frontend"),
        3,
        2,
    ),
    (
        _BETA,
        "Keyboard shortcuts in the invoice editor",
        "Add a line, duplicate a line, save: the three things people do most.",
        ("feature", "frontend"),
        4,
        2,
    ),
    (
        _BETA,
        "Beta invite codes can be used more than once",
        "An invite code shared in a forum let eleven people in.",
        ("bug", "security"),
        1,
        1,
    ),
    (
        _RECURRING,
        "Pause and resume a recurring invoice",
        "A client on holiday should not be invoiced; pausing should keep the schedule.",
        ("feature", "backend"),
        3,
        3,
    ),
    (
        _BETA,
        "Error page shows raw JSON when the API is down",
        "Show a friendly page with a retry button instead of the error object.",
        ("bug", "frontend"),
        3,
        1,
    ),
    (
        _BETA,
        "Remove feature flags that have shipped",
        "Seven flags are on for everyone and have been for weeks.",
        ("chore",),
        4,
        1,
    ),
    (
        _BETA,
        "Welcome email links to the staging site",
        "The 'open Tally' button in the welcome email points at staging.",
        ("bug", "backend"),
        1,
        1,
    ),
    (
        _BETA,
        "Two-factor authentication",
        "Time-based one-time codes, with recovery codes shown once.",
        ("feature", "security"),
        2,
        8,
    ),
    (
        _RECURRING,
        "Invoice numbers restart when the year changes",
        "Numbering per year is a setting some countries require, but it must not be the "
        "default, and it must never produce a number used before.",
        ("bug", "backend"),
        2,
        3,
    ),
    (
        _BETA,
        "Card declined message does not say what to do",
        "Payers see 'payment failed'. Say whether to try another card or contact the bank.",
        ("bug", "frontend"),
        3,
        1,
    ),
    (
        _BETA,
        "Changelog post for the public beta",
        "What is in the beta, what is not yet, and how to give feedback.",
        ("chore",),
        4,
        None,
    ),
    (
        _BETA,
        "Attachments over 10 MB fail without an error",
        "The upload spinner stops and nothing is attached. Say the limit up front.",
        ("bug", "frontend"),
        3,
        1,
    ),
    (
        _RECURRING,
        "Preview of the next recurring invoice shows the wrong date",
        "For a quarterly schedule the preview adds three days instead of three months.",
        ("bug", "frontend"),
        2,
        1,
    ),
    (
        _BETA,
        "Collect front-end error reports",
        "We only hear about browser errors when someone emails us. Send them to the API and "
        "group them by message.",
        ("feature", "frontend"),
        3,
        3,
    ),
    (
        _RECURRING,
        "Reminder email template editor",
        "Let people write their own reminder text, with the invoice number and amount as "
        "placeholders.",
        ("feature", "frontend"),
        4,
        5,
    ),
)

_TALLY_COMMENTS = (
    "I can reproduce this on staging.",
    "Reproduced locally with a fresh account. Looking into it.",
    "Could this be the same cause as the timeout we saw last week?",
    "I have a fix on a branch; it needs a review before it goes out.",
    "Review done, two small comments on the pull request.",
    "Merged. It will be in the next deploy.",
    "Deployed this morning. Please check it on your account.",
    "Confirmed fixed on production.",
    "Not sure this is worth doing before the beta. Thoughts?",
    "Agreed, let's keep it for after the launch.",
    "A beta tester reported this again today.",
    "I added a test that fails before the fix and passes after.",
    "This touches the invoice renderer, so I'd like Jonas to look at it too.",
    "The logs show it started after Tuesday's release.",
    "Blocked until the payment provider answers our support ticket.",
    "They answered; we can go ahead.",
    "Screenshot attached: the problem is the second column.",
    "I think the real issue is that we never store the account's locale.",
    "Moved the discussion about the design to the doc linked above.",
    "Smaller than it looked: one query and one template.",
    "Pairing on this tomorrow morning.",
    "Let's not forget the migration for existing accounts.",
    "Checked with two real invoices from the waiting list; both look right now.",
    "Can we add this to the beta checklist?",
)


def small_startup(inst: seahaven.Instance) -> None:
    """Tally, a three-person startup: one team, two projects, forty issues over two months."""
    rng = random.Random(SEED + 1)
    start = day("2026-04-01")
    spacing = (day("2026-05-29") - start) / len(_TALLY_ISSUES)
    issues = []
    for number, (project, title, description, labels, priority, estimate) in enumerate(
        _TALLY_ISSUES
    ):
        created = start + spacing * number + timedelta(minutes=rng.randrange(0, 240))
        issues.append(
            IssueSpec(
                "ENG",
                project,
                title,
                description,
                created,
                priority,
                labels,
                estimate=estimate,
                due=None if rng.random() < 0.7 else created + timedelta(days=rng.choice((7, 14))),
            )
        )
    tracker = Tracker(
        people=_TALLY_PEOPLE,
        teams=_TALLY_TEAMS,
        projects=_TALLY_PROJECTS,
        labels=_TALLY_LABELS,
        issues=issues,
        comment_count=60,
        comment_texts=_TALLY_COMMENTS,
        pins={"ENG-3": "in_progress", "ENG-4": "todo", "ENG-12": "in_progress"},
    )
    load_tracker(inst, tracker, rng)
