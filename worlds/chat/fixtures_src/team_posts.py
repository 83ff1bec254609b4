"""The team workspace's history: every message of its four weeks (and older), in order.

``POSTS`` is the script ``generate.team_workspace`` writes, each with its reactions, thread,
edit or deletion; ``MORNING_ANNOUNCEMENT`` is what the owner posts this morning.
"""

from __future__ import annotations

if __package__:
    from .team_cast import Post, Reply
else:  # run as a script (python fixtures_src/generate.py): this directory is on the path
    from team_cast import Post, Reply


POSTS = (
    # --- older history ---
    Post(
        "2025-09-01 08:10",
        "general",
        "maya",
        "Welcome to Tidewater's workspace! #general is for company-wide announcements; "
        "everything else goes in #random.",
    ),
    Post(
        "2026-02-16 10:00",
        "offsite-2026",
        "maya",
        "Planning channel for the March offsite in Lisbon. Dates: March 18–20.",
        reactions={"tada": ("dev", "carla", "rafael")},
    ),
    Post(
        "2026-02-18 11:30",
        "offsite-2026",
        "carla",
        "Hotel booked: 12 rooms near Cais do Sodré. Flights are on you; expense them as usual.",
        replies=(
            Reply(20, "sam", "Is there a group dinner on the first night?"),
            Reply(35, "carla", "Yes, Wednesday at 20:00. Details closer to the date."),
        ),
    ),
    Post(
        "2026-03-23 09:00",
        "offsite-2026",
        "maya",
        "Thank you all for a fantastic offsite! Photos are in the shared album. I'll archive "
        "this channel soon.",
        reactions={"heart": ("dev", "lena", "carla", "rafael", "sam")},
    ),
    Post(
        "2026-03-27 16:40",
        "general",
        "nina",
        "Today is my last day at Tidewater. Thank you all for an amazing run. The support "
        "macros and docs are handed over to @rafael. Stay in touch!",
        reactions={"heart": ("maya", "dev", "lena", "rafael", "carla", "sam")},
        replies=(
            Reply(12, "rafael", "We'll miss you Nina! Your macros will outlive us all."),
            Reply(30, "maya", "Thank you for everything, Nina."),
        ),
    ),
    # --- week of May 4 ---
    Post(
        "2026-05-04 08:30",
        "general",
        "maya",
        "Please welcome @aiko, who joins us today as our first Product Designer! Aiko is "
        "based in Tokyo, so expect some async design reviews.",
        reactions={
            "wave": ("dev", "lena", "priya", "sam", "carla", "rafael", "tom", "jonas"),
            "tada": ("priya", "lena"),
        },
        replies=(
            Reply(
                20,
                "aiko",
                "Thank you! Very happy to be here. I'll be in #design most "
                "of the time, come say hi.",
            ),
            Reply(35, "priya", "Welcome Aiko! I added you to the design review calendar."),
        ),
    ),
    Post(
        "2026-05-04 09:30",
        "engineering",
        "lena",
        "Sprint 19 starts today. Focus: usage-based billing (metering pipeline and invoice line "
        "items), the Postgres 16 upgrade, and paying down flaky tests.",
        reactions={"+1": ("sam", "priya", "jonas")},
    ),
    Post(
        "2026-05-04 12:10",
        "random",
        "sam",
        "Anyone up for a lunchtime run on Wednesday? 5k along the river, slow pace.",
        replies=(
            Reply(6, "jonas", "I'm in."),
            Reply(14, "priya", "Only if slow means actually slow 😅"),
            Reply(20, "sam", "Promise. Six minutes per kilometre."),
        ),
    ),
    Post(
        "2026-05-05 07:30",
        "design",
        "aiko",
        "First pass at the new onboarding flow is in Figma: 4 steps instead of 7, with billing "
        "setup moved to the end.",
        replies=(
            Reply(
                90,
                "priya",
                "Love that billing moved last. Will the plan picker support usage-based plans?",
            ),
            Reply(110, "aiko", "Yes, step 2 has a toggle between flat and usage-based plans."),
            Reply(
                300, "maya", "This is great. Let's test it with three customers before we build it."
            ),
        ),
        reactions={"heart_eyes": ("priya", "lena")},
    ),
    Post(
        "2026-05-05 10:15",
        "engineering",
        "sam",
        "`test_invoice_proration_mid_cycle` is flaky again: it failed 3 of the last 10 CI runs. "
        "Looks like a timezone boundary problem.",
        reactions={"eyes": ("lena",)},
        replies=(
            Reply(12, "priya", "I saw it too; it fails when CI runs just after midnight UTC."),
            Reply(30, "sam", "Pinned the clock in the test fixture. PR #1482 is up for review."),
            Reply(
                45,
                "lena",
                "Approved. Let's keep a list of flaky tests in the sprint doc.",
                reactions={"+1": ("sam",)},
            ),
        ),
    ),
    Post(
        "2026-05-05 13:20",
        "billing",
        "rafael",
        "Acme Corp says they were charged twice for invoice INV-2291 ($4,800). Can someone from "
        "billing check?",
        replies=(
            Reply(
                15,
                "tom",
                "Confirmed: the retry job charged their card twice on May 1. "
                "I'll refund the duplicate charge.",
            ),
            Reply(
                40,
                "tom",
                "Refund issued for the duplicate $4,800 charge on INV-2291. It "
                "takes 5 to 10 business days to show on their statement.",
                reactions={"pray": ("rafael",), "white_check_mark": ("carla",)},
            ),
            Reply(50, "rafael", "Thanks Tom, I've let Acme know."),
        ),
    ),
    Post(
        "2026-05-06 14:00",
        "general",
        "carla",
        "Reminder: April expense reports are due Friday. Submit them through the finance portal, "
        "not by email please 🙏",
        reactions={"white_check_mark": ("tom", "sam")},
    ),
    Post(
        "2026-05-06 16:00",
        "engineering",
        "jonas",
        "Postgres 16 upgrade plan: staging on Thursday, production on Tuesday May 19 in the 06:00 "
        "UTC maintenance window. The runbook is in the wiki.",
        replies=(
            Reply(
                25,
                "dev",
                "Take a snapshot before, and test the logical replication slot "
                "for the analytics export.",
            ),
            Reply(40, "jonas", "Snapshot and replication check are both in the runbook 👍"),
        ),
    ),
    Post(
        "2026-05-06 18:00",
        "leadership",
        "maya",
        "Board meeting is June 10. I'll share the deck draft on Friday; please send me your "
        "slides by Thursday.",
    ),
    Post(
        "2026-05-07 09:00",
        "billing",
        "carla",
        "Month-end close for April is done. Net revenue retention 112%, failed payment rate 2.1%.",
        reactions={"chart_with_upwards_trend": ("maya", "tom")},
    ),
    Post(
        "2026-05-07 10:20",
        "random",
        "priya",
        "The coffee machine on the 2nd floor is fixed! ☕",
        reactions={"coffee": ("lena", "tom", "sam")},
    ),
    Post(
        "2026-05-08 14:20",
        "engineering",
        "priya",
        "The invoice PDF preview now renders line items for metered usage. Screenshots are in "
        "the PR. @aiko I'd love your eyes on the spacing.",
        replies=(
            Reply(
                55,
                "aiko",
                "Looks good! Tighten the table rows a little and use the "
                "secondary grey for unit prices.",
            ),
        ),
    ),
    # --- week of May 11 ---
    Post(
        "2026-05-11 12:00",
        "hiring-backend",
        "lena",
        "Backend pipeline: 14 applicants, 5 phone screens done, 2 candidates moving to the "
        "onsite. Scorecards are in the hiring tracker.",
    ),
    Post(
        "2026-05-11 15:30",
        "general",
        "maya",
        "The all-hands recording is in the shared drive. Highlights: Q2 revenue is 8% ahead of "
        "plan, usage-based billing launches May 27, and we're hiring two backend engineers.",
        reactions={
            "raised_hands": ("dev", "lena", "carla", "rafael", "jonas"),
            "rocket": ("sam", "priya"),
        },
    ),
    Post(
        "2026-05-11 16:45",
        "billing",
        "tom",
        "Question on proration: when a customer upgrades mid-cycle on usage-based billing, do we "
        "prorate the base fee only, or the included usage too?",
        replies=(
            Reply(
                20, "carla", "Base fee only. Included usage resets at the start of the next cycle."
            ),
            Reply(35, "sam", "That matches the implementation. I'll add it to the billing FAQ."),
        ),
    ),
    Post(
        "2026-05-12 11:00",
        "engineering",
        "sam",
        "Another flaky one: `test_webhook_retry_backoff` times out on slow runners. Bumping the "
        "timeout as a stopgap and opening a ticket to make it deterministic.",
        reactions={"+1": ("jonas",)},
    ),
    Post(
        "2026-05-12 19:00",
        "random",
        "tom",
        "Book club pick for June: The Goal by Goldratt. Yes, it's about factories. It's also "
        "about billing, if you squint.",
        replies=(
            Reply(30, "carla", "Read it twice already. Happy to host."),
            Reply(45, "lena", "Joining!"),
        ),
    ),
    Post(
        "2026-05-12 20:15",
        "leadership",
        "maya",
        "Confidential: Northwind Payments reached out about a possible acquisition. Very early. "
        "I told them we're not looking, but agreed to an intro call. Please keep this to this "
        "channel.",
        replies=(
            Reply(40, "dev", "Interesting timing with the 2.4 launch. Happy to join the call."),
            Reply(
                55,
                "carla",
                "I'll pull the numbers together in case they ask for metrics. "
                "Nothing gets shared without an NDA.",
            ),
            Reply(70, "maya", "Agreed, NDA first."),
        ),
    ),
    Post(
        "2026-05-13 09:40",
        "engineering",
        "dev",
        "Code freeze for v2.4 is Wednesday May 20 at 17:00 UTC. Anything not merged by then "
        "ships in 2.5.",
        reactions={"white_check_mark": ("lena", "sam", "priya", "jonas")},
    ),
    Post(
        "2026-05-14 14:58",
        "incidents",
        "jonas",
        "🔴 Incident: webhook deliveries are delayed by up to 40 minutes. Queue depth is growing "
        "on the webhook workers. Investigating.",
        reactions={"eyes": ("dev", "lena", "sam")},
        replies=(
            Reply(
                10,
                "jonas",
                "Cause: a worker deploy at 14:30 halved the concurrency setting. Rolling back.",
            ),
            Reply(
                25,
                "jonas",
                "Rollback done and the queue is draining. Delays are back under a minute.",
            ),
            Reply(30, "dev", "Thanks. Please write the postmortem by Monday."),
            Reply(32, "rafael", "Customer-facing status page updated."),
            Reply(
                50,
                "jonas",
                "✅ Resolved at 15:48 UTC. Postmortem to follow.",
                reactions={"raised_hands": ("dev", "rafael")},
            ),
        ),
    ),
    Post(
        "2026-05-14 15:05",
        "engineering",
        "jonas",
        "FYI: webhook deliveries are delayed right now. Tracking it in #incidents.",
    ),
    Post(
        "2026-05-14 15:20",
        "billing",
        "tom",
        "Dunning emails went out late because of the webhook incident, and some customers got "
        "'payment failed' notices for payments that succeeded. Drafting an apology email.",
        replies=(
            Reply(10, "carla", "Please run it past Rafael before it goes out."),
            Reply(45, "rafael", "Reviewed, looks good. Send it."),
        ),
    ),
    Post(
        "2026-05-15 13:30",
        "random",
        "aiko",
        "Is there a good ramen place near the office? Asking for science.",
        replies=(
            Reply(8, "jonas", "Kanpai on 3rd Street. Get the spicy miso."),
            Reply(15, "rafael", "Seconding Kanpai."),
        ),
    ),
    # --- week of May 18 ---
    Post(
        "2026-05-18 09:30",
        "incidents",
        "jonas",
        "The postmortem for the May 14 webhook delay is in the wiki. Action items: validate "
        "worker concurrency config in CI, and alert when queue depth goes over 1,000.",
        reactions={"+1": ("dev", "lena", "sam", "priya")},
    ),
    Post(
        "2026-05-18 10:00",
        "billing",
        "carla",
        "Reminder: from June 1 the failed payment retry schedule changes to days 1, 3 and 7.",
    ),
    Post(
        "2026-05-18 11:02",
        "random",
        "sam",
        "pushed the hotfix to staging, can someone review?",
        deleted_after=1,
    ),
    Post(
        "2026-05-19 06:50",
        "design",
        "aiko",
        "Usability sessions for the onboarding flow are booked with 3 customers next week. "
        "Notes will go in the research folder.",
    ),
    Post(
        "2026-05-19 07:10",
        "engineering",
        "jonas",
        "Postgres 16 is live in production. The upgrade took 22 minutes with no errors. "
        "Watching query latencies today.",
        reactions={"tada": ("dev", "lena", "sam"), "rocket": ("priya",)},
        replies=(Reply(15, "dev", "Great work Jonas 👏"),),
    ),
    Post(
        "2026-05-19 09:00",
        "general",
        "dev",
        "Heads-up: the office Wi-Fi is being replaced on Thursday evening. Expect a short outage "
        "around 18:00 CET.",
    ),
    Post(
        "2026-05-20 08:45",
        "random",
        "jonas",
        "My cat walked across the keyboard during standup and muted everyone. Apologies to the "
        "team 🐈",
        reactions={"joy": ("sam", "priya", "lena", "aiko")},
    ),
    Post(
        "2026-05-20 16:55",
        "engineering",
        "sam",
        "Metering hotfix merged just before the freeze: usage events with a zero quantity no "
        "longer create empty invoice lines.",
    ),
    Post(
        "2026-05-20 17:30",
        "leadership",
        "carla",
        "Q3 budget proposal: two backend hires, one support hire, and 10% more infrastructure "
        "spend for the Postgres 16 cluster.",
        replies=(
            Reply(
                30,
                "lena",
                "The two backend hires are my priority; the metering roadmap depends on them.",
            ),
            Reply(60, "maya", "Approved in principle. Let's finalise it at board prep."),
        ),
    ),
    Post(
        "2026-05-21 10:30",
        "engineering",
        "lena",
        "The flaky test list is down from 7 to 2 this sprint. Thanks all! Remaining: "
        "`test_dunning_email_schedule` and `test_export_csv_large`.",
        reactions={"muscle": ("sam", "priya", "jonas")},
    ),
    Post(
        "2026-05-21 15:00",
        "hiring-backend",
        "sam",
        "The onsite with candidate Jordan went well: strong on system design, a bit light on "
        "SQL. Leaning hire.",
        replies=(
            Reply(20, "dev", "Same impression. Let's do a short SQL follow-up before we decide."),
            Reply(35, "lena", "Scheduling it for Tuesday."),
        ),
    ),
    Post(
        "2026-05-22 12:00",
        "general",
        "maya",
        "Reminder: Monday May 25 is a company holiday (Memorial Day in the US). We're closing the "
        "whole company, so Europe folks get the long weekend too.",
        reactions={"palm_tree": ("lena", "jonas", "tom", "carla", "aiko")},
    ),
    # --- week of May 25 ---
    Post(
        "2026-05-26 09:15",
        "engineering",
        "priya",
        "Dark mode for the customer portal is on staging behind the `portal_dark_mode` feature "
        "flag, if anyone wants to try it.",
    ),
    Post(
        "2026-05-26 14:30",
        "billing",
        "sam",
        "Usage-based billing dry run on last month's data: 312 invoices generated, and the totals "
        "match the finance model within 0.3%.",
        reactions={"tada": ("carla", "tom"), "chart_with_upwards_trend": ("maya",)},
    ),
    Post(
        "2026-05-27 16:10",
        "general",
        "maya",
        "🚀 Usage-based billing is live for all customers! Huge thanks to the billing squad "
        "(@sam, @tom and @carla) and to everyone who tested. Release notes: v2.4.",
        reactions={
            "tada": ("dev", "lena", "sam", "priya", "jonas", "tom", "carla", "rafael"),
            "rocket": ("aiko", "priya"),
        },
        replies=(
            Reply(
                10,
                "sam",
                "Thanks! The first usage invoices go out on June 1; we'll watch them closely.",
            ),
            Reply(
                25,
                "rafael",
                "Beta customers already said nice things. Acme asked for the "
                "usage export, which we have 🙌",
            ),
        ),
    ),
    Post(
        "2026-05-27 16:30",
        "incidents",
        "sam",
        "Small blip: invoice PDF generation failed for 4 minutes after the 2.4 deploy and "
        "recovered on its own. Not customer visible. Looking into it.",
    ),
    Post(
        "2026-05-27 19:00",
        "leadership",
        "maya",
        "The Acme renewal is at risk: they want a 15% discount for a 2-year term. Rafael is "
        "negotiating; I said we'd go up to 10%.",
    ),
    Post(
        "2026-05-28 08:10",
        "design",
        "aiko",
        "Onboarding flow findings: everyone finished in under 5 minutes, but the team-invite step "
        "confused 2 of 3 people. A revised version is coming Monday.",
        reactions={"raised_hands": ("priya", "maya", "lena")},
    ),
    Post(
        "2026-05-28 13:00",
        "engineering",
        "dev",
        "Retro for sprint 19 is on Friday. Add your notes to the board before then please.",
    ),
    Post(
        "2026-05-28 16:00",
        "random",
        "rafael",
        "Office plant's need a volunteer watering rota while I'm away next week. Any takers?",
        edited=(
            3,
            "The office plants need a volunteer watering rota while I'm away next week. "
            "Any takers?",
        ),
        replies=(Reply(20, "tom", "I can do Monday and Wednesday."),),
    ),
    Post(
        "2026-05-29 11:00",
        "billing",
        "tom",
        "Three customers asked to switch to annual invoicing before the June 1 run. The list is "
        "in the billing tracker.",
    ),
    Post(
        "2026-05-29 17:00",
        "general",
        "lena",
        "Have a great weekend everyone! @jonas is on call this weekend, escalation to @dev.",
        reactions={"wave": ("jonas", "dev", "sam")},
    ),
)

MORNING_ANNOUNCEMENT = (
    "Good morning! The June all-hands is today at 15:00 UTC. The agenda is in the shared drive; "
    "post questions in this thread."
)
