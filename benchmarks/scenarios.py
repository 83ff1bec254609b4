"""What grading costs, against the episode it grades, and how many trials an eval runs a second.

Every round times a ten-call company episode from the ``acme`` fixture (make
the instance, make the calls, read the change log, destroy it) four ways, taking
turns episode by episode, and then two evals:

* **episode**: the calls alone, on a plain instance: the baseline;
* **checks**: the same episode as a scenario's trial, graded by row checks
  (``changed``, ``exists``, ``count``) and ``nothing_else_changed``;
* **replay**: graded by ``matches_solution`` too, with a seed never seen before,
  so the solution is replayed every time (a second episode: the worst case; an
  eval replays once per seed and scenario, and trials of one seed share it);
  the solution is the episode's ten calls, as scripted, and is replayed as
  ``matches_solution`` always replays: in a ``record_net()`` block, from the
  snapshot the trial took of its own instance as the episode began, loaded into
  an idle replay instance the process keeps (``restore_into``);
* **short replay**: the same, with a solution of only the two calls that write,
  as an author would write it to solve the task;
* **eval**: ``seahaven.evaluation.evaluate`` over a pack of that scenario with the
  scripted solution policy, reported as trials per second;
* **eval, company pack**: ``evaluate`` over the shipped ``company`` pack (every
  scenario, one to three calls each, graded by row checks, answers and
  ``nothing_else_changed``) with the solution policy: the eval a user runs.

The figures are medians over rounds; a ratio is the median of the rounds' graded
time over the same round's plain time, so 1.10 means grading added 10%. The replay's
own share is each round's replay-graded time less its checks-graded time, over its
plain time: what ``matches_solution`` adds on top of the checks it sits beside.
Nothing asserts. Run it with

    .venv/bin/python benchmarks/scenarios.py --markdown
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import apsw
import company_world
from company_episode import CALLS, PRINCIPAL, WRITES

import seahaven
from seahaven import grading
from seahaven.evaluation import evaluate, solution_policy
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack
from seahaven.stores.storage import runner_storage

CHECKS = grading.all_of(
    grading.changed(
        "invoices", {"customer_email": "ap@cyberdyne.test"}, to={"status": "paid"}, op="insert"
    ),
    grading.changed("expenses", {"id": "exp_6dd14a2859404c61"}, to={"status": "reimbursed"}),
    grading.exists("charges", {"amount": 275000, "status": "succeeded"}, store="payments"),
    grading.count("messages", store="chat", at_least=1),
    grading.nothing_else_changed(
        allow=[
            "invoices",
            "expenses",
            "approvals",
            "audit_log",
            "payments.customers",
            "payments.payment_methods",
            "payments.charges",
            "payments.payouts",
            "payments.balance_transactions",
            "chat.messages",
        ]
    ),
)


def scenario(
    grader: grading.Grader,
    solution: list[tuple[str, dict[str, Any]]] = CALLS,
    clock_mode: str = "tick",
) -> Scenario:
    return Scenario(
        id="bench",
        world=company_world.world,
        instructions="Invoice Cyberdyne and approve the submitted expense.",
        start={"fixture": "acme", "clock_mode": clock_mode, "startup": PRINCIPAL},
        grader=grader,
        solution=[{"tool": tool, "arguments": arguments} for tool, arguments in solution],
        budget=20,
    )


def _play(call: Callable[..., Any]) -> None:
    for tool, arguments in CALLS:
        with contextlib.suppress(seahaven.ToolError):
            call(tool, **arguments)


def plain_episode(seed: int) -> None:
    # Stored where a trial stores its instance, so the two compare like for like.
    with company_world.world.instance(
        "acme", seed=seed, clock_mode="tick", startup=PRINCIPAL, storage=runner_storage()
    ) as inst:
        _play(inst.call)
        inst.change_log()


def graded_episode(graded: Scenario, seed: int) -> grading.Grade:
    with Trial(graded, seed=seed, world=company_world.world) as trial:
        _play(trial.call)
        return trial.finish()


def timed_together(
    operations: list[Callable[[int], object]], count: int, seeds: itertools.count[int]
) -> list[float]:
    """Milliseconds per run of each operation, ``count`` runs each, taking turns run by run.

    Taking turns puts whatever else the machine does at a moment on every way
    alike, rather than on whichever batch happened to run then.
    """
    gc.collect()
    totals = [0.0] * len(operations)
    for _ in range(count):
        for position, operation in enumerate(operations):
            seed = next(seeds)
            started = time.perf_counter()
            operation(seed)
            totals[position] += time.perf_counter() - started
    return [total * 1e3 / count for total in totals]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--episodes", type=int, default=40, help="episodes per round and way")
    parser.add_argument("--trials", type=int, default=200, help="trials per eval round")
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args(argv)

    checked = scenario(CHECKS)
    replayed = scenario(grading.all_of(CHECKS, grading.matches_solution(ignore=["id"])))
    # Two calls reach the rows at other ticks than the ten do: a fixed clock keeps the times alike.
    short = scenario(
        grading.all_of(CHECKS, grading.matches_solution(ignore=["id"])), WRITES, "fixed"
    )
    # The graders pass on the scripted calls, or the figures would time a failing path.
    assert graded_episode(checked, 1).passed
    assert graded_episode(replayed, 2).passed, graded_episode(replayed, 2).summary()
    assert graded_episode(short, 3).passed, graded_episode(short, 3).summary()
    pack = ScenarioSet("bench", "1", [checked])
    seeds = itertools.count(1000)

    plain: list[float] = []
    checks: list[float] = []
    replay: list[float] = []
    short_replay: list[float] = []
    rates: list[float] = []
    company_rates: list[float] = []
    company = load_pack("company")
    evaluate(company, solution_policy)  # each scenario's solution replayed once, as an eval does
    for _ in range(options.rounds):
        times = timed_together(
            [
                plain_episode,
                lambda seed: graded_episode(checked, seed),
                lambda seed: graded_episode(replayed, seed),
                lambda seed: graded_episode(short, seed),
            ],
            options.episodes,
            seeds,
        )
        for kept, measured in zip((plain, checks, replay, short_replay), times, strict=True):
            kept.append(measured)
        started = time.perf_counter()
        summary, _ = evaluate(pack, solution_policy, trials=options.trials)
        rates.append(options.trials / (time.perf_counter() - started))
        assert summary.mean == 1.0
        started = time.perf_counter()
        summary, results = evaluate(company, solution_policy, trials=2)
        company_rates.append(len(results) / (time.perf_counter() - started))
        assert summary.mean == 1.0, summary
    base = statistics.median(plain)

    def ratio(way: list[float]) -> float:
        # Each round's ratio to its own plain episodes, the median of those.
        return statistics.median(ms / plain_ms for ms, plain_ms in zip(way, plain, strict=True))

    # What the replay adds beside the checks, round by round, over that round's plain time.
    replay_share = statistics.median(
        (replayed_ms - checked_ms) / plain_ms
        for replayed_ms, checked_ms, plain_ms in zip(replay, checks, plain, strict=True)
    )

    rows = [
        ("ten-call company episode (acme), plain", base, None, "baseline"),
        (
            "the same, graded: row checks + nothing_else_changed",
            statistics.median(checks),
            ratio(checks),
            "<= 1.10",
        ),
        (
            "the same, + matches_solution replayed (a new seed each time)",
            statistics.median(replay),
            ratio(replay),
            "<= 2.00",
        ),
        (
            "of it, the replay's own share (replay-graded less checks-graded)",
            statistics.median(r - c for r, c in zip(replay, checks, strict=True)),
            replay_share,
            "<= 1.00",
        ),
        (
            "the same, the solution being its two writing calls, replayed",
            statistics.median(short_replay),
            ratio(short_replay),
            "-",
        ),
    ]
    rate = statistics.median(rates)
    company_rate = statistics.median(company_rates)
    company_case = f"`evaluate`, company pack ({len(company.scenarios)} scenarios x 2), solution"
    machine = f"Python {platform.python_version()}, SQLite {apsw.sqlite_lib_version()}"
    if options.markdown:
        print(f"{machine}, {options.rounds} rounds of {options.episodes} episodes each way\n")
        print("| case | ms an episode | vs plain | target |")
        print("|---|---|---|---|")
        for name, ms, ratio, target in rows:
            print(f"| {name} | {ms:.2f} | {'-' if ratio is None else f'{ratio:.2f}'} | {target} |")
        print(f"| `evaluate`, the ten-call scenario, in process | {rate:.0f} trials/s | - | - |")
        print(f"| {company_case}, in process | {company_rate:.0f} trials/s | - | >= 100 |")
    else:
        print(machine)
        for name, ms, ratio, target in rows:
            shown = "" if ratio is None else f"  x{ratio:.2f}"
            print(f"{name:<62} {ms:7.2f} ms{shown}  target {target}")
        print(f"{'evaluate, the ten-call scenario, in process':<62} {rate:7.0f} trials/s")
        print(f"{company_case.replace('`', ''):<62} {company_rate:7.0f} trials/s  target >= 100")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
