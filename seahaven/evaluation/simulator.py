"""Checks on the simulator: does a model-played user keep to its instructions?

A model playing a scenario's user is another model that can be wrong, and a
wrong user fails a right agent. ``check_simulator(pack, user)`` measures how far
one can be trusted. For each scenario with a user and a reference solution, it
plays the reference conversation (the solution's ``message_user`` calls and the
agent's other calls, the events firing as in a trial) twice from the scenario's
start on one seed: once against the scenario's own user (its script or
function), once against the player ``user`` makes (``seahaven.agents.ModelUser``).
Then it reports, turn by turn, where the model-played user departed:

- ``unsupported_fact``: its reply holds a value (a word with a digit in it, or
  an e-mail address) found nowhere it could have learnt it: its instructions,
  the agent's messages so far, the results of its own calls, or the scripted
  user's reply to the same message (and the scripted user's call results);
- ``unexpected_call``: it made a call (a tool with its arguments) that its
  script never makes;
- ``missed_call``: its script makes a call that it never made;
- ``ended_early``: it ended the conversation at a turn where its script goes on;
- ``did_not_end``: its script ends the conversation at a turn where it went on.

It also grades what the reference conversation left with the model-played
user: a reference solution that no longer passes says the simulator changed the
task. A user model that fails past its retries is the scenario's ``error``.
``seahaven scenarios check PACK --user-model NAME`` prints the reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seahaven.declaration.world import World
from seahaven.errors import ToolError, WorldBug
from seahaven.evaluation.policies import TrialFailure
from seahaven.evaluation.trials import TrialSpec, trial_seed
from seahaven.evaluation.users import UserSource, check_user_source, close_user
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.trial import Trial
from seahaven.scenarios.users import MESSAGE_USER_TOOL, UserPlayer

__all__ = [
    "DEPARTURE_KINDS",
    "Departure",
    "SimulatorReport",
    "check_simulator",
    "check_user_of",
    "facts_in",
]

DEPARTURE_KINDS = (
    "unsupported_fact",
    "unexpected_call",
    "missed_call",
    "ended_early",
    "did_not_end",
)

# A value a user states: an e-mail address, or a run of non-space characters with a digit.
_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\S*\d\S*")
# What surrounds a value in a sentence and is not part of it.
_EDGES = "\"'`.,;:!?()[]{}<>*"
# What two spellings of one value may differ by: case, thousands' commas, currency signs.
_NOISE = re.compile(r"[,$€£]")


def facts_in(text: str) -> list[str]:
    """The values ``text`` states: e-mail addresses, and words with a digit (one digit alone
    does not count: "2 cards" says little), in order, each once."""
    found: list[str] = []
    for match in _VALUE.finditer(text):
        value = match.group().strip(_EDGES)
        if len(re.sub(r"\W", "", value)) < 2 or value in found:
            continue
        found.append(value)
    return found


def _folded(text: str) -> str:
    return _NOISE.sub("", text.casefold())


@dataclass(frozen=True)
class Departure:
    """One turn where the model-played user departed from what its instructions support."""

    # The user's turn, from 1.
    turn: int
    kind: str
    message: str
    # The model user's reply and the scripted user's, for that turn (when there is one).
    said: str | None = None
    scripted: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The departure as JSON data."""
        return {
            "turn": self.turn,
            "kind": self.kind,
            "message": self.message,
            "said": self.said,
            "scripted": self.scripted,
        }


@dataclass
class SimulatorReport:
    """What checking one scenario's model-played user found."""

    scenario: str
    # Why the scenario was not checked (no user, no solution), or ``None``.
    skipped: str | None = None
    departures: list[Departure] = field(default_factory=list)
    # Each side's conversation, as a trial records it.
    conversation: list[dict[str, Any]] = field(default_factory=list)
    scripted: list[dict[str, Any]] = field(default_factory=list)
    # The grade of the reference conversation with the model user, and with the script.
    grade: dict[str, Any] | None = None
    scripted_grade: dict[str, Any] | None = None
    # The model user's failure (its model failed past its retries), as ``kind: message``.
    error: str | None = None
    user_tokens: dict[str, int] | None = None

    @property
    def turns(self) -> int:
        """How many times the model-played user answered."""
        return sum(1 for message in self.conversation if message.get("speaker") == "user")

    @property
    def ok(self) -> bool:
        """Whether the model-played user kept to its instructions (or there was none)."""
        return self.error is None and not self.departures

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "scenario": self.scenario,
            "ok": self.ok,
            "skipped": self.skipped,
            "turns": self.turns,
            "departures": [departure.to_dict() for departure in self.departures],
            "error": self.error,
            "grade": self.grade,
            "scripted_grade": self.scripted_grade,
            "user_tokens": self.user_tokens,
            "conversation": self.conversation,
            "scripted": self.scripted,
        }


@dataclass
class _Played:
    """One run of a reference conversation: what was said, the user's calls, the grade."""

    conversation: list[dict[str, Any]]
    # The user's calls, turn by turn: each its tool, arguments and outcome.
    calls: list[list[tuple[str, dict[str, Any], dict[str, Any]]]]
    grade: dict[str, Any] | None
    error: str | None
    user_tokens: dict[str, int] | None


def _play(scenario: Scenario, world: World, seed: int, player: UserPlayer | None) -> _Played:
    """Play the scenario's solution from its start against ``player`` (``None``: its own)."""
    calls: list[list[tuple[str, dict[str, Any], dict[str, Any]]]] = []
    current: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    error: str | None = None
    with Trial(scenario, seed=seed, world=world, user_player=player) as trial:
        assert trial.cast is not None

        def observe(tool: str, arguments: dict[str, Any], **outcome: Any) -> None:
            current.append((tool, arguments, outcome))

        trial.cast.on_user_call = observe
        for step in scenario.solution or ():
            if trial.done:
                break
            try:
                if step.tool == SUBMIT_TOOL:
                    trial.submit(str(step.arguments.get("answer")))
                    break
                trial.call(step.tool, **step.arguments)
            except ToolError:
                pass  # refused as in the solution's own replay: the conversation goes on
            except WorldBug as bug:
                cause = bug.__cause__
                if not isinstance(cause, TrialFailure):
                    raise
                error = f"{cause.kind}: {cause.message}"
                break
            finally:
                if step.tool == MESSAGE_USER_TOOL:
                    calls.append(current)
                    current = []
        grade = None
        if error is None:
            graded = trial.finish()
            grade = {"score": graded.score, "passed": graded.passed}
        return _Played(
            trial.conversation,
            calls,
            grade,
            error,
            None if trial.cast is None else trial.cast.user_tokens,
        )


def _replies(conversation: Sequence[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each user reply with the agent's message it answered."""
    pairs: list[tuple[str, Mapping[str, Any]]] = []
    said = ""
    for message in conversation:
        if message.get("speaker") == "agent":
            said = str(message.get("text", ""))
        elif message.get("speaker") == "user":
            pairs.append((said, message))
    return pairs


def _call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    return f"{tool}({json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)})"


def _departures(scenario: Scenario, model: _Played, script: _Played) -> list[Departure]:
    assert scenario.user is not None
    instructions = scenario.user.instructions
    said = _replies(model.conversation)
    scripted = _replies(script.conversation)
    found: list[Departure] = []
    known = [instructions]
    scripted_keys = {
        _call_key(tool, arguments) for turn in script.calls for tool, arguments, _ in turn
    }
    made_keys: set[str] = set()
    for index, (agent, message) in enumerate(said):
        turn = index + 1
        reply = str(message.get("text", ""))
        other = scripted[index][1] if index < len(scripted) else None
        other_text = None if other is None else str(other.get("text", ""))
        known.append(agent)
        for tool, arguments, outcome in model.calls[index] if index < len(model.calls) else ():
            known.append(json.dumps(outcome, ensure_ascii=False, default=str))
            key = _call_key(tool, arguments)
            made_keys.add(key)
            if key not in scripted_keys:
                found.append(
                    Departure(
                        turn,
                        "unexpected_call",
                        f"called {key}, which its script never calls",
                        reply,
                        other_text,
                    )
                )
        if other_text is not None:
            known.append(other_text)
            for _, _, outcome in script.calls[index] if index < len(script.calls) else ():
                known.append(json.dumps(outcome, ensure_ascii=False, default=str))
        haystack = _folded("\n".join(known))
        unsupported = [value for value in facts_in(reply) if _folded(value) not in haystack]
        if unsupported:
            found.append(
                Departure(
                    turn,
                    "unsupported_fact",
                    f"said {', '.join(map(repr, unsupported))}, which neither its instructions, "
                    "the agent's messages, its calls' results nor its script's reply hold",
                    reply,
                    other_text,
                )
            )
        stopped = bool(message.get("stop"))
        script_stops = bool(other.get("stop")) if other is not None else False
        if stopped and not script_stops:
            found.append(
                Departure(
                    turn,
                    "ended_early",
                    "ended the conversation where its script goes on",
                    reply,
                    other_text,
                )
            )
        elif script_stops and not stopped:
            found.append(
                Departure(
                    turn,
                    "did_not_end",
                    "went on where its script ends the conversation",
                    reply,
                    other_text,
                )
            )
    for index, turn_calls in enumerate(script.calls):
        for tool, arguments, _ in turn_calls:
            key = _call_key(tool, arguments)
            if key not in made_keys:
                found.append(
                    Departure(
                        index + 1,
                        "missed_call",
                        f"never called {key}, which its script calls",
                        str(said[index][1].get("text", "")) if index < len(said) else None,
                        str(scripted[index][1].get("text", "")) if index < len(scripted) else None,
                    )
                )
    found.sort(key=lambda departure: departure.turn)
    return found


def check_user_of(
    pack: ScenarioSet, scenario: Scenario, user: UserSource, *, world: World | None = None
) -> SimulatorReport:
    """Check the model-played user of one scenario of ``pack``; see the module."""
    if scenario.user is None:
        return SimulatorReport(scenario.id, skipped="no user")
    if not scenario.solution:
        return SimulatorReport(scenario.id, skipped="no reference solution to play")
    resolved = world if world is not None else scenario.resolve_world()
    seed = trial_seed(pack.name, scenario.id, 0)
    script = _play(scenario, resolved, seed, None)
    player = user.player(TrialSpec(pack, scenario, 0, seed), None)
    model = _play(scenario, resolved, seed, player)
    report = SimulatorReport(
        scenario.id,
        conversation=model.conversation,
        scripted=script.conversation,
        grade=model.grade,
        scripted_grade=script.grade,
        error=model.error,
        user_tokens=model.user_tokens,
    )
    if model.error is None:
        # A user whose model failed said nothing more to compare: its error is the report.
        report.departures = _departures(scenario, model, script)
    return report


def check_simulator(
    pack: ScenarioSet,
    user: UserSource,
    *,
    scenarios: Sequence[str] | None = None,
    progress: Callable[[SimulatorReport], None] | None = None,
) -> list[SimulatorReport]:
    """Check ``user`` (a user source: a model) on each scenario of ``pack`` with a user.

    ``scenarios`` limits the check to those ids; ``progress`` is called with
    each report as it is made. The source is closed at the end.
    """
    user = check_user_source(user)
    chosen = list(pack)
    if scenarios:
        unknown = sorted(set(scenarios) - {scenario.id for scenario in chosen})
        if unknown:
            raise WorldBug(f"pack {pack.name!r} has no scenario {', '.join(map(repr, unknown))}")
        chosen = [scenario for scenario in chosen if scenario.id in scenarios]
    worlds: dict[str, World] = {}
    reports: list[SimulatorReport] = []
    try:
        for scenario in chosen:
            world: World | None = None
            if scenario.user is not None:
                name = scenario.world_name
                if name not in worlds:
                    worlds[name] = scenario.resolve_world()
                world = worlds[name]
            report = check_user_of(pack, scenario, user, world=world)
            reports.append(report)
            if progress is not None:
                progress(report)
    finally:
        close_user(user)
    return reports
