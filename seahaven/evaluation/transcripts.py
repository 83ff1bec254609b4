"""Transcripts: the whole exchange of each trial, kept beside its result.

A runner in this process hands each trial's session a ``Transcript``
(``session.transcript``). The session records every tool call itself (the
arguments, and the result or the refusal), and a model-backed policy records
each model call on it (``model_call``): the request's messages, the reply, the
tokens, the latency and the retries. When the trial ends the runner keeps the
episode's change log on it and hands it back on the ``TrialResult``
(``result.transcript``); ``evaluate`` writes it as one JSON line of a
transcripts file, joined to the result by pack, scenario and trial, with the
grade (every check and its reason) and the episode's net change (the fold of
the change log).

One line is a JSON object::

    {"pack", "pack_version", "scenario", "scenario_hash", "trial", "seed", "policy",
     "tags", "tools", "events", "usage", "score", "passed", "checks", "changes",
     "ended_by", "answer", "calls", "error", "errored", "seconds", "user",
     "conversation", "user_tokens", "user_usage", "state_sha256"}

and ``events`` lists what happened in order. An event of ``type`` ``model`` holds
``messages``: the request's messages after those of the model call it
``extends`` (the index of an earlier event, whose request messages and reply
come first), or all of them when ``extends`` is ``null``; so a conversation of
n turns is written once, not n times. The other types are ``tool`` (``tool``,
``arguments``, then ``result``, ``refusal`` or ``failure``), ``submit``,
``invalid_call`` (a model's answer that was not a valid tool call, returned to
it as an error) and ``model_failure`` (the model API failed past its retries).

A scenario's simulated user speaks too. Every ``model``, ``model_failure`` and
``tool`` event says whose it is in ``speaker``: ``agent``, or ``user`` for the
calls a model-played user made to its own model and the user's own tool calls
(dual control). A request ``extends`` only an earlier request of the same
speaker. ``usage`` counts the agent's model calls only and ``user_usage`` the
user's, so a trainer can keep the agent's tokens and mask the rest; the line
also holds the ``conversation`` (each message with its ``speaker``),
``user_tokens`` and ``user`` (what played the user, when the run chose it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from seahaven.errors import WorldBug
from seahaven.grading import fold

if TYPE_CHECKING:
    from seahaven.stores.changelog import LogRecord

__all__ = [
    "SPEAKERS",
    "USAGE_KEYS",
    "Transcript",
    "TranscriptsFile",
    "conversation",
    "default_transcripts_path",
    "read_transcripts",
]

# The token counts a model call reports, and the counts a transcript adds up.
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
# Who spoke: the agent, or the scenario's simulated user (``seahaven.names.AGENT``, ``USER``).
SPEAKERS = ("agent", "user")


class Transcript:
    """One trial's exchange, event by event, as the session and the policy record it."""

    __slots__ = ("_log", "_requests", "events", "tools", "usage", "user_usage")

    def __init__(self) -> None:
        #: What happened, in order: each event a JSON object with a ``type``.
        self.events: list[dict[str, Any]] = []
        #: The names of the tools the agent was shown, once a policy asked for them.
        self.tools: list[str] | None = None
        #: Tokens of the agent's model calls, the calls and the retries, summed.
        self.usage: dict[str, int] = {}
        #: The same for the model calls of a model-played user: apart from the agent's.
        self.user_usage: dict[str, int] = {}
        # Each model event's whole request (its messages, then its reply), by speaker and event
        # index, so that the next request of that speaker can be written as what it adds.
        self._requests: dict[str, dict[int, list[Any]]] = {}
        self._log: list[LogRecord] | None = None

    def __repr__(self) -> str:
        return f"Transcript({len(self.events)} events)"

    # --- what a session records --------------------------------------------------------------

    def tool_call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        result: Any = None,
        refusal: Mapping[str, Any] | None = None,
        failure: str | None = None,
        speaker: str = "agent",
    ) -> None:
        """A tool call and how it went: its ``result``, ``refusal``, or the world's ``failure``.

        ``speaker`` is who made it: the agent, or the simulated ``user`` with its own tools.
        """
        event: dict[str, Any] = {
            "type": "tool",
            "speaker": _speaker(speaker),
            "tool": tool,
            "arguments": dict(arguments),
        }
        if refusal is not None:
            event["refusal"] = dict(refusal)
        elif failure is not None:
            event["failure"] = failure
        else:
            event["result"] = result
        self.events.append(event)

    def submitted(self, answer: str, *, refusal: Mapping[str, Any] | None = None) -> None:
        """An answer submitted through ``session.submit`` (a refused one with its refusal)."""
        event: dict[str, Any] = {"type": "submit", "answer": answer}
        if refusal is not None:
            event["refusal"] = dict(refusal)
        self.events.append(event)

    def shown_tools(self, names: Iterable[str]) -> None:
        """The tools the agent was shown, by name (their schemas are the world version's)."""
        self.tools = list(names)

    # --- what a model-backed policy records ----------------------------------------------------

    def model_call(
        self,
        messages: Sequence[Any],
        reply: Mapping[str, Any],
        *,
        model: str | None = None,
        usage: Mapping[str, Any] | None = None,
        seconds: float | None = None,
        retries: Sequence[Mapping[str, Any]] = (),
        finish_reason: str | None = None,
        history: Mapping[str, Any] | None = None,
        speaker: str = "agent",
    ) -> int:
        """One model call: the request's ``messages`` and the ``reply``; its event's index.

        ``speaker`` is whose call it is: the agent's, or a model-played ``user``'s
        (counted in ``user_usage``, apart from the agent's ``usage``).

        ``reply`` is the assistant message the model returned; ``history``, when
        given, is the message as the conversation keeps it (written only if it
        differs). ``usage`` holds the call's token counts (``USAGE_KEYS``);
        ``retries`` one object per failed attempt before the one that answered.
        When the request begins with an earlier request's messages and its
        reply, only what it adds is written (see the module's docstring). The
        messages are kept as given, not copied: do not change them afterwards.
        """
        # Messages that are plain dicts are kept as they are (not copied), so a request that
        # extends an earlier one compares by identity message by message: cheap every turn.
        request = [m if isinstance(m, dict) else to_jsonable_python(m) for m in messages]
        who = _speaker(speaker)
        requests = self._requests.setdefault(who, {})
        extends, added = self._relative(request, requests)
        kept = dict(history) if history is not None else dict(reply)
        event: dict[str, Any] = {
            "type": "model",
            "speaker": who,
            "model": model,
            "extends": extends,
            "messages": added,
            "reply": to_jsonable_python(dict(reply)),
            "finish_reason": finish_reason,
            "usage": {key: int(usage.get(key) or 0) for key in USAGE_KEYS} if usage else None,
            "seconds": seconds,
            "retries": [dict(retry) for retry in retries],
        }
        if history is not None and kept != dict(reply):
            event["history"] = to_jsonable_python(kept)
        index = len(self.events)
        self.events.append(event)
        requests[index] = [*request, to_jsonable_python(kept)]
        self._count(usage, retries, who)
        return index

    def model_failure(
        self, message: str, *, retries: Sequence[Mapping[str, Any]] = (), speaker: str = "agent"
    ) -> None:
        """The model API failed on every attempt; ``retries`` lists them. ``speaker``: whose."""
        who = _speaker(speaker)
        self.events.append(
            {
                "type": "model_failure",
                "speaker": who,
                "message": message,
                "retries": [dict(r) for r in retries],
            }
        )
        self._count(None, retries, who)

    def invalid_call(
        self, tool: str, arguments: str, message: str, *, speaker: str = "agent"
    ) -> None:
        """A model's tool call that could not be made (unknown tool, arguments not an object)."""
        self.events.append(
            {
                "type": "invalid_call",
                "speaker": _speaker(speaker),
                "tool": tool,
                "arguments": arguments,
                "message": message,
            }
        )

    def note(self, kind: str, **data: Any) -> None:
        """Any other event a policy wants kept, of its own ``type``."""
        self.events.append({"type": kind, **to_jsonable_python(data)})

    # --- what the runner adds ------------------------------------------------------------------

    def keep_changes(self, log: Iterable[LogRecord]) -> None:
        """The episode's change log, folded into its net change when the line is written."""
        self._log = list(log)

    def changes(self) -> list[dict[str, Any]]:
        """The episode's net change per row (``seahaven.grading.fold``), as JSON data."""
        return [] if self._log is None else fold(self._log).to_list()

    # --- inside ----------------------------------------------------------------------------

    @staticmethod
    def _relative(
        request: list[Any], requests: Mapping[int, list[Any]]
    ) -> tuple[int | None, list[Any]]:
        """The latest earlier request (of one speaker) this one extends, and what it adds."""
        for index in sorted(requests, reverse=True):
            earlier = requests[index]
            if len(earlier) <= len(request) and request[: len(earlier)] == earlier:
                return index, request[len(earlier) :]
        return None, request

    def _count(
        self, usage: Mapping[str, Any] | None, retries: Sequence[Any], speaker: str = "agent"
    ) -> None:
        totals = self.user_usage if speaker == "user" else self.usage
        if usage is not None:
            for key in USAGE_KEYS:
                totals[key] = totals.get(key, 0) + int(usage.get(key) or 0)
            totals["model_calls"] = totals.get("model_calls", 0) + 1
        if retries:
            totals["retries"] = totals.get("retries", 0) + len(retries)


def _speaker(speaker: str) -> str:
    if speaker not in SPEAKERS:
        raise WorldBug(f"a transcript's speaker is one of {', '.join(SPEAKERS)}; got {speaker!r}")
    return speaker


def conversation(events: Sequence[Mapping[str, Any]], index: int) -> list[Any]:
    """The whole message list of the model call at ``events[index]``, references followed."""
    chain: list[Mapping[str, Any]] = []
    at: int | None = index
    seen: set[int] = set()
    while at is not None:
        if at in seen or not 0 <= at < len(events) or events[at].get("type") != "model":
            raise ValueError(
                f"event {index} extends event {at}, which is not an earlier model call"
            )
        seen.add(at)
        event = events[at]
        chain.append(event)
        extends = event.get("extends")
        if extends is not None and (not isinstance(extends, int) or extends >= at):
            raise ValueError(f"event {at} extends {extends!r}, which is not an earlier model call")
        at = extends
    messages: list[Any] = []
    for position, event in enumerate(reversed(chain)):
        if position:
            earlier = chain[len(chain) - position]
            messages.append(earlier.get("history", earlier.get("reply")))
        messages.extend(event.get("messages") or ())
    return messages


def default_transcripts_path(out: Path | str) -> Path:
    """Where a run's transcripts go by default: ``r.jsonl`` -> ``r.transcripts.jsonl``."""
    path = Path(out)
    return path.with_name(f"{path.stem}.transcripts.jsonl")


class TranscriptsFile:
    """A JSON-lines file of transcripts, appended to as trials end (as ``ResultsFile`` is)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._handle: IO[str] | None = None

    def open(self, *, resume: bool) -> None:
        """Get ready to write: refuse a file that holds transcripts unless resuming.

        When resuming, a last line cut short by a stop mid-write is dropped, so
        the lines appended start on their own. The file appears with the first line.
        """
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        if not resume:
            raise WorldBug(
                f"{self.path} already holds transcripts; pass --resume to add those of the "
                "trials still to run, or write them to another file (--transcripts FILE)"
            )
        text = self.path.read_bytes()
        if not text.endswith(b"\n"):
            aside = self.path.with_name(self.path.name + ".partial")
            aside.write_bytes(text[: text.rfind(b"\n") + 1])
            os.replace(aside, self.path)

    def write(self, line: str) -> None:
        """Append one line and flush it; a new file is readable by its owner only."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A transcript holds whatever the agent and the tools said: the owner's to share.
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._handle = os.fdopen(descriptor, "a", encoding="utf-8")
        self._handle.write(line)
        self._handle.flush()

    def close(self) -> None:
        """Stop writing."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_transcripts(path: Path | str) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Each trial's last transcript in a file, by ``(pack, scenario, trial)``.

    A line written later (a re-run) supersedes; a line cut short at the end, or
    one that is not a transcript, is skipped, since a report reads what it can.
    """
    found: dict[tuple[str, str, int], dict[str, Any]] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for text in handle:
            if not text.endswith("\n") or not text.strip():
                continue
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if not isinstance(data, dict):
                continue
            pack, scenario, trial = data.get("pack"), data.get("scenario"), data.get("trial")
            if isinstance(pack, str) and isinstance(scenario, str) and isinstance(trial, int):
                found.pop((pack, scenario, trial), None)
                found[(pack, scenario, trial)] = data
    return found
