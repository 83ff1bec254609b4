"""One trial's result, the file of them, and the summary an eval prints.

A results file holds one JSON line per trial, written as each trial ends and
flushed, so an eval stopped half way leaves every finished trial and
``--resume`` runs only the rest. A line names the scenario by id and content
hash: resuming against a pack whose scenario changed is refused, because its
old trials graded another task.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seahaven.errors import WorldBug
from seahaven.evaluation.stats import bootstrap_interval, per_scenario_rate

__all__ = [
    "ResultsFile",
    "Summary",
    "TrialError",
    "TrialResult",
    "check_resumable",
    "summarize",
]


class TrialError(BaseModel):
    """Why a trial did not end as an episode should: the policy or the world raised."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # ``policy`` (the policy raised), ``world`` (a bug in the world or its grader), ``runner``
    # (the machinery running the trial failed: a lost worker, a server that went away).
    kind: str
    message: str


class TrialResult(BaseModel):
    """What came of one trial of one scenario."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pack: str
    pack_version: str
    scenario: str
    scenario_hash: str
    trial: int = Field(ge=0)
    seed: int | None
    world: str
    world_version: str
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    checks: list[dict[str, Any]] = Field(default_factory=list)
    calls: int = 0
    ended_by: str | None = None
    answer: str | None = None
    seconds: float = 0.0
    state_sha256: str | None = None
    runner: str = "in process"
    error: TrialError | None = None

    @property
    def key(self) -> tuple[str, int]:
        """The trial this result is of: the scenario and the trial number."""
        return (self.scenario, self.trial)

    def line(self) -> str:
        """The result as one line of a results file."""
        return self.model_dump_json() + "\n"


class ResultsFile:
    """A JSON-lines file of trial results, appended to as trials end."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._handle: IO[str] | None = None

    def read(self) -> list[TrialResult]:
        """Every result in the file; a ``WorldBug`` naming the first line that is not one."""
        if not self.path.exists():
            return []
        results: list[TrialResult] = []
        with self.path.open(encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                if not text.endswith("\n"):
                    # A line cut short by a stop mid-write: that trial runs again.
                    break
                try:
                    results.append(TrialResult.model_validate_json(text))
                except ValidationError as error:
                    first = error.errors()[0]
                    where = ".".join(str(part) for part in first["loc"])
                    raise WorldBug(
                        f"{self.path}:{number} is not a trial result ({where}: {first['msg']}); "
                        "write results to a new file"
                    ) from None
        return results

    def open(self, *, resume: bool) -> list[TrialResult]:
        """Start writing: keep what the file holds when resuming, else refuse to overwrite it."""
        kept: list[TrialResult] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise WorldBug(
                    f"{self.path} already holds results; pass --resume to run only the trials "
                    "it lacks, or write to another file"
                )
            kept = self.read()
            # Rewrite without a cut-off last line, so appended lines start on their own.
            text = "".join(result.line() for result in kept)
            self.path.write_text(text, encoding="utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8")
        return kept

    def write(self, result: TrialResult) -> None:
        """Append one result and flush it to the file."""
        if self._handle is None:
            raise WorldBug("open the results file before writing to it")
        self._handle.write(result.line())
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Stop writing."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


@dataclass(frozen=True)
class Summary:
    """An eval's numbers: the mean score with its interval, pass@k and pass^k for each k."""

    pack: str
    split: str | None
    scenarios: int
    trials: int
    results: int
    mean: float
    interval: tuple[float, float]
    pass_at: dict[int, float] = field(default_factory=dict)
    pass_hat: dict[int, float] = field(default_factory=dict)
    errors: int = 0
    missing: int = 0

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
        }

    def render(self) -> str:
        """The summary as a few lines of text for a terminal."""
        split = f" ({self.split})" if self.split else ""
        low, high = self.interval
        lines = [
            f"{self.pack}{split}: {_counted(self.scenarios, 'scenario')} x "
            f"{_counted(self.trials, 'trial')}, {_counted(self.results, 'result')}",
            f"mean score {self.mean:.3f}  (95% CI {low:.3f} to {high:.3f})",
        ]
        if self.pass_at:
            width = max(len(str(k)) for k in self.pass_at)
            lines.append("k".rjust(width) + "  pass@k  pass^k")
            for k in sorted(self.pass_at):
                lines.append(
                    f"{str(k).rjust(width)}  {self.pass_at[k]:6.3f}  {self.pass_hat[k]:6.3f}"
                )
        if self.errors:
            lines.append(f"{self.errors} trials ended in an error (see their lines' error)")
        if self.missing:
            lines.append(f"{self.missing} planned trials have no result yet (run with --resume)")
        return "\n".join(lines)


def summarize(
    pack: str,
    split: str | None,
    trials: int,
    planned: Sequence[tuple[str, int]],
    results: Iterable[TrialResult],
) -> Summary:
    """The summary of the results of the planned trials (others in the file are left out)."""
    wanted = set(planned)
    by_key: dict[tuple[str, int], TrialResult] = {}
    for result in results:
        if result.key in wanted:
            by_key[result.key] = result
    scores: dict[str, list[float]] = {}
    passes: dict[str, list[bool]] = {}
    for scenario, _ in planned:
        scores.setdefault(scenario, [])
        passes.setdefault(scenario, [])
    for result in by_key.values():
        scores[result.scenario].append(result.score)
        passes[result.scenario].append(result.passed)
    all_scores = [score for values in scores.values() for score in values]
    mean = sum(all_scores) / len(all_scores) if all_scores else 0.0
    complete = {name: values for name, values in passes.items() if values}
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    for k in range(1, trials + 1):
        at = per_scenario_rate(complete, k, hat=False)
        hat = per_scenario_rate(complete, k, hat=True)
        if at is None or hat is None:
            break
        pass_at[k], pass_hat[k] = at, hat
    return Summary(
        pack=pack,
        split=split,
        scenarios=len(scores),
        trials=trials,
        results=len(by_key),
        mean=mean,
        interval=bootstrap_interval({name: v for name, v in scores.items() if v}),
        pass_at=pass_at,
        pass_hat=pass_hat,
        errors=sum(1 for result in by_key.values() if result.error is not None),
        missing=len(wanted) - len(by_key),
    )


def check_resumable(kept: Iterable[TrialResult], hashes: Mapping[str, str], path: Path) -> None:
    """Refuse to resume when a kept result graded another version of its scenario."""
    for result in kept:
        current = hashes.get(result.scenario)
        if current is not None and current != result.scenario_hash:
            raise WorldBug(
                f"{path} holds trials of scenario {result.scenario!r} as it was before it "
                f"changed (hash {result.scenario_hash[:12]}, now {current[:12]}); write to a "
                "new file to grade the new version"
            )


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
