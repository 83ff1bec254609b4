"""The committed generator of every ProjectTracker fixture, and the only way one is made.

Each fixture is filled into a blank instance and frozen at ``NOW`` on a fixed clock with a fixed
seed, so a rebuild writes the same state files (only the sidecar's ``created_at``, a wall-clock
stamp by design, differs). Every fixture is frozen from blank rather than forked: a script that
builds each from nothing is simpler to read than a chain.

The history is a bulk load inside ``inst.bulk()``: a fixed clock would stamp every row a tool
writes with the one instant ``NOW``, and a tracker whose whole past happened at nine this
morning would not read like one. So the script replays each issue's life (created, assigned,
moved through its statuses, commented on, closed, sometimes reopened or reassigned) at
instants it computes, all before ``NOW``, following the rules the tools follow: a key from
the team's counter, which is left where the tools would have left it; no assignee on a closed
issue, the drop recorded right after the status change; assignees who are members of the
issue's team; the audit trail written through the package's own ``_events.record``.

Rebuild every fixture from the world's directory (or name the ones to rebuild)::

    python fixtures_src/generate.py [empty] [small_startup] [agency]
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import projecttracker
from projecttracker.tools import _events

import seahaven
import seahaven.toolkit

NOW = "2026-06-01T09:00:00.000Z"
SEED = 20260601

PACKAGE_FIXTURES = Path(projecttracker.__file__).resolve().parent / "fixtures"

_NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
# Nothing in a fixture's past is later than this: a run on a fixed clock stamps NOW, so what
# an episode did is told apart from the history by its instant.
_HISTORY_ENDS = _NOW - timedelta(minutes=30)
_OPEN = ("backlog", "todo", "in_progress")
# How long an issue of average pace waits in each status before something happens to it.
_MEAN_HOURS = {
    "backlog": 24 * 18,
    "todo": 24 * 6,
    "in_progress": 24 * 4,
    "done": 24 * 10,
    "canceled": 24 * 10,
}


def _iso(moment: datetime) -> str:
    return seahaven.Clock(moment).iso()


def _day(text: str, hour: int = 9) -> datetime:
    """A weekday morning, as the script declares dates: ``2026-04-01``."""
    return datetime.fromisoformat(text).replace(hour=hour, tzinfo=UTC)


# --- what a fixture is made of -------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    """One account, and the teams (by key) it belongs to."""

    name: str
    email: str
    role: str
    joined: str
    teams: tuple[str, ...]


@dataclass(frozen=True)
class TeamSpec:
    """A team, as the script declares it."""

    key: str
    name: str
    description: str
    created: str


@dataclass(frozen=True)
class ProjectSpec:
    """A project of one team; a ``done`` project is finished by ``finished``."""

    team: str
    name: str
    description: str
    state: str
    lead: str
    created: str
    target_date: str | None = None
    finished: str | None = None


@dataclass(frozen=True)
class LabelSpec:
    """A label of one team."""

    team: str
    name: str
    color: str
    description: str


@dataclass
class IssueSpec:
    """One issue before its life is replayed: where it is, what it says, when it began."""

    team: str
    project: str
    title: str
    description: str
    created: datetime
    priority: int
    labels: tuple[str, ...]
    estimate: int | None = None
    due: datetime | None = None
    # The issue never closes (set from the tracker's pins once the key is known).
    keep_open: bool = False
    # The issue is archived this long after it closed, if it closes.
    archive_after: timedelta | None = None
    key: str = ""
    history: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """One thing that happened to an issue: a status change, an assignment or a comment."""

    at: datetime
    kind: str
    actor: str
    value: str | None = None


@dataclass
class Tracker:
    """Everything one fixture holds, declared; ``load`` writes it."""

    people: Sequence[Person]
    teams: Sequence[TeamSpec]
    projects: Sequence[ProjectSpec]
    labels: Sequence[LabelSpec]
    issues: list[IssueSpec]
    comment_count: int
    comment_texts: Sequence[str]
    # Issues (by key) that must end open in this status, with an assignee: the documentation's
    # examples close them, and expect someone to be assigned.
    pins: dict[str, str] = field(default_factory=dict)


# --- replaying an issue's life -------------------------------------------------------------------


def _gap(rng: random.Random, mean_hours: float) -> timedelta:
    """A pause between two things happening, in working hours more or less."""
    return timedelta(minutes=max(5, int(rng.expovariate(1 / (mean_hours * 60)))))


def _live(
    rng: random.Random,
    issue: IssueSpec,
    members: Sequence[str],
    creator: str,
    horizon: datetime,
    must_close_by: datetime | None,
) -> tuple[str, str | None]:
    """Replay the issue's statuses and assignees up to ``horizon``; its final pair.

    Returns the status and assignee it ends with, and fills ``issue.history``.
    """
    status = "backlog" if rng.random() < 0.45 else "todo"
    assignee: str | None = None
    moment = issue.created
    worker = rng.choice(members)
    # Some issues are picked up the same week; others wait for months.
    pace = rng.lognormvariate(0, 0.9)

    def step(kind: str, value: str | None, actor: str) -> None:
        issue.history.append(Step(moment, kind, actor, value))

    if status == "todo" and rng.random() < 0.6:
        assignee = worker
    # The first pair is the issue as created; every later change is a step.
    issue.history.append(Step(moment, "created", creator, f"{status}|{assignee or ''}"))
    deadline = must_close_by or horizon
    while True:
        moment = moment + _gap(rng, pace * _MEAN_HOURS[status])
        if moment >= deadline:
            break
        actor = assignee or rng.choice(members)
        roll = rng.random()
        if status == "backlog":
            if roll < 0.1 and not issue.keep_open:
                status = "canceled"
            elif roll < 0.6:
                status = "todo"
            else:
                continue
            step("status", status, actor)
        elif status == "todo":
            if assignee is None:
                assignee = worker
                step("assignee", assignee, actor)
                continue
            if roll < 0.85:
                status = "in_progress"
            elif roll < 0.9 and not issue.keep_open:
                status = "canceled"
            else:
                status = "backlog"
            step("status", status, actor)
        elif status == "in_progress":
            if roll < 0.12:
                # Handed over: someone else on the team picks it up.
                others = [member for member in members if member != assignee]
                if others:
                    assignee = rng.choice(others)
                    step("assignee", assignee, actor)
                continue
            if issue.keep_open:
                break
            status = "done" if roll < 0.85 else ("todo" if roll < 0.95 else "canceled")
            step("status", status, actor)
        else:
            # Closed. Now and then it turns out not to be finished after all.
            if roll < 0.06 and not issue.keep_open and must_close_by is None:
                status = "todo"
                step("status", status, actor)
                continue
            break
        if status in ("done", "canceled") and assignee is not None:
            assignee = None
            step("assignee", None, actor)
    if must_close_by is not None and status in _OPEN:
        # The project was finished: whatever was left was closed on the day.
        moment = must_close_by
        actor = assignee or rng.choice(members)
        status = "done" if rng.random() < 0.7 else "canceled"
        step("status", status, actor)
        if assignee is not None:
            assignee = None
            step("assignee", None, actor)
    return status, assignee


def _pin(
    rng: random.Random,
    issue: IssueSpec,
    members: Sequence[str],
    status: str,
    assignee: str | None,
    pinned: str,
) -> tuple[str, str | None]:
    """Finish an issue's replayed life in the ``pinned`` status, with someone assigned."""
    moment = issue.history[-1].at
    if assignee is None:
        assignee = rng.choice(members)
        moment = min(moment + _gap(rng, 6), _HISTORY_ENDS)
        issue.history.append(Step(moment, "assignee", assignee, assignee))
    if status != pinned:
        moment = min(moment + _gap(rng, 6), _HISTORY_ENDS)
        issue.history.append(Step(moment, "status", assignee, pinned))
    return pinned, assignee


# --- writing a tracker --------------------------------------------------------------------------


def _load(inst: seahaven.Instance, tracker: Tracker, rng: random.Random) -> None:
    """Write the declared tracker into a blank instance, in one bulk transaction."""
    with inst.bulk() as ctx:
        user_ids: dict[str, str] = {}
        for number, person in enumerate(tracker.people, start=1):
            user_ids[person.email] = f"u_{number}"
            ctx.db.execute(
                "INSERT INTO users (id, email, name, role, created_at) VALUES (?, ?, ?, ?, ?)",
                f"u_{number}",
                person.email,
                person.name,
                person.role,
                _iso(_day(person.joined)),
            )
        team_ids: dict[str, str] = {}
        members: dict[str, list[str]] = {}
        for team in tracker.teams:
            team_ids[team.key] = ctx.ids.uuid()
            members[team.key] = []
            ctx.db.execute(
                "INSERT INTO teams (id, key, name, description, issue_counter, created_at) "
                "VALUES (?, ?, ?, ?, 0, ?)",
                team_ids[team.key],
                team.key,
                team.name,
                team.description,
                _iso(_day(team.created)),
            )
        for person in tracker.people:
            for key in person.teams:
                # A viewer is in the team to read along; the work is done by everyone else.
                if person.role != "viewer":
                    members[key].append(user_ids[person.email])
                joined = max(_day(person.joined, 10), _day(_team(tracker, key).created, 10))
                ctx.db.execute(
                    "INSERT INTO team_members (team_id, user_id, joined_at) VALUES (?, ?, ?)",
                    team_ids[key],
                    user_ids[person.email],
                    _iso(joined),
                )
        project_ids: dict[str, str] = {}
        finished: dict[str, datetime] = {}
        for project in tracker.projects:
            project_ids[project.name] = ctx.ids.uuid()
            updated = _day(project.finished, 17) if project.finished else _day(project.created)
            if project.finished:
                finished[project.name] = updated
            ctx.db.execute(
                "INSERT INTO projects (id, team_id, name, description, state, lead_id, "
                "target_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                project_ids[project.name],
                team_ids[project.team],
                project.name,
                project.description,
                project.state,
                user_ids[project.lead],
                project.target_date,
                _iso(_day(project.created)),
                _iso(updated),
            )
        label_ids: dict[tuple[str, str], str] = {}
        for label in tracker.labels:
            label_ids[(label.team, label.name)] = ctx.ids.uuid()
            ctx.db.execute(
                "INSERT INTO labels (id, team_id, name, color, description, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                label_ids[(label.team, label.name)],
                team_ids[label.team],
                label.name,
                label.color,
                label.description,
                _iso(_day(_team(tracker, label.team).created, 11)),
            )
        # Keys are handed out in the order the issues were created, team by team, as the
        # counter would have handed them out.
        counters = dict.fromkeys(team_ids, 0)
        issues = sorted(tracker.issues, key=lambda issue: (issue.created, issue.title))
        issue_ids: list[str] = []
        for issue in issues:
            counters[issue.team] += 1
            issue.key = f"{issue.team}-{counters[issue.team]}"
            issue.keep_open = issue.key in tracker.pins
            issue_ids.append(
                _write_issue(
                    ctx,
                    rng,
                    issue,
                    user_ids,
                    members,
                    project_ids,
                    team_ids,
                    label_ids,
                    finished,
                    tracker,
                )
            )
        for key, counter in counters.items():
            ctx.db.execute(
                "UPDATE teams SET issue_counter = ? WHERE id = ?", counter, team_ids[key]
            )
        _write_comments(ctx, rng, tracker, issues, issue_ids, members)


def _team(tracker: Tracker, key: str) -> TeamSpec:
    return next(team for team in tracker.teams if team.key == key)


def _write_issue(
    ctx: seahaven.Ctx,
    rng: random.Random,
    issue: IssueSpec,
    user_ids: dict[str, str],
    members: dict[str, list[str]],
    project_ids: dict[str, str],
    team_ids: dict[str, str],
    label_ids: dict[tuple[str, str], str],
    finished: dict[str, datetime],
    tracker: Tracker,
) -> str:
    """Replay one issue's life and write its row, its labels and its audit trail."""
    team_members = members[issue.team]
    creator = rng.choice(team_members)
    must_close_by = finished.get(issue.project)
    if issue.keep_open and must_close_by is not None:
        raise seahaven.WorldBug(f"{issue.key} is pinned open in a finished project")
    status, assignee = _live(rng, issue, team_members, creator, _HISTORY_ENDS, must_close_by)
    pinned = tracker.pins.get(issue.key)
    if pinned is not None:
        status, assignee = _pin(rng, issue, team_members, status, assignee, pinned)
    issue_id = ctx.ids.uuid()
    completed = None
    for earlier in issue.history:
        if earlier.kind == "status":
            completed = earlier.at if earlier.value in ("done", "canceled") else None
    last = issue.history[-1].at
    archived = None
    if (
        completed is not None
        and issue.archive_after is not None
        and completed + issue.archive_after < _HISTORY_ENDS
    ):
        archived = completed + issue.archive_after
    first_status, first_assignee = (issue.history[0].value or "|").split("|")
    ctx.db.execute(
        "INSERT INTO issues (id, key, team_id, project_id, title, description, status, "
        "priority, assignee_id, creator_id, estimate, due_at, created_at, updated_at, "
        "completed_at, archived_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        issue_id,
        issue.key,
        team_ids[issue.team],
        project_ids[issue.project],
        issue.title,
        issue.description,
        status,
        issue.priority,
        assignee,
        creator,
        issue.estimate,
        None if issue.due is None else _iso(issue.due),
        _iso(issue.created),
        _iso(archived or last),
        None if completed is None else _iso(completed),
        None if archived is None else _iso(archived),
    )
    for name in issue.labels:
        ctx.db.execute(
            "INSERT INTO issue_labels (issue_id, label_id) VALUES (?, ?)",
            issue_id,
            label_ids[(issue.team, name)],
        )
    _events.record(
        ctx,
        issue_id,
        creator,
        "created",
        {"key": issue.key, "status": first_status, "assignee_id": first_assignee or None},
        at=_iso(issue.created),
    )
    status_now, assignee_now = first_status, first_assignee or None
    for happened in issue.history[1:]:
        if happened.kind == "status":
            payload: dict[str, object] = {"from": status_now, "to": happened.value}
            status_now = str(happened.value)
        else:
            payload = {"from": assignee_now, "to": happened.value}
            assignee_now = happened.value
        _events.record(ctx, issue_id, happened.actor, happened.kind, payload, at=_iso(happened.at))
    return issue_id


def _write_comments(
    ctx: seahaven.Ctx,
    rng: random.Random,
    tracker: Tracker,
    issues: Sequence[IssueSpec],
    issue_ids: Sequence[str],
    members: dict[str, list[str]],
) -> None:
    """Spread the fixture's comments over its issues, each within the issue's life."""
    # Busier issues (ones that moved more) draw more of the conversation.
    weights = [1 + len(issue.history) for issue in issues]
    chosen = rng.choices(range(len(issues)), weights=weights, k=tracker.comment_count)
    planned: list[tuple[datetime, int, str, str]] = []
    for index in chosen:
        issue = issues[index]
        start = issue.created + timedelta(minutes=10)
        end = min(issue.history[-1].at + timedelta(days=2), _HISTORY_ENDS)
        if end <= start:
            end = start + timedelta(minutes=20)
        span = int((end - start).total_seconds())
        moment = start + timedelta(seconds=rng.randrange(max(span, 1)))
        author = rng.choice(members[issue.team])
        planned.append((moment, index, author, rng.choice(tracker.comment_texts)))
    for moment, index, author, body in sorted(planned):
        comment_id = ctx.ids.uuid()
        ctx.db.execute(
            "INSERT INTO comments (id, issue_id, author_id, body, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            comment_id,
            issue_ids[index],
            author,
            body,
            _iso(moment),
        )
        _events.record(
            ctx, issue_ids[index], author, "comment", {"comment_id": comment_id}, at=_iso(moment)
        )


# --- empty ---------------------------------------------------------------------------------------


def empty(inst: seahaven.Instance) -> None:
    """Nothing: the schema and no rows."""


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
    start = _day("2026-04-01")
    spacing = (_day("2026-05-29") - start) / len(_TALLY_ISSUES)
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
    _load(inst, tracker, rng)


# --- agency: Northlight, a twelve-person digital agency -----------------------------------------

_NORTHLIGHT_PEOPLE = (
    Person("Elena Vasquez", "elena@northlight.test", "admin", "2025-11-03", ("ENG", "DES", "CS")),
    Person("Tomás Reyes", "tomas@northlight.test", "admin", "2025-11-03", ("ENG",)),
    Person("Aiko Tanaka", "aiko@northlight.test", "member", "2025-11-03", ("ENG",)),
    Person("Kwame Mensah", "kwame@northlight.test", "member", "2025-11-10", ("ENG",)),
    Person("Sofia Lindqvist", "sofia@northlight.test", "member", "2025-11-10", ("ENG",)),
    Person("Daniel Okoro", "daniel@northlight.test", "member", "2025-11-17", ("DES",)),
    Person("Hannah Weiss", "hannah@northlight.test", "member", "2025-11-17", ("DES",)),
    Person("Luca Romano", "luca@northlight.test", "member", "2025-11-24", ("DES", "ENG")),
    Person("Grace Mwangi", "grace@northlight.test", "member", "2025-11-03", ("CS",)),
    Person("Oliver Hart", "oliver@northlight.test", "member", "2025-11-17", ("CS",)),
    Person("Fatima Zahra", "fatima@northlight.test", "member", "2025-12-01", ("CS", "DES")),
    Person("Ben Carter", "ben@northlight.test", "viewer", "2025-12-01", ("CS",)),
)

_NORTHLIGHT_TEAMS = (
    TeamSpec(
        "ENG",
        "Engineering",
        "Builds and runs what the agency ships for its clients: web apps, storefronts, "
        "integrations and the billing platform.",
        "2025-11-03",
    ),
    TeamSpec(
        "DES",
        "Design",
        "Brand, product and interface design, and the agency's design system.",
        "2025-11-03",
    ),
    TeamSpec(
        "CS",
        "Client Services",
        "Account management: kickoffs, status reports, change requests, invoices and "
        "everything a client asks for.",
        "2025-11-03",
    ),
)

# Each project, the parts of it issues are about, and titles only that project has.
_NORTHLIGHT_PROJECTS: tuple[tuple[ProjectSpec, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ProjectSpec(
            "ENG",
            "Harbor Credit Union portal",
            "Online banking portal for Harbor Credit Union members: accounts, transfers, "
            "statements and card controls.",
            "active",
            "tomas@northlight.test",
            "2025-12-01",
            target_date="2026-08-31",
        ),
        ("Login", "Transfers", "Statements", "Card controls", "Account overview", "Alerts"),
        (
            "Transfers: a scheduled transfer runs twice on the first of the month",
            "Statements: PDF statements are missing the closing balance",
            "Card controls: freezing a card does not block contactless payments",
            "Login: lock the account after repeated failed one-time codes",
            "Alerts: low-balance alert fires for joint accounts the member cannot see",
            "Account overview: pending transactions shown as posted",
            "Transfers: limit external transfers for new payees for 24 hours",
            "Statements: allow downloading a year of statements at once",
        ),
    ),
    (
        ProjectSpec(
            "ENG",
            "Larkspur Foods storefront",
            "Online shop for Larkspur Foods: catalogue, cart, checkout, subscriptions and "
            "order history.",
            "active",
            "aiko@northlight.test",
            "2025-12-08",
            target_date="2026-07-15",
        ),
        ("Checkout", "Cart", "Product page", "Search", "Subscriptions", "Order history"),
        (
            "Checkout: billing address is not saved for returning customers",
            "Checkout: a declined card leaves the order pending",
            "Cart: quantities above 99 overflow the input",
            "Subscriptions: skipping a delivery also cancels the next one",
            "Product page: allergens missing from the nutrition table",
            "Search: no results for plural product names",
            "Order history: reorder button adds discontinued items",
            "Subscriptions: billing date does not move when the delivery day changes",
        ),
    ),
    (
        ProjectSpec(
            "ENG",
            "Billing platform migration",
            "Move the agency's own time tracking and client billing off spreadsheets onto one "
            "billing platform: rates, timesheets, invoices and payment reconciliation.",
            "active",
            "kwame@northlight.test",
            "2026-01-05",
            target_date="2026-06-30",
        ),
        ("Billing exports", "Invoices", "Timesheets", "Rate cards", "Reconciliation", "Reports"),
        (
            "Billing exports: totals do not match the invoices for part-month projects",
            "Invoices: VAT rounding differs between the PDF and the ledger",
            "Timesheets: hours logged after midnight land on the wrong day",
            "Rate cards: a rate change applies to hours already invoiced",
            "Reconciliation: bank payments with two invoice numbers are not matched",
            "Reports: utilisation report counts holidays as billable",
            "Import last year's billing spreadsheets",
            "Invoices: send billing reminders from the platform instead of by hand",
            "Billing exports: add the client's purchase order number",
        ),
    ),
    (
        ProjectSpec(
            "ENG",
            "Meridian Health booking app",
            "Appointment booking for Meridian Health's clinics, on the web and in a mobile "
            "wrapper.",
            "planned",
            "sofia@northlight.test",
            "2026-04-20",
            target_date="2026-10-30",
        ),
        ("Booking", "Reminders", "Clinic search", "Patient profile"),
        (
            "Booking: double booking when two patients take the last slot",
            "Reminders: text message reminders in the patient's language",
            "Clinic search: sort clinics by distance",
        ),
    ),
    (
        ProjectSpec(
            "DES",
            "Design system 2.0",
            "The agency's shared component library: tokens, type scale, components and their "
            "documentation.",
            "active",
            "daniel@northlight.test",
            "2025-12-01",
        ),
        ("Buttons", "Forms", "Tables", "Navigation", "Colour tokens", "Icons"),
        (
            "Publish the design system documentation site",
            "Token naming convention for spacing",
            "Deprecate the old grid in the component library",
        ),
    ),
    (
        ProjectSpec(
            "DES",
            "Larkspur rebrand",
            "New identity for Larkspur Foods ahead of the storefront launch.",
            "active",
            "hannah@northlight.test",
            "2026-01-12",
            target_date="2026-06-15",
        ),
        ("Logo", "Packaging", "Product photography", "Storefront pages", "Brand guidelines"),
        (
            "Logo: final lockups for dark backgrounds",
            "Packaging: dielines for the new jar sizes",
            "Storefront pages: hero images for the spring range",
        ),
    ),
    (
        ProjectSpec(
            "DES",
            "Kestrel Air brand guidelines",
            "Brand guidelines and a booking-flow redesign for Kestrel Air, delivered and "
            "signed off in March.",
            "done",
            "luca@northlight.test",
            "2025-12-01",
            target_date="2026-03-13",
            finished="2026-03-13",
        ),
        ("Guidelines", "Booking flow", "Illustrations", "Email templates"),
        (
            "Booking flow: seat map colours fail contrast checks",
            "Guidelines: photography do's and don'ts",
            "Email templates: booking confirmation layout",
        ),
    ),
    (
        ProjectSpec(
            "CS",
            "Client onboarding playbook",
            "How a new client goes from signed contract to kickoff: checklists, templates "
            "and the first month's reporting.",
            "active",
            "grace@northlight.test",
            "2025-12-01",
        ),
        ("Kickoff", "Contracts", "Status reports", "Billing setup"),
        (
            "Billing setup: checklist for a new client's billing details",
            "Kickoff: agenda template for the first client workshop",
            "Contracts: standard change-request clause",
        ),
    ),
    (
        ProjectSpec(
            "CS",
            "Support desk rollout",
            "One shared inbox and ticket queue for every client's support requests, with "
            "response-time targets.",
            "active",
            "oliver@northlight.test",
            "2026-02-02",
            target_date="2026-06-30",
        ),
        ("Ticket queue", "Response targets", "Client billing questions", "Escalations"),
        (
            "Ticket queue: route billing questions to finance automatically",
            "Response targets: report on first-response time per client",
            "Escalations: on-call rota for launch weeks",
        ),
    ),
)

_NORTHLIGHT_LABELS = (
    LabelSpec("ENG", "bug", "#e5484d", "Broken behaviour."),
    LabelSpec("ENG", "feature", "#3e63dd", "New capability a client asked for."),
    LabelSpec("ENG", "tech-debt", "#8b8d98", "Cleanup that makes later work cheaper."),
    LabelSpec("ENG", "performance", "#f76b15", "Too slow, too heavy or too many queries."),
    LabelSpec("ENG", "security", "#8e4ec6", "A risk to a client's data or money."),
    LabelSpec("ENG", "accessibility", "#12a594", "Keyboard, screen reader or contrast."),
    LabelSpec("ENG", "billing", "#ffc53d", "Money: invoices, rates, payments."),
    LabelSpec("ENG", "mobile", "#0090ff", "Phones and small screens."),
    LabelSpec("ENG", "api", "#6e56cf", "Endpoints, integrations and webhooks."),
    LabelSpec("ENG", "needs-review", "#ad7f58", "Waiting on someone's second opinion."),
    LabelSpec("DES", "ux", "#3e63dd", "How it works for the person using it."),
    LabelSpec("DES", "visual", "#e93d82", "How it looks."),
    LabelSpec("DES", "research", "#12a594", "Interviews, tests and what they found."),
    LabelSpec("DES", "copy", "#ad7f58", "Words on the page."),
    LabelSpec("DES", "brand", "#ffc53d", "Logo, colour, type and tone."),
    LabelSpec("DES", "illustration", "#8e4ec6", "Drawings and icons."),
    LabelSpec("DES", "handoff", "#0090ff", "Ready, or nearly, for engineering."),
    LabelSpec("DES", "accessibility", "#30a46c", "Contrast, sizes and focus states."),
    LabelSpec("DES", "feedback", "#f76b15", "A client's comments to work through."),
    LabelSpec("DES", "blocked", "#e5484d", "Waiting on something outside the team."),
    LabelSpec("CS", "client-request", "#3e63dd", "Something a client asked for."),
    LabelSpec("CS", "billing", "#ffc53d", "Invoices, payments and rates."),
    LabelSpec("CS", "contract", "#8e4ec6", "Scope, statements of work and sign-off."),
    LabelSpec("CS", "urgent", "#e5484d", "Answer today."),
    LabelSpec("CS", "reporting", "#12a594", "Status reports and metrics."),
    LabelSpec("CS", "onboarding", "#0090ff", "New clients and new contacts."),
    LabelSpec("CS", "meeting", "#ad7f58", "Calls to arrange, run or follow up."),
    LabelSpec("CS", "feedback", "#f76b15", "What a client told us about our work."),
    LabelSpec("CS", "renewal", "#30a46c", "Contracts coming up for renewal."),
    LabelSpec("CS", "escalation", "#e93d82", "Needs someone senior."),
)

# {area} is a part of the issue's project. Each team's issues are drawn from its own list.
_NORTHLIGHT_TITLES: dict[str, tuple[str, ...]] = {
    "ENG": (
        "{area}: returns a 500 when the form is submitted twice",
        "{area}: page is slow on mobile networks",
        "{area}: validation error clears what the user typed",
        "{area}: shows stale data after saving",
        "{area}: breaks when the session expires",
        "{area}: layout breaks in Safari",
        "{area}: untranslated strings in the Spanish locale",
        "{area}: focus is lost after closing a dialog",
        "{area}: screen reader announces the wrong heading",
        "{area}: N+1 queries on load",
        "{area}: errors are swallowed instead of reported",
        "Add end-to-end tests for {area}",
        "Move {area} onto the new API client",
        "Add metrics and alerts for {area}",
        "Remove the old {area} code path",
        "Document the {area} endpoints",
        "Add an audit trail to {area}",
        "Rate-limit the {area} endpoints",
        "Feature flag for the new {area}",
        "{area}: add keyboard navigation",
        "{area}: webhook deliveries are not retried",
        "Load test {area} before launch",
        "{area}: empty state for new accounts",
    ),
    "DES": (
        "Mockups for {area}",
        "Icon set for {area}",
        "Accessibility review of {area}",
        "Apply the new type scale to {area}",
        "Usability test findings: {area}",
        "Hover, focus and disabled states for {area}",
        "Dark theme palette for {area}",
        "Motion spec for {area}",
        "Client feedback round on {area}",
        "Hand off {area} to engineering",
        "Responsive breakpoints for {area}",
        "Empty and error states for {area}",
        "Copy review for {area}",
        "Photography brief for {area}",
        "Component audit: {area}",
        "Contrast fixes in {area}",
        "Illustrations for {area}",
        "Prototype {area} for the client workshop",
    ),
    "CS": (
        "{client}: schedule the monthly review",
        "{client}: send the weekly status report",
        "{client}: answer the question about the billing cycle",
        "{client}: billing contact has changed",
        "{client}: prepare the billing summary for the quarter",
        "{client}: invoice disputed, find the timesheets",
        "{client}: change request for {area}",
        "{client}: collect brand assets",
        "{client}: renewal conversation",
        "{client}: escalation about missed deadline",
        "{client}: add two new contacts to the portal",
        "{client}: confirm scope of the next phase",
        "{client}: follow up on unpaid invoice",
        "{client}: share launch checklist",
        "{client}: feedback survey results",
        "Update the template for {area}",
        "Train the team on {area}",
        "Write the {area} checklist",
    ),
}

_NORTHLIGHT_CLIENTS = (
    "Harbor Credit Union",
    "Larkspur Foods",
    "Kestrel Air",
    "Meridian Health",
    "Fernhill Architects",
    "Bluewater Logistics",
)

# What an issue's description opens with, by team.
_NORTHLIGHT_CONTEXT: dict[str, tuple[str, ...]] = {
    "ENG": (
        "Reported by the client during the demo on Thursday.",
        "Found in the last round of QA.",
        "Came up in the sprint review.",
        "The client's product owner flagged this as a launch blocker.",
        "Noticed while pairing on something else.",
        "Support has had three tickets about this this week.",
        "Part of the scope agreed in the statement of work.",
        "Follow-up from the retrospective.",
    ),
    "DES": (
        "Asked for in the last client review.",
        "Part of the scope agreed in the statement of work.",
        "Engineering needs this before the next sprint starts.",
        "Came out of the usability sessions last week.",
        "The client's marketing team wants to see options first.",
        "Follow-up from the design critique.",
    ),
    "CS": (
        "The client asked for this on the weekly call.",
        "Came in by email to the account inbox.",
        "Elena wants this done before the end of the month.",
        "Part of the onboarding checklist.",
        "The client's finance team is waiting on us.",
        "Raised at the account review.",
    ),
}

# What follows it: for a defect, for a piece of engineering work, and for the other teams.
_NORTHLIGHT_DETAIL: dict[str, tuple[str, ...]] = {
    "bug": (
        "Steps: sign in as a regular member, repeat what the client did, and it goes wrong "
        "on the second try.",
        "Expected the page to keep what was entered; it did not.",
        "Only happens on accounts with more than a few hundred records.",
        "Screenshots and a screen recording are in the client folder.",
        "Happens in production and on staging, not locally.",
        "Started after the last release; the one before was fine.",
    ),
    "task": (
        "We should agree the approach before anyone starts.",
        "Acceptance: the client can do this without calling us.",
        "Check with the client whether the old behaviour is relied on.",
        "The estimate assumes no change to the data model.",
        "Needs a decision from the project lead on priority.",
        "Keep the change behind a flag until the client signs off.",
    ),
    "DES": (
        "Work in the shared design file, on a page of its own.",
        "Two options, then one refined with the client's comments.",
        "Check it against the accessibility checklist before handoff.",
        "Use the tokens from the design system, no one-off colours.",
        "Share a prototype link in this issue when it is ready.",
    ),
    "CS": (
        "Use the template in the shared drive.",
        "Copy the project lead on the reply.",
        "Log the time against the client's retainer.",
        "Put the outcome and any follow-ups in a comment here.",
        "If the client asks for more scope, raise a change request.",
    ),
}

# A title with one of these in it describes something broken rather than work to do.
_DEFECT = re.compile(
    r"500|slow|clears|stale|breaks|untranslated|lost|wrong|N\+1|swallowed|not |missing|twice|"
    r"fails|overflow|double|no results|differ|does not|leaves|fires|shown as|also cancels|"
    r"do not|runs twice|disputed"
)


def _describe(rng: random.Random, team: str, title: str) -> str:
    """A description to go with ``title``: where the issue came from, and what it needs."""
    kind = ("bug" if _DEFECT.search(title) else "task") if team == "ENG" else team
    return f"{rng.choice(_NORTHLIGHT_CONTEXT[team])} {rng.choice(_NORTHLIGHT_DETAIL[kind])}"


_NORTHLIGHT_COMMENTS = (
    "Picked this up.",
    "I can reproduce it with the client's test account.",
    "Not reproducible for me. Do we have a screenshot?",
    "Found it: the query ignores the account's timezone.",
    "Pull request is up, review welcome.",
    "Reviewed, looks good to me.",
    "Left two comments on the pull request.",
    "Merged and deployed to staging.",
    "Deployed to production.",
    "Client confirmed it works now.",
    "Client asked whether this can wait until after launch.",
    "Moving this to the next sprint; we ran out of time.",
    "Blocked on the client sending the API credentials.",
    "Credentials arrived, unblocked.",
    "This is bigger than the estimate. I'd split it in two.",
    "Split the follow-up into its own issue.",
    "Raised it in the client call; they are happy with the plan.",
    "Design updated in the shared file.",
    "Engineering, the handoff notes are in the spec.",
    "Can someone from design look at the spacing here?",
    "Tested on iOS and Android, both fine.",
    "Still seeing this in Safari.",
    "Added a regression test.",
    "The billing export matches the invoices now.",
    "Checked the timesheets: the hours were logged against the wrong project.",
    "Invoice corrected and resent to the client.",
    "Client paid, closing this out.",
    "Reminder sent to the client's finance contact.",
    "Status report sent.",
    "Meeting booked for Tuesday at 10.",
    "Notes from the call are in the client folder.",
    "Escalated to Elena.",
    "Agreed with the client to drop this from the scope.",
    "Re-opened: the client found another case.",
    "Good catch, thanks.",
    "Let's talk about this at stand-up.",
)


def agency(inst: seahaven.Instance) -> None:
    """Northlight, a twelve-person agency: three teams, nine projects, six hundred issues."""
    rng = random.Random(SEED + 2)
    per_team = {"ENG": 300, "DES": 150, "CS": 150}
    projects: dict[str, list[tuple[ProjectSpec, tuple[str, ...], tuple[str, ...]]]] = {
        spec.team: [] for spec, _, _ in _NORTHLIGHT_PROJECTS
    }
    for spec, areas, own_titles in _NORTHLIGHT_PROJECTS:
        projects[spec.team].append((spec, areas, own_titles))
    issues: list[IssueSpec] = []
    titles_seen: set[str] = set()
    for team, count in per_team.items():
        labels = [label.name for label in _NORTHLIGHT_LABELS if label.team == team]
        made = 0
        while made < count:
            spec, areas, own_titles = rng.choice(projects[team])
            opened = _day(spec.created)
            closes = _day(spec.finished, 17) if spec.finished else _HISTORY_ENDS
            # The finished project's issues were opened while it ran, well before it ended.
            latest = closes - timedelta(days=10) if spec.finished else closes - timedelta(days=1)
            window = int((latest - opened).total_seconds() // 60)
            if window <= 0:
                continue
            # Busier towards the present, as the agency grew.
            created = opened + timedelta(minutes=int(window * rng.random() ** 0.8))
            if rng.random() < 0.15:
                title = rng.choice(own_titles)
            else:
                title = rng.choice(_NORTHLIGHT_TITLES[team]).format(
                    area=rng.choice(areas), client=rng.choice(_NORTHLIGHT_CLIENTS)
                )
            if title in titles_seen:
                continue
            titles_seen.add(title)
            description = _describe(rng, team, title)
            chosen = tuple(sorted(rng.sample(labels, rng.choice((0, 1, 1, 2, 2, 3)))))
            issues.append(
                IssueSpec(
                    team,
                    spec.name,
                    title,
                    description,
                    created,
                    rng.choice((0, 1, 2, 2, 3, 3, 3, 4)),
                    chosen,
                    estimate=rng.choice((None, 1, 2, 3, 5, 8)) if team == "ENG" else None,
                    due=None
                    if rng.random() < 0.75
                    else created + timedelta(days=rng.randint(5, 30)),
                    archive_after=timedelta(days=rng.randint(20, 40))
                    if rng.random() < 0.3
                    else None,
                )
            )
            made += 1
    tracker = Tracker(
        people=_NORTHLIGHT_PEOPLE,
        teams=_NORTHLIGHT_TEAMS,
        projects=[spec for spec, _, _ in _NORTHLIGHT_PROJECTS],
        labels=_NORTHLIGHT_LABELS,
        issues=issues,
        comment_count=1500,
        comment_texts=_NORTHLIGHT_COMMENTS,
        pins={"ENG-12": "in_progress"},
    )
    _load(inst, tracker, rng)


# --- building ----------------------------------------------------------------------------------

FIXTURES: dict[str, tuple[Callable[[seahaven.Instance], None], str]] = {
    "empty": (
        empty,
        "ProjectTracker's schema with no rows: no people, no teams, no issues. Writes need an "
        "actor_id until create_user(role='admin') makes the first admin, who becomes the "
        "default viewer. Start here for setup-flow evals: creating a workspace, its teams and "
        "its first issues.",
    ),
    "small_startup": (
        small_startup,
        "Tally, a three-person startup making invoicing software: one engineering team (ENG), "
        "three people (Maya Chen, admin and the default viewer, u_1; Jonas Berg, u_2; Priya "
        "Raman, u_3), two active projects (Public beta, Recurring invoices), forty issues "
        "ENG-1 to ENG-40 from April and May 2026 with their audit trail, sixty comments and "
        "six labels. Good for reading, triage, transitions and small reports.",
    ),
    "agency": (
        agency,
        "Northlight, a twelve-person digital agency: three teams (ENG, DES, CS), nine projects "
        "for clients and for itself (one finished, one planned), six hundred issues over six "
        "months (December 2025 to May 2026), fifteen hundred comments, thirty labels and an "
        "audit trail full of reassignments and transitions; some closed issues are archived. "
        "Elena Vasquez (u_1, admin, in every team) is the default viewer; u_12 is a viewer "
        "account. Good for cross-team queries, reporting, bulk triage, pagination and search.",
    ),
}


def build(fixture_id: str, *, world: seahaven.World = projecttracker.world) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance at ``NOW``."""
    builder, description = FIXTURES[fixture_id]
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        builder(inst)
        return inst.freeze(fixture_id, description)


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (every one when none is named) inside the package."""
    return seahaven.toolkit.rebuild_fixtures(
        projecttracker.world, build, list(FIXTURES), argv, into=PACKAGE_FIXTURES
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
