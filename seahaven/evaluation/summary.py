"""The summary an eval prints: the numbers over the pack, and a row for every scenario.

``summarize`` takes each planned trial's last result (a re-run supersedes an
errored line) and leaves errored trials out of every number: the mean score and
its interval, pass@k and pass^k, and the per-scenario rows. They are counted
and listed apart, since they say nothing about the agent. ``Summary.render``
writes it for a terminal in under 100 columns; ``Summary.to_dict`` is the same
as JSON.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seahaven.evaluation.results import TrialResult, latest
from seahaven.evaluation.stats import bootstrap_interval, pass_hat_k, per_scenario_rate

__all__ = ["ScenarioSummary", "Summary", "summarize", "total_usage", "usage_line"]

# How wide the text summary may get, how many of the worst scenarios it explains, and how
# many reasons (and errored trials) it lists; --json carries them all.
WIDTH = 100
WORST_SHOWN = 3
REASONS_SHOWN = 3
ERRORED_SHOWN = 10
# How many distinct reasons a scenario's row keeps (the text shows the first few).
REASONS_KEPT = 10
_SCENARIO_COLUMN = 28


@dataclass(frozen=True)
class ScenarioSummary:
    """One scenario's row: its scored trials, passes, mean, pass^k, and why it failed."""

    scenario: str
    # Scored trials (errored ones left out), how many passed, how many errored.
    trials: int
    passed: int
    errored: int
    # The mean score of its scored trials; ``None`` when it has none.
    mean: float | None
    # pass^k for the eval's k (its trials per scenario), when it has that many scored trials.
    pass_hat: float | None
    # The check that failed in most of its scored trials, and in how many.
    most_failed: tuple[str, int] | None
    # The failing checks' reasons, most frequent first: (check, why, trials).
    reasons: tuple[tuple[str, str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON data."""
        return {
            "scenario": self.scenario,
            "trials": self.trials,
            "passed": self.passed,
            "errored": self.errored,
            "mean": self.mean,
            "pass_hat": self.pass_hat,
            "most_failed": None
            if self.most_failed is None
            else {"check": self.most_failed[0], "failed": self.most_failed[1]},
            "reasons": [
                {"check": check, "why": why, "trials": count} for check, why, count in self.reasons
            ],
        }


@dataclass(frozen=True)
class Summary:
    """An eval's numbers: the mean score with its interval, pass@k and pass^k for each k.

    Errored trials (``TrialResult.errored``) are in ``results`` and
    ``errored``, listed in ``errored_trials``, and in no score.
    """

    pack: str
    split: str | None
    scenarios: int
    trials: int
    results: int
    mean: float
    interval: tuple[float, float]
    pass_at: dict[int, float] = field(default_factory=dict)
    pass_hat: dict[int, float] = field(default_factory=dict)
    # Trials whose line holds an error of any kind (the agent's and errored ones).
    errors: int = 0
    missing: int = 0
    errored: int = 0
    # Each errored trial: its scenario, trial number, error kind and message.
    errored_trials: tuple[dict[str, Any], ...] = ()
    per_scenario: tuple[ScenarioSummary, ...] = ()
    # The tokens, model calls and retries of every trial counted (errored ones too: their
    # tokens were spent), for a policy that records them; empty otherwise.
    usage: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON data."""
        return {
            "pack": self.pack,
            "split": self.split,
            "scenarios": self.scenarios,
            "trials": self.trials,
            "results": self.results,
            "mean": self.mean,
            "interval": list(self.interval),
            "pass_at": {str(k): v for k, v in self.pass_at.items()},
            "pass_hat": {str(k): v for k, v in self.pass_hat.items()},
            "errors": self.errors,
            "missing": self.missing,
            "errored": self.errored,
            "errored_trials": [dict(item) for item in self.errored_trials],
            "per_scenario": [row.to_dict() for row in self.per_scenario],
            "worst": [row.scenario for row in self.worst()],
            "usage": dict(self.usage) or None,
        }

    def worst(self) -> list[ScenarioSummary]:
        """The scenarios that failed most (lowest mean first), at most ``WORST_SHOWN``."""
        failing = [row for row in self.per_scenario if row.trials and row.passed < row.trials]
        failing.sort(key=lambda row: (row.mean if row.mean is not None else 0.0, row.passed))
        return failing[:WORST_SHOWN]

    def render(self) -> str:
        """The summary as text for a terminal: the totals, the table, the reasons, the errored."""
        split = f" ({self.split})" if self.split else ""
        low, high = self.interval
        scored = self.results - self.errored
        counted = _counted(self.results, "result")
        if self.errored:
            counted += f" ({self.errored} errored, not scored)"
        lines = [
            f"{self.pack}{split}: {_counted(self.scenarios, 'scenario')} x "
            f"{_counted(self.trials, 'trial')}, {counted}",
            f"mean score {self.mean:.3f}  (95% CI {low:.3f} to {high:.3f})"
            if scored
            else "no scored trials yet",
        ]
        if self.pass_at:
            width = max(len(str(k)) for k in self.pass_at)
            lines.append("k".rjust(width) + "  pass@k  pass^k")
            for k in sorted(self.pass_at):
                lines.append(
                    f"{str(k).rjust(width)}  {self.pass_at[k]:6.3f}  {self.pass_hat[k]:6.3f}"
                )
        if self.per_scenario:
            lines.append("")
            lines.extend(self.table())
        lines.extend(self.explanations())
        if self.usage:
            lines.append("")
            lines.append(usage_line(self.usage))
        return "\n".join(lines)

    def explanations(self) -> list[str]:
        """What follows the table: why the worst scenarios failed, and the errored trials."""
        lines: list[str] = []
        worst = self.worst()
        if worst:
            lines.append("")
            lines.append("why the worst scenarios failed (trials a check failed in, and why):")
            for row in worst:
                lines.append(f"  {row.scenario}: {row.passed} of {row.trials} passed")
                for check, why, count in row.reasons[:REASONS_SHOWN]:
                    lines.extend(
                        textwrap.wrap(
                            f"{count}x {check}: {why}",
                            width=WIDTH,
                            initial_indent="    ",
                            subsequent_indent="      ",
                            max_lines=3,
                            placeholder=" …",
                        )
                    )
        agent_errors = self.errors - self.errored
        if agent_errors:
            lines.append("")
            lines.append(
                f"{_counted(agent_errors, 'trial')} ended in the policy's error and scored as "
                "failed (see their lines' error)"
            )
        if self.errored_trials:
            lines.append("")
            lines.append(
                f"{_counted(self.errored, 'trial')} errored (not the agent's failure; not "
                "scored; --resume runs them again):"
            )
            for item in self.errored_trials[:ERRORED_SHOWN]:
                where = f"{item['scenario']} #{item['trial']}"
                message = " ".join(item["message"].split())
                lines.append(_cut(f"  {where}  {item['kind']}: {message}"))
            if len(self.errored_trials) > ERRORED_SHOWN:
                lines.append(f"  and {len(self.errored_trials) - ERRORED_SHOWN} more")
        if self.missing:
            lines.append(f"{self.missing} planned trials have no result yet (run with --resume)")
        return lines

    def table(self) -> list[str]:
        """The per-scenario table's lines: trials, passes, errored, mean, pass^k, worst check."""
        names = [row.scenario for row in self.per_scenario]
        name_width = max(8, min(_SCENARIO_COLUMN, max(len(name) for name in names)))
        hat = f"pass^{self.trials}"
        hat_width = max(6, len(hat))
        errored = any(row.errored for row in self.per_scenario)
        head = (
            f"{'scenario'.ljust(name_width)}  trials  passed"
            + ("  errored" if errored else "")
            + f"  {'mean':>5}  {hat:>{hat_width}}  most failed check"
        )
        lines = [head]
        for row in self.per_scenario:
            mean = f"{row.mean:5.3f}" if row.mean is not None else "    -"
            pass_hat = f"{row.pass_hat:.3f}" if row.pass_hat is not None else "-"
            line = (
                f"{_fit(row.scenario, name_width)}  {row.trials:6d}  {row.passed:6d}"
                + (f"  {row.errored:7d}" if errored else "")
                + f"  {mean}  {pass_hat:>{hat_width}}  "
            )
            if row.most_failed is None:
                lines.append(line + "-")
                continue
            check, count = row.most_failed
            times = f" ({count})"
            room = max(12, WIDTH - len(line) - len(times))
            lines.append(line + _fit(check, room).rstrip() + times)
        return lines


def summarize(
    pack: str,
    split: str | None,
    trials: int,
    planned: Sequence[tuple[str, int]],
    results: Iterable[TrialResult],
) -> Summary:
    """The summary of the results of the planned trials (others in the file are left out).

    Each trial's last result counts (a re-run supersedes an errored line), and
    errored trials are left out of every score.
    """
    wanted = set(planned)
    by_key = {key: result for key, result in latest(results).items() if key in wanted}
    order: list[str] = []
    for scenario, _ in planned:
        if scenario not in order:
            order.append(scenario)
    scored: dict[str, list[TrialResult]] = {scenario: [] for scenario in order}
    errored: dict[str, int] = dict.fromkeys(order, 0)
    errored_trials: list[dict[str, Any]] = []
    for key in planned:
        result = by_key.get(key)
        if result is None:
            continue
        if result.errored:
            errored[result.scenario] += 1
            error = result.error
            errored_trials.append(
                {
                    "scenario": result.scenario,
                    "trial": result.trial,
                    "kind": error.kind if error is not None else "?",
                    "message": error.message if error is not None else "",
                }
            )
        else:
            scored[result.scenario].append(result)
    scores = {name: [r.score for r in found] for name, found in scored.items()}
    passes = {name: [r.passed for r in found] for name, found in scored.items() if found}
    all_scores = [score for values in scores.values() for score in values]
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    for k in range(1, trials + 1):
        at = per_scenario_rate(passes, k, hat=False)
        hat = per_scenario_rate(passes, k, hat=True)
        if at is None or hat is None:
            break
        pass_at[k], pass_hat[k] = at, hat
    return Summary(
        pack=pack,
        split=split,
        scenarios=len(order),
        trials=trials,
        results=len(by_key),
        mean=sum(all_scores) / len(all_scores) if all_scores else 0.0,
        interval=bootstrap_interval({name: v for name, v in scores.items() if v}),
        pass_at=pass_at,
        pass_hat=pass_hat,
        errors=sum(1 for result in by_key.values() if result.error is not None),
        missing=len(wanted) - len(by_key),
        errored=len(errored_trials),
        errored_trials=tuple(errored_trials),
        per_scenario=tuple(
            _scenario_row(name, scored[name], errored[name], trials) for name in order
        ),
        usage=total_usage(by_key.values()),
    )


def total_usage(results: Iterable[TrialResult]) -> dict[str, int]:
    """The results' token counts, model calls and retries, summed (empty when none has any)."""
    totals: dict[str, int] = {}
    for result in results:
        for key, value in (result.usage or {}).items():
            totals[key] = totals.get(key, 0) + value
    return totals


def usage_line(usage: dict[str, int]) -> str:
    """The tokens a run used, as the summary's last line says them."""
    calls = usage.get("model_calls", 0)
    retries = usage.get("retries", 0)
    return (
        f"tokens {usage.get('total_tokens', 0):,} ({usage.get('prompt_tokens', 0):,} prompt, "
        f"{usage.get('completion_tokens', 0):,} completion) in {_counted(calls, 'model call')}"
        + (f", {retries} retr{'y' if retries == 1 else 'ies'}" if retries else "")
    )


def _scenario_row(
    scenario: str, results: Sequence[TrialResult], errored: int, k: int
) -> ScenarioSummary:
    n = len(results)
    passed = sum(1 for result in results if result.passed)
    failures: Counter[str] = Counter()
    reasons: Counter[tuple[str, str]] = Counter()
    for result in results:
        seen: set[str] = set()
        for check in result.checks:
            if check.get("passed", True):
                continue
            name = str(check.get("name", "?"))
            if name not in seen:  # a trial counts once per check, however often it failed
                seen.add(name)
                failures[name] += 1
            reasons[(name, " ".join(str(check.get("why", "")).split()))] += 1
    most = failures.most_common(1)
    return ScenarioSummary(
        scenario=scenario,
        trials=n,
        passed=passed,
        errored=errored,
        mean=sum(result.score for result in results) / n if n else None,
        pass_hat=pass_hat_k(n, passed, k) if n >= k else None,
        most_failed=most[0] if most else None,
        reasons=tuple(
            (check, why, count) for (check, why), count in reasons.most_common(REASONS_KEPT)
        ),
    )


def _fit(text: str, width: int) -> str:
    """``text`` on one line, cut with an ellipsis to ``width`` and padded to it."""
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.ljust(width)


def _cut(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
