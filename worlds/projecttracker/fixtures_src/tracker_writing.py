"""A ``Tracker`` written into an instance (``load_tracker``), inside ``inst.bulk()``.

Each issue's life is replayed at instants computed before ``NOW`` (created, assigned, moved
through its statuses, commented on, closed, sometimes reopened or reassigned), following the
rules the tools follow; ``HISTORY_ENDS`` is when the history stops.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from projecttracker.tools import _events

import seahaven

if __package__:
    from .tracker_model import IssueSpec, Step, TeamSpec, Tracker, day
else:  # run as a script (python fixtures_src/generate.py): this directory is on the path
    from tracker_model import IssueSpec, Step, TeamSpec, Tracker, day


# The instant every fixture is frozen at, and the seed each is built with.
NOW = "2026-06-01T09:00:00.000Z"
SEED = 20260601

_NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
# Nothing in a fixture's past is later than this: a run on a fixed clock stamps NOW, so what
# an episode did is told apart from the history by its instant.
HISTORY_ENDS = _NOW - timedelta(minutes=30)
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
        moment = min(moment + _gap(rng, 6), HISTORY_ENDS)
        issue.history.append(Step(moment, "assignee", assignee, assignee))
    if status != pinned:
        moment = min(moment + _gap(rng, 6), HISTORY_ENDS)
        issue.history.append(Step(moment, "status", assignee, pinned))
    return pinned, assignee


# --- writing a tracker --------------------------------------------------------------------------


def load_tracker(inst: seahaven.Instance, tracker: Tracker, rng: random.Random) -> None:
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
                _iso(day(person.joined)),
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
                _iso(day(team.created)),
            )
        for person in tracker.people:
            for key in person.teams:
                # A viewer is in the team to read along; the work is done by everyone else.
                if person.role != "viewer":
                    members[key].append(user_ids[person.email])
                joined = max(day(person.joined, 10), day(_team(tracker, key).created, 10))
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
            updated = day(project.finished, 17) if project.finished else day(project.created)
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
                _iso(day(project.created)),
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
                _iso(day(_team(tracker, label.team).created, 11)),
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
    status, assignee = _live(rng, issue, team_members, creator, HISTORY_ENDS, must_close_by)
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
        and completed + issue.archive_after < HISTORY_ENDS
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
        end = min(issue.history[-1].at + timedelta(days=2), HISTORY_ENDS)
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
