"""The ``agency`` fixture: Northlight, a twelve-person digital agency."""

from __future__ import annotations

import random
import re
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
    from .tracker_writing import HISTORY_ENDS, SEED, load_tracker
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
    from tracker_writing import HISTORY_ENDS, SEED, load_tracker


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
            opened = day(spec.created)
            closes = day(spec.finished, 17) if spec.finished else HISTORY_ENDS
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
    load_tracker(inst, tracker, rng)
