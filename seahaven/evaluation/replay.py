"""Replaying trials from their transcripts: the agent's calls and the user's replies, again.

A transcripts file's line (``seahaven.evaluation.transcripts``) records both
sides of a trial: the agent's tool calls (its ``tool`` events, ``message_user``
included, and ``submit``), the conversation with the scenario's user (each of
the user's messages: its text, whether it ended the conversation, and how many
calls the user made first) and the user's own calls (the ``tool`` events whose
``speaker`` is ``user``). ``RecordedAgent`` plays the agent's side again as a
policy and ``RecordedUser`` the user's as a player: on the trial's seed they
give the same episode, call for call (the same ``state_sha256``), and grade it
again, without asking any model. So a failed trial, a model-played user's
included, can be run again and graded again: after a grader or a world is
fixed, or to look at it in a debugger.

``replay_transcripts(pack, FILE)`` replays every trial a file holds of a pack
(``seahaven eval PACK --replay FILE``); ``RecordedUsers`` is the user source it
hands ``evaluate``. A replay stops, **errored** (kind ``replay``), where it can
no longer follow the record: the agent says something else to the user than
the transcript has (a live agent against a recorded user), or the user is
asked for more than the transcript holds (the trial was errored there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seahaven.errors import ToolError, WorldBug
from seahaven.evaluation.policies import PolicySession, TrialFailure
from seahaven.evaluation.run import DEFAULT_MAX_CONSECUTIVE_ERRORS, evaluate
from seahaven.evaluation.transcripts import read_transcripts
from seahaven.scenarios.users import UserContext, UserPlayer, UserReply

if TYPE_CHECKING:
    from seahaven.evaluation.results import TrialResult
    from seahaven.evaluation.run import TrialRunner
    from seahaven.evaluation.summary import Summary
    from seahaven.evaluation.transcripts import Transcript
    from seahaven.evaluation.trials import TrialSpec
    from seahaven.scenarios.pack import ScenarioSet

__all__ = [
    "RecordedAgent",
    "RecordedTurn",
    "RecordedUser",
    "RecordedUsers",
    "ReplayDiverged",
    "recorded_turns",
    "replay_transcripts",
]

Line = Mapping[str, Any]
# How many characters of a message a divergence quotes.
_QUOTED = 200


class ReplayDiverged(TrialFailure):
    """A replay that can no longer follow its transcript: the trial is errored (``replay``)."""

    def __init__(self, message: str) -> None:
        super().__init__("replay", message)


@dataclass(frozen=True)
class RecordedTurn:
    """One of the user's turns as a transcript recorded it."""

    # The agent's message it answered (``None`` when the record does not say).
    agent: str | None
    text: str
    stop: bool
    # The user's own calls that turn, in order: each tool and its arguments.
    calls: tuple[tuple[str, dict[str, Any]], ...]


def _label(line: Line) -> str:
    return f"{line.get('pack')}/{line.get('scenario')} #{line.get('trial')}"


def recorded_turns(line: Line) -> list[RecordedTurn]:
    """The user's turns in a transcript line; a ``WorldBug`` if the line cannot give them.

    The calls of each turn are the user's ``tool`` events in order, as many as
    the turn's message says it made (``calls``).
    """
    conversation = line.get("conversation")
    if conversation is None:
        conversation = []
    if not isinstance(conversation, list):
        raise WorldBug(f"the transcript of {_label(line)} holds no conversation to replay")
    events = line.get("events") if isinstance(line.get("events"), list) else []
    assert isinstance(events, list)
    user_calls = [
        event
        for event in events
        if isinstance(event, dict)
        and event.get("type") == "tool"
        and event.get("speaker") == "user"
    ]
    turns: list[RecordedTurn] = []
    agent: str | None = None
    used = 0
    for message in conversation:
        if not isinstance(message, dict):
            continue
        if message.get("speaker") == "agent":
            agent = str(message.get("text", ""))
            continue
        if message.get("speaker") != "user":
            continue
        made = message.get("calls") or []
        count = len(made) if isinstance(made, list) else 0
        taken = user_calls[used : used + count]
        if len(taken) < count:
            raise WorldBug(
                f"the transcript of {_label(line)} does not record the user's own calls (its "
                "conversation says the user made some); it was written by an older release or "
                "cut short, and cannot be replayed"
            )
        used += count
        calls = tuple(
            (str(event.get("tool")), dict(event.get("arguments") or {})) for event in taken
        )
        turns.append(
            RecordedTurn(agent, str(message.get("text", "")), bool(message.get("stop")), calls)
        )
        agent = None
    return turns


class RecordedUser:
    """Plays one trial's user again from its transcript line: the same replies, the same calls.

    Each agent message takes the next recorded turn: the user's recorded calls
    are made again (a refusal is met again, as it was), then the recorded reply
    is given. With ``strict`` (the default), an agent message that is not the
    one recorded stops the replay (``ReplayDiverged``): the replies were given
    to another conversation.
    """

    def __init__(self, line: Line, *, strict: bool = True) -> None:
        self._turns = recorded_turns(line)
        self._label = _label(line)
        self._strict = strict
        self._next = 0

    @classmethod
    def from_transcripts(
        cls, path: Path | str, pack: str, scenario: str, trial: int, *, strict: bool = True
    ) -> RecordedUser:
        """The user of trial ``trial`` of ``pack``'s ``scenario``, from a transcripts file."""
        found = read_transcripts(path).get((pack, scenario, trial))
        if found is None:
            raise WorldBug(f"{path} holds no transcript of {pack}/{scenario} #{trial}")
        return cls(found, strict=strict)

    def __repr__(self) -> str:
        return f"RecordedUser({self._label}, {len(self._turns)} turns)"

    def respond(self, turn: UserContext) -> UserReply:
        """The next recorded turn: its calls made again, then its reply."""
        if self._next >= len(self._turns):
            raise ReplayDiverged(
                f"the transcript of {self._label} holds {len(self._turns)} user replies, and "
                f"the agent sent message {self._next + 1}: the recorded trial ended there (it "
                "was errored, or cut short)"
            )
        recorded = self._turns[self._next]
        self._next += 1
        if self._strict and recorded.agent is not None and turn.message != recorded.agent:
            raise ReplayDiverged(
                f"the agent's message {self._next} is not the one the transcript of "
                f"{self._label} recorded (sent {_quoted(turn.message)}, recorded "
                f"{_quoted(recorded.agent)}); the recorded replies answer another conversation"
            )
        for tool, arguments in recorded.calls:
            try:
                turn.call(tool, **arguments)
            except ToolError:
                continue  # refused as it was when recorded; the call log has it again
        return UserReply(recorded.text, stop=recorded.stop)


class RecordedUsers:
    """A user source (``seahaven.evaluation.users``): each trial's user from its transcript.

    ``lines`` are transcript lines (or a transcripts file); a trial is found by
    its scenario and seed. A trial the record lacks gets a player that stops
    the replay at its first message.
    """

    def __init__(self, lines: Iterable[Line] | Path | str, *, strict: bool = True) -> None:
        self._lines = _by_trial(lines)
        self._strict = strict
        users = {line.get("user") for line in self._lines.values()}
        self._recorded = next(iter(users)) if len(users) == 1 else None

    def describe(self) -> str:
        """``replay``, and what played the users when they were recorded (when one thing did)."""
        return f"replay:{self._recorded}" if isinstance(self._recorded, str) else "replay"

    def player(
        self, trial: TrialSpec | None = None, transcript: Transcript | None = None
    ) -> UserPlayer:
        """The recorded user of ``trial``."""
        if trial is None:
            raise WorldBug("RecordedUsers.player needs the trial, to find its transcript")
        line = self._lines.get((trial.scenario.id, trial.seed))
        if line is None:
            return _Unrecorded(f"{trial.pack.name}/{trial.scenario.id} #{trial.trial}")
        return RecordedUser(line, strict=self._strict)


class _Unrecorded:
    """The player of a trial the record lacks: it stops the replay at once."""

    def __init__(self, label: str) -> None:
        self._label = label

    def respond(self, turn: UserContext) -> UserReply:
        raise ReplayDiverged(f"no transcript of {self._label} to replay its user from")


class RecordedAgent:
    """A policy that makes a trial's agent calls again, in order, from its transcript line.

    Each ``tool`` event of the agent (``message_user`` and ``submit``
    included) is called again, and each ``submit`` event submitted again; a
    refusal is met again, as it was. The trial is found by its scenario and
    seed; one the record lacks stops, errored (``ReplayDiverged``).
    """

    def __init__(self, lines: Iterable[Line] | Path | str) -> None:
        self._lines = _by_trial(lines)
        policies = {line.get("policy") for line in self._lines.values()}
        recorded = next(iter(policies)) if len(policies) == 1 else None
        self._name = f"replay:{recorded}" if isinstance(recorded, str) else "replay"

    def describe(self) -> str:
        """``replay``, and the policy recorded (when one played every trial)."""
        return self._name

    def __call__(self, session: PolicySession) -> None:
        """Make the recorded calls on ``session``."""
        seed = getattr(session, "seed", None)
        line = self._lines.get((session.scenario.id, seed))
        if line is None:
            raise ReplayDiverged(
                f"no transcript of scenario {session.scenario.id!r} with seed {seed} to replay"
            )
        for event in line.get("events") or ():
            if session.done:
                return
            if not isinstance(event, dict) or event.get("speaker", "agent") != "agent":
                continue
            kind = event.get("type")
            try:
                if kind == "tool" and isinstance(event.get("tool"), str):
                    session.call(event["tool"], **dict(event.get("arguments") or {}))
                elif kind == "submit" and isinstance(event.get("answer"), str):
                    session.submit(event["answer"])
            except ToolError:
                continue  # refused as it was when recorded


def _by_trial(lines: Iterable[Line] | Path | str) -> dict[tuple[str, int | None], Line]:
    """Transcript lines by (scenario, seed): a trial's seed names it within its pack."""
    if isinstance(lines, Path | str):
        lines = list(read_transcripts(lines).values())
    found: dict[tuple[str, int | None], Line] = {}
    for line in lines:
        scenario, seed = line.get("scenario"), line.get("seed")
        if isinstance(scenario, str) and (seed is None or isinstance(seed, int)):
            found[(scenario, seed)] = line
    return found


def _quoted(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _QUOTED else flat[: _QUOTED - 1] + "…")


def replay_transcripts(
    pack: ScenarioSet,
    transcripts: Path | str,
    *,
    scenarios: Sequence[str] | None = None,
    out: Path | str | None = None,
    resume: bool = False,
    record: Path | str | None = None,
    runner: TrialRunner | None = None,
    progress: Callable[[TrialResult, int, int], None] | None = None,
    max_consecutive_errors: int | None = DEFAULT_MAX_CONSECUTIVE_ERRORS,
) -> tuple[Summary, list[TrialResult]]:
    """Replay every trial ``transcripts`` holds of ``pack`` (or of ``scenarios``), and grade it.

    The agent's calls and the user's replies come from each trial's line, on
    the trial's seed; the results (and, with ``record``, new transcripts) are
    written as ``evaluate`` writes them. A scenario of the file that the pack no
    longer holds is a ``WorldBug`` naming it; a scenario whose content changed
    (its grader fixed, say) is replayed and graded as it is now.
    """
    lines = [
        line for (name, _, _), line in read_transcripts(transcripts).items() if name == pack.name
    ]
    if scenarios:
        lines = [line for line in lines if line.get("scenario") in scenarios]
    if not lines:
        raise WorldBug(
            f"{transcripts} holds no transcript of pack {pack.name!r}"
            + (f" for {', '.join(map(repr, scenarios))}" if scenarios else "")
        )
    held = {scenario.id for scenario in pack}
    gone = sorted({str(line["scenario"]) for line in lines} - held)
    if gone:
        raise WorldBug(
            f"{transcripts} holds trials of {', '.join(map(repr, gone))}, which pack "
            f"{pack.name!r} no longer has; replay the others with --scenario"
        )
    keys = [(str(line["scenario"]), int(line["trial"])) for line in lines]
    ids = sorted({scenario for scenario, _ in keys})
    return evaluate(
        pack,
        RecordedAgent(lines),
        trials=max(trial for _, trial in keys) + 1,
        scenarios=ids,
        out=out,
        resume=resume,
        runner=runner,
        progress=progress,
        max_consecutive_errors=max_consecutive_errors,
        transcripts=record,
        user=RecordedUsers(lines),
        only=keys,
    )
