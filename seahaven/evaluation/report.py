"""Reports of eval runs: what a results file says, and how two runs of one pack differ.

``load_run(path)`` reads a results file (and the transcripts file beside it,
when there is one) into a ``RunReport``: the summary (per-scenario rows,
errored trials apart), pass@k and pass^k for every k with a bootstrap interval
over scenarios, a row per tag, and the tokens and time the run took.
``compare_runs(a, b)`` sets two runs of one pack side by side: each scenario's
difference, the overall difference with a 95% interval from a paired bootstrap
over the scenarios both scored, and the scenarios that flipped.
``seahaven report`` prints either; ``seahaven.evaluation.report_html`` writes
one as a page.

A report reads files only: the pack is loaded when it is installed, for its
scenarios' order and tags, and the report does without it otherwise (the
transcripts carry each trial's tags too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seahaven.errors import WorldBug
from seahaven.evaluation.results import ResultsFile, TrialResult, latest
from seahaven.evaluation.stats import (
    bootstrap_interval,
    paired_bootstrap_interval,
    pass_at_k,
    pass_hat_k,
)
from seahaven.evaluation.summary import Summary, summarize, usage_line
from seahaven.evaluation.transcripts import default_transcripts_path, read_transcripts

__all__ = [
    "Comparison",
    "RunReport",
    "ScenarioDelta",
    "TagRow",
    "compare_runs",
    "load_run",
]


@dataclass(frozen=True)
class TagRow:
    """The scenarios of one tag: their scored trials, passes, mean score and pass^k."""

    tag: str
    scenarios: int
    trials: int
    passed: int
    mean: float | None
    # pass^k for the run's k, over the tag's scenarios with that many scored trials.
    pass_hat: float | None

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON data."""
        return {
            "tag": self.tag,
            "scenarios": self.scenarios,
            "trials": self.trials,
            "passed": self.passed,
            "mean": self.mean,
            "pass_hat": self.pass_hat,
        }


@dataclass(frozen=True)
class RunReport:
    """One results file read whole: its summary and the numbers a reader of it wants."""

    path: Path
    pack: str
    pack_version: str
    policies: tuple[str, ...]
    summary: Summary
    # Each trial's last result, scenario by scenario (the pack's order when it is installed).
    results: tuple[TrialResult, ...]
    pass_at_intervals: dict[int, tuple[float, float]]
    pass_hat_intervals: dict[int, tuple[float, float]]
    tags: tuple[TagRow, ...]
    # Seconds of every trial, summed; and of the model calls the transcripts recorded.
    seconds: float
    model_seconds: float | None = None
    transcripts_path: Path | None = None
    # Each trial's transcript, by (scenario, trial), when the transcripts file is there.
    transcripts: Mapping[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    # Each scenario's tags, as the pack or the transcripts give them.
    scenario_tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """The most trials any scenario has."""
        return self.summary.trials

    def failed(self) -> list[TrialResult]:
        """The scored trials that did not pass, scenario by scenario."""
        return [result for result in self.results if not result.errored and not result.passed]

    def errored(self) -> list[TrialResult]:
        """The errored trials (not the agent's failures, not scored)."""
        return [result for result in self.results if result.errored]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data: the summary's, and what the report adds."""
        return {
            "results_file": str(self.path),
            "transcripts_file": None
            if self.transcripts_path is None
            else str(self.transcripts_path),
            "pack_version": self.pack_version,
            "policies": list(self.policies),
            **self.summary.to_dict(),
            "pass_at_interval": {str(k): list(v) for k, v in self.pass_at_intervals.items()},
            "pass_hat_interval": {str(k): list(v) for k, v in self.pass_hat_intervals.items()},
            "per_tag": [row.to_dict() for row in self.tags],
            "seconds": self.seconds,
            "model_seconds": self.model_seconds,
        }

    def render(self) -> str:
        """The report as text for a terminal."""
        summary = self.summary
        scored = summary.results - summary.errored
        lines = [
            f"{self.path}: pack {self.pack} {self.pack_version}, "
            f"played by {', '.join(self.policies) or 'an unnamed policy'}",
            f"{summary.scenarios} scenarios, {summary.results} trials"
            + (f" ({summary.errored} errored, not scored)" if summary.errored else ""),
        ]
        if scored:
            low, high = summary.interval
            lines.append(f"mean score {summary.mean:.3f}  (95% CI {low:.3f} to {high:.3f})")
        else:
            lines.append("no scored trials")
        if summary.pass_at:
            width = max(len(str(k)) for k in summary.pass_at)
            lines.append("")
            lines.append("k".rjust(width) + "  pass@k  (95% CI)          pass^k  (95% CI)")
            for k in sorted(summary.pass_at):
                at_low, at_high = self.pass_at_intervals[k]
                hat_low, hat_high = self.pass_hat_intervals[k]
                at = f"{summary.pass_at[k]:6.3f}  ({at_low:.3f}-{at_high:.3f})"
                hat = f"{summary.pass_hat[k]:6.3f}  ({hat_low:.3f}-{hat_high:.3f})"
                lines.append(f"{str(k).rjust(width)}  {at}   {hat}")
        if summary.per_scenario:
            lines.append("")
            lines.extend(summary.table())
        if self.tags:
            lines.append("")
            lines.extend(self._tag_table())
        lines.extend(summary.explanations())
        lines.append("")
        time_line = f"time {self.seconds:.1f} s over {summary.results} trials"
        if summary.results:
            time_line += f" ({self.seconds / summary.results:.2f} s a trial"
            if self.model_seconds is not None:
                time_line += f"; {self.model_seconds:.1f} s waiting on the model"
            time_line += ")"
        lines.append(time_line)
        if summary.usage:
            lines.append(usage_line(summary.usage))
        return "\n".join(lines)

    def _tag_table(self) -> list[str]:
        width = max(8, min(28, max(len(row.tag) for row in self.tags)))
        hat = f"pass^{self.k}"
        lines = [f"{'tag'.ljust(width)}  scenarios  trials  passed   mean  {hat:>7}"]
        for row in self.tags:
            mean = f"{row.mean:5.3f}" if row.mean is not None else "    -"
            pass_hat = f"{row.pass_hat:.3f}" if row.pass_hat is not None else "-"
            tag = row.tag if len(row.tag) <= width else row.tag[: width - 1] + "…"
            lines.append(
                f"{tag.ljust(width)}  {row.scenarios:9d}  {row.trials:6d}  {row.passed:6d}  "
                f"{mean}  {pass_hat:>7}"
            )
        return lines


def load_run(path: Path | str, transcripts: Path | str | None = None) -> RunReport:
    """Read a results file (and its transcripts: ``transcripts``, else the default beside it).

    A file holding no results, or the results of more than one pack, is a
    ``WorldBug`` naming what it holds.
    """
    path = Path(path)
    if not path.is_file():
        raise WorldBug(f"{path} is not a results file (seahaven eval --out writes one)")
    found = latest(ResultsFile(path).read())
    if not found:
        raise WorldBug(f"{path} holds no results yet")
    packs = sorted({result.pack for result in found.values()})
    if len(packs) > 1:
        raise WorldBug(
            f"{path} holds results of the packs {', '.join(packs)}; a report reads one pack's "
            "run: write each pack's results to a file of its own"
        )
    pack = packs[0]
    chosen = Path(transcripts) if transcripts is not None else default_transcripts_path(path)
    kept: dict[tuple[str, int], dict[str, Any]] = {}
    if chosen.is_file():
        kept = {
            (scenario, trial): data
            for (pack_name, scenario, trial), data in read_transcripts(chosen).items()
            if pack_name == pack
        }
    elif transcripts is not None:
        raise WorldBug(f"--transcripts {chosen} is not a file")
    order, tags = _pack_order_and_tags(pack, found.values(), kept)
    rank = {scenario: at for at, scenario in enumerate(order)}
    results = sorted(found.values(), key=lambda r: (rank.get(r.scenario, len(rank)), r.trial))
    planned = [result.key for result in results]
    counts: dict[str, int] = {}
    for scenario, _ in planned:
        counts[scenario] = counts.get(scenario, 0) + 1
    k = max(counts.values())
    summary = summarize(pack, None, k, planned, results)
    scored = _scored(results)
    at_intervals: dict[int, tuple[float, float]] = {}
    hat_intervals: dict[int, tuple[float, float]] = {}
    for j in summary.pass_at:
        at_intervals[j] = _rate_interval(scored, j, hat=False)
        hat_intervals[j] = _rate_interval(scored, j, hat=True)
    model_seconds = (
        sum(
            float(event.get("seconds") or 0.0)
            for data in kept.values()
            for event in data.get("events") or ()
            if isinstance(event, dict) and event.get("type") == "model"
        )
        if kept
        else None
    )
    versions = sorted({result.pack_version for result in results})
    return RunReport(
        path=path,
        pack=pack,
        pack_version=", ".join(versions),
        policies=tuple(sorted({r.policy for r in results if r.policy is not None})),
        summary=summary,
        results=tuple(results),
        pass_at_intervals=at_intervals,
        pass_hat_intervals=hat_intervals,
        tags=tuple(_tag_rows(scored, tags, k)),
        seconds=sum(result.seconds for result in results),
        model_seconds=model_seconds,
        transcripts_path=chosen if kept else None,
        transcripts=kept,
        scenario_tags=tags,
    )


def _pack_order_and_tags(
    pack: str,
    results: Iterable[TrialResult],
    transcripts: Mapping[tuple[str, int], Mapping[str, Any]],
) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """The scenarios in the pack's order (when it is installed) and each one's tags."""
    seen = sorted({result.scenario for result in results})
    tags: dict[str, tuple[str, ...]] = {}
    for (scenario, _), data in transcripts.items():
        found = data.get("tags")
        if isinstance(found, list) and all(isinstance(tag, str) for tag in found):
            tags[scenario] = tuple(found)
    order: list[str] = []
    try:
        from seahaven.scenarios import load_pack

        installed = load_pack(pack)
    except Exception:
        installed = None  # not installed here, or broken: the report does without it
    if installed is not None:
        for held in installed:
            if held.id in seen:
                order.append(held.id)
                tags.setdefault(held.id, tuple(held.tags))
    order.extend(name for name in seen if name not in order)
    return order, tags


def _scored(results: Iterable[TrialResult]) -> dict[str, list[TrialResult]]:
    scored: dict[str, list[TrialResult]] = {}
    for result in results:
        if not result.errored:
            scored.setdefault(result.scenario, []).append(result)
    return scored


def _rate_interval(
    scored: Mapping[str, Sequence[TrialResult]], k: int, *, hat: bool
) -> tuple[float, float]:
    """A bootstrap interval over scenarios for pass^k (``hat``) or pass@k."""
    rates: dict[str, list[float]] = {}
    for scenario, results in scored.items():
        n = len(results)
        if n < k:
            continue
        c = sum(1 for result in results if result.passed)
        rates[scenario] = [pass_hat_k(n, c, k) if hat else pass_at_k(n, c, k)]
    return bootstrap_interval(rates)


def _tag_rows(
    scored: Mapping[str, Sequence[TrialResult]], tags: Mapping[str, Sequence[str]], k: int
) -> list[TagRow]:
    by_tag: dict[str, list[str]] = {}
    for scenario in scored:
        for tag in tags.get(scenario, ()):
            by_tag.setdefault(tag, []).append(scenario)
    rows = []
    for tag in sorted(by_tag):
        scenarios = by_tag[tag]
        trials = [result for scenario in scenarios for result in scored[scenario]]
        hats = [
            pass_hat_k(len(scored[s]), sum(1 for r in scored[s] if r.passed), k)
            for s in scenarios
            if len(scored[s]) >= k
        ]
        rows.append(
            TagRow(
                tag=tag,
                scenarios=len(scenarios),
                trials=len(trials),
                passed=sum(1 for result in trials if result.passed),
                mean=sum(result.score for result in trials) / len(trials) if trials else None,
                pass_hat=sum(hats) / len(hats) if hats else None,
            )
        )
    return rows


# --- two runs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioDelta:
    """One scenario in two runs: its mean score and pass rate in each, and the change."""

    scenario: str
    a_trials: int
    b_trials: int
    a_mean: float | None
    b_mean: float | None
    a_pass_rate: float | None
    b_pass_rate: float | None
    # ``up`` or ``down`` when the scenario's verdict changed (see ``compare_runs``).
    flipped: str | None

    @property
    def difference(self) -> float | None:
        """The mean score in the second run less the first, when both scored it."""
        if self.a_mean is None or self.b_mean is None:
            return None
        return self.b_mean - self.a_mean

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON data."""
        return {
            "scenario": self.scenario,
            "a_trials": self.a_trials,
            "b_trials": self.b_trials,
            "a_mean": self.a_mean,
            "b_mean": self.b_mean,
            "a_pass_rate": self.a_pass_rate,
            "b_pass_rate": self.b_pass_rate,
            "difference": self.difference,
            "flipped": self.flipped,
        }


@dataclass(frozen=True)
class Comparison:
    """Two runs of one pack, scenario by scenario, and the difference overall."""

    a: RunReport
    b: RunReport
    rows: tuple[ScenarioDelta, ...]
    # The mean over the scenarios both scored of (second run's mean score less the first's).
    difference: float
    interval: tuple[float, float]
    # Scenarios left out: scored in one run only, or changed between the runs (another hash).
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def flipped(self, direction: str) -> list[ScenarioDelta]:
        """The scenarios that flipped ``up`` (fail to pass) or ``down``."""
        return [row for row in self.rows if row.flipped == direction]

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON data."""
        return {
            "a": str(self.a.path),
            "b": str(self.b.path),
            "pack": self.a.pack,
            "a_policies": list(self.a.policies),
            "b_policies": list(self.b.policies),
            "compared": len([row for row in self.rows if row.difference is not None]),
            "difference": self.difference,
            "interval": list(self.interval),
            "flipped_up": [row.scenario for row in self.flipped("up")],
            "flipped_down": [row.scenario for row in self.flipped("down")],
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "changed": list(self.changed),
            "per_scenario": [row.to_dict() for row in self.rows],
        }

    def render(self) -> str:
        """The comparison as text for a terminal."""
        compared = [row for row in self.rows if row.difference is not None]
        low, high = self.interval
        lines = [
            f"A: {self.a.path} ({', '.join(self.a.policies) or 'unnamed policy'})",
            f"B: {self.b.path} ({', '.join(self.b.policies) or 'unnamed policy'})",
            f"pack {self.a.pack}: {len(compared)} scenarios scored in both",
            f"mean score B - A: {self.difference:+.3f}  (95% CI {low:+.3f} to {high:+.3f}, "
            "paired bootstrap over scenarios)",
        ]
        changed = [row for row in compared if row.difference]
        if changed:
            width = max(8, min(28, max(len(row.scenario) for row in changed)))
            lines.append("")
            lines.append(f"{'scenario'.ljust(width)}  mean A  mean B   B - A  flipped")
            for row in sorted(changed, key=lambda r: (r.difference or 0.0, r.scenario)):
                name = (
                    row.scenario if len(row.scenario) <= width else row.scenario[: width - 1] + "…"
                )
                lines.append(
                    f"{name.ljust(width)}  {row.a_mean:6.3f}  {row.b_mean:6.3f}  "
                    f"{row.difference:+6.3f}  {row.flipped or ''}"
                )
        for direction, words in (("up", "now pass"), ("down", "now fail")):
            flipped = self.flipped(direction)
            if flipped:
                lines.append("")
                lines.append(
                    f"{len(flipped)} flipped {direction} ({words}): "
                    + ", ".join(row.scenario for row in flipped)
                )
        for label, names in (
            ("scored in A only", self.only_a),
            ("scored in B only", self.only_b),
            ("left out, changed between the runs", self.changed),
        ):
            if names:
                lines.append(f"{len(names)} {label}: {', '.join(names)}")
        return "\n".join(lines)


def compare_runs(a: RunReport, b: RunReport) -> Comparison:
    """Set two runs of one pack side by side (a ``WorldBug`` for runs of two packs).

    Each scenario is compared by its mean score over its scored trials. A
    scenario's verdict is *passes* when more than half of its scored trials
    passed; it flipped ``up`` or ``down`` when the verdicts differ. A scenario
    whose content hash differs between the runs graded another task, and is
    left out (listed as changed).
    """
    if a.pack != b.pack:
        raise WorldBug(
            f"{a.path} holds a run of pack {a.pack!r} and {b.path} one of {b.pack!r}; a "
            "comparison sets two runs of one pack side by side"
        )
    hashes_a = {result.scenario: result.scenario_hash for result in a.results}
    hashes_b = {result.scenario: result.scenario_hash for result in b.results}
    scored_a, scored_b = _scored(a.results), _scored(b.results)
    changed = sorted(s for s in hashes_a if s in hashes_b and hashes_a[s] != hashes_b[s])
    order = [s for s in dict.fromkeys([*hashes_a, *hashes_b]) if s not in changed]
    rows = []
    for scenario in order:
        first, second = scored_a.get(scenario, []), scored_b.get(scenario, [])
        rows.append(
            ScenarioDelta(
                scenario=scenario,
                a_trials=len(first),
                b_trials=len(second),
                a_mean=_mean([r.score for r in first]),
                b_mean=_mean([r.score for r in second]),
                a_pass_rate=_mean([1.0 if r.passed else 0.0 for r in first]),
                b_pass_rate=_mean([1.0 if r.passed else 0.0 for r in second]),
                flipped=_flip(first, second),
            )
        )
    differences = [row.difference for row in rows if row.difference is not None]
    return Comparison(
        a=a,
        b=b,
        rows=tuple(rows),
        difference=sum(differences) / len(differences) if differences else 0.0,
        interval=paired_bootstrap_interval(differences),
        only_a=tuple(row.scenario for row in rows if row.a_trials and not row.b_trials),
        only_b=tuple(row.scenario for row in rows if row.b_trials and not row.a_trials),
        changed=tuple(changed),
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _flip(first: Sequence[TrialResult], second: Sequence[TrialResult]) -> str | None:
    if not first or not second:
        return None
    passes_a = sum(1 for r in first if r.passed) * 2 > len(first)
    passes_b = sum(1 for r in second if r.passed) * 2 > len(second)
    if passes_a == passes_b:
        return None
    return "up" if passes_b else "down"
