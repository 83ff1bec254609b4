"""One trial's result, and the file of them.

A results file holds one JSON line per trial, written as each trial ends and
flushed, so an eval stopped half way leaves every finished trial and
``--resume`` runs only the rest. A line names the scenario by id and content
hash, and the policy that played it: resuming against a pack whose scenario
changed, or with another policy, is refused, because the old lines graded
another task or another agent.

A trial whose failure is not the agent's (the world, its grader, the server or
the machinery running it failed) is **errored**: its line is kept, with
``errored: true``, but it is left out of every score, and ``--resume`` runs it
again; the new line supersedes it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_core import to_jsonable_python

from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.evaluation.transcripts import Transcript

__all__ = [
    "AGENT_KINDS",
    "ResultsFile",
    "TrialError",
    "TrialResult",
    "check_resumable",
    "latest",
    "transcript_line",
]

# The kinds of failure that are the agent's: its trial is scored (a failed episode). Every
# other kind (``world``, ``runner``, and any a runner adds, such as a model API's) is not
# the agent's doing, and its trial is errored.
AGENT_KINDS = frozenset({"policy", "timeout"})


class TrialError(BaseModel):
    """Why a trial did not end as an episode should, and whose failure it was.

    ``kind`` is ``policy`` (the policy raised, or let a refusal escape) or
    ``timeout`` (the trial ran past its time limit): the agent's, scored as a
    failure. ``world`` (a bug in the world or its grader, in process or on the
    server) and ``runner`` (the machinery running the trial failed: a lost
    worker or server, a refused reset) are not the agent's: see ``errored``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    message: str

    @property
    def errored(self) -> bool:
        """Whether the trial is errored: its failure is not the agent's (see ``AGENT_KINDS``)."""
        return self.kind not in AGENT_KINDS


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
    # The whole trial; the episode (making the instance and the policy's play) and the
    # grading within it, where the runner can tell them apart (``None`` where it cannot).
    seconds: float = 0.0
    state_sha256: str | None = None
    runner: str = "in process"
    error: TrialError | None = None
    # Whether the trial is left out of the scores (worked out from ``error``).
    errored: bool = False
    # The policy that played it (``describe_policy``); ``None`` in lines of older releases.
    policy: str | None = None
    episode_seconds: float | None = None
    grade_seconds: float | None = None
    # The conversation with the scenario's simulated user, each message with its speaker
    # (empty without a user), and the user's model tokens, apart from the agent's (``None``
    # for a scripted user).
    conversation: list[dict[str, Any]] = Field(default_factory=list)
    user_tokens: dict[str, int] | None = None
    # What played the scenarios' users in this run when the run chose it (a model-played
    # user names its model, ``chat:MODEL@HOST``; a replay ``replay``); ``None``: each
    # scenario's own user (its script or function).
    user: str | None = None
    # The tokens the policy's model calls used (``prompt_tokens``, ``completion_tokens``,
    # ``total_tokens``, ``model_calls``, ``retries``), for a policy that records them.
    usage: dict[str, int] | None = None
    # The trial's transcript, carried from the runner to ``evaluate``; never in the line.
    _transcript: Transcript | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _errored_from_error(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        error = data.get("error")
        kind = error.kind if isinstance(error, TrialError) else None
        if isinstance(error, dict):
            kind = error.get("kind")
        errored = kind is not None and kind not in AGENT_KINDS
        if "errored" not in data:
            return {**data, "errored": errored}
        if data["errored"] is not errored:
            raise ValueError(
                f"errored is {data['errored']!r}, but an error of kind {kind!r} makes it "
                f"{errored!r}"
            )
        return data

    @property
    def key(self) -> tuple[str, int]:
        """The trial this result is of: the scenario and the trial number."""
        return (self.scenario, self.trial)

    def line(self) -> str:
        """The result as one line of a results file."""
        return self.model_dump_json() + "\n"

    @property
    def transcript(self) -> Transcript | None:
        """The trial's transcript, when its runner kept one (see ``with_transcript``)."""
        return self._transcript

    def with_transcript(self, transcript: Transcript | None) -> TrialResult:
        """This result carrying ``transcript`` (``None``: carrying none), for ``evaluate`` to write.

        The transcript travels with the result object only (a runner on a cluster
        pickles it along); it is never part of the result's line.
        """
        copied = self.model_copy()
        copied._transcript = transcript
        return copied


def latest(results: Iterable[TrialResult]) -> dict[tuple[str, int], TrialResult]:
    """Each trial's last result, by key: a line written later (a re-run) supersedes."""
    found: dict[tuple[str, int], TrialResult] = {}
    for result in results:
        found.pop(result.key, None)  # keep the order in which the trials last ended
        found[result.key] = result
    return found


# Seconds between two syncs of a results file to the disk: each line reaches the system as
# it is written, and the disk at most this long after (and when the file is closed).
SYNC_SECONDS = 1.0


class ResultsFile:
    """A JSON-lines file of trial results, appended to as trials end.

    Each line is handed to the operating system as it is written, so a process that is
    killed loses none; the file is synced to the disk at most every ``SYNC_SECONDS`` and
    when it is closed, so a power cut loses at most the last second's lines, which
    ``--resume`` runs again. A sync a line took a third of a millisecond, as long as a
    whole trial of a quick pack.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._handle: IO[str] | None = None
        # time.monotonic() when the file was last synced (or opened).
        self._synced = 0.0

    def read(self) -> list[TrialResult]:
        """Every result in the file; a ``WorldBug`` naming the first line that is not one."""
        return self._read()[0]

    def _read(self) -> tuple[list[TrialResult], bool]:
        """The results, and whether the file ends cleanly (no line cut short)."""
        if not self.path.exists():
            return [], True
        results: list[TrialResult] = []
        with self.path.open(encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                if not text.endswith("\n"):
                    # A line cut short by a stop mid-write: that trial runs again.
                    return results, False
                try:
                    results.append(TrialResult.model_validate_json(text))
                except ValidationError as error:
                    first = error.errors()[0]
                    where = ".".join(str(part) for part in first["loc"])
                    raise WorldBug(
                        f"{self.path}:{number} is not a trial result ({where}: {first['msg']}); "
                        "write results to a new file"
                    ) from None
        return results, True

    def open(self, *, resume: bool) -> list[TrialResult]:
        """Get ready to write: keep what the file holds when resuming, else refuse to overwrite it.

        Nothing is created yet: the file (and its folder) appear with the first
        result written, so a run refused before its first trial leaves no file.
        """
        kept: list[TrialResult] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise WorldBug(
                    f"{self.path} already holds results; pass --resume to run only the trials "
                    "it lacks, or write to another file"
                )
            kept, clean = self._read()
            if not clean:
                # Drop the cut-off last line, so appended lines start on their own; written
                # aside and moved over the file, so a stop here loses nothing.
                aside = self.path.with_name(self.path.name + ".partial")
                aside.write_text("".join(result.line() for result in kept), encoding="utf-8")
                os.replace(aside, self.path)
        return kept

    def write(self, result: TrialResult) -> None:
        """Append one result and flush it to the system; sync the file if a second has passed."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
            self._synced = time.monotonic()
        self._handle.write(result.line())
        self._handle.flush()
        now = time.monotonic()
        if now - self._synced >= SYNC_SECONDS:
            os.fsync(self._handle.fileno())
            self._synced = now

    def close(self) -> None:
        """Sync what was written to the disk, and stop writing."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            try:
                handle.flush()
                os.fsync(handle.fileno())
            finally:
                handle.close()


def check_resumable(
    kept: Iterable[TrialResult],
    hashes: Mapping[str, str],
    path: Path,
    *,
    pack: str | None = None,
    policy: str | None = None,
    user: str | None = None,
) -> None:
    """Refuse to resume when a kept result graded another version of its scenario.

    With ``pack`` and ``policy``, refuse too when a kept result of that pack was
    played by another policy (lines of older releases, which name none, pass),
    or with its users played by something other than ``user`` (``None``: each
    scenario's own).
    """
    kept = list(kept)
    if pack is not None and policy is not None:
        for result in kept:
            if result.pack == pack and result.policy is not None and result.policy != policy:
                raise WorldBug(
                    f"{path} holds trials of pack {pack!r} played by the policy "
                    f"{result.policy!r}, and this run's policy is {policy!r}; one results file "
                    "scores one agent: write to a new file, or resume with the same policy"
                )
            if result.pack == pack and result.user != user:
                raise WorldBug(
                    f"{path} holds trials of pack {pack!r} whose users were played by "
                    f"{_users(result.user)}, and this run's are played by {_users(user)}; one "
                    "results file scores one agent with one simulated user: write to a new "
                    "file, or resume with the same --user-model"
                )
    for result in kept:
        current = hashes.get(result.scenario)
        if current is not None and current != result.scenario_hash:
            raise WorldBug(
                f"{path} holds trials of scenario {result.scenario!r} as it was before it "
                f"changed (hash {result.scenario_hash[:12]}, now {current[:12]}); write to a "
                "new file to grade the new version"
            )


def _users(who: str | None) -> str:
    return "the scenarios' own users" if who is None else repr(who)


def transcript_line(result: TrialResult, transcript: Transcript, tags: Sequence[str]) -> str:
    """The transcripts file's line for ``result``: its transcript joined to its outcome."""
    data = {
        "pack": result.pack,
        "pack_version": result.pack_version,
        "scenario": result.scenario,
        "scenario_hash": result.scenario_hash,
        "trial": result.trial,
        "seed": result.seed,
        "policy": result.policy,
        "tags": list(tags),
        "tools": transcript.tools,
        "events": transcript.events,
        "usage": transcript.usage or None,
        "score": result.score,
        "passed": result.passed,
        "checks": result.checks,
        "changes": transcript.changes(),
        "ended_by": result.ended_by,
        "answer": result.answer,
        "calls": result.calls,
        "error": None if result.error is None else result.error.model_dump(),
        "errored": result.errored,
        "seconds": result.seconds,
        # The simulated user's side, apart from the agent's (see the module).
        "user": result.user,
        "conversation": result.conversation,
        "user_tokens": result.user_tokens,
        "user_usage": transcript.user_usage or None,
        "state_sha256": result.state_sha256,
    }
    return json.dumps(data, ensure_ascii=False, default=_fallback) + "\n"


def _fallback(value: Any) -> Any:
    # A tool result the session already made JSON data; anything else (a policy's own note
    # holding an object) is written as pydantic would, or by its repr.
    try:
        return to_jsonable_python(value)
    except Exception:
        return repr(value)
