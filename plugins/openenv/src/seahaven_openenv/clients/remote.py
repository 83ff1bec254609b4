"""Trials against a served world: ``seahaven eval PACK --url URL``.

``trial_runner(url)`` is a ``seahaven.evaluation.TrialRunner``: it runs each
trial as one episode of a session on the server at ``url``, bound to the
trial's scenario (``reset(scenario="pack/id", seed=..., episode_id=...)``),
hands the policy a ``RemoteSession`` (the same ``PolicySession`` interface a
trial in process gives it), and reads the grade the server computed. One
connection carries the trials one after another, each reset starting the next.

What a result says comes from the server: the score and checks of its grade,
the calls it counted, how the episode ended, and the hash of the episode's
change log and calls (the same hash a trial in process computes, so two
runners can be shown to have played the same episode).
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from typing import Any

from seahaven.errors import ToolError, WorldBug
from seahaven.evaluation import (
    Policy,
    TrialError,
    TrialFailure,
    TrialResult,
    TrialRunner,
    TrialSpec,
    play_policy,
)
from seahaven.scenarios import SUBMIT_TOOL, EpisodeOver, Scenario

__all__ = ["RemoteSession", "WireFailure", "trial_runner"]

# How long a client waits for one answer: a step that ends an episode grades it, and a
# grader may replay the scenario's solution first.
DEFAULT_MESSAGE_TIMEOUT_S = 300.0


class WireFailure(TrialFailure):
    """A frame the server did not answer as an episode's step; ``kind``: ``world`` or ``runner``.

    ``world`` is the server's own failure inside the episode (a bug in the world or its
    grader, reported as an internal error); ``runner`` is everything else (a lost
    connection, a refused reset, a server that went away). Either way the trial is
    errored: the failure is not the agent's.
    """


class RemoteSession:
    """A ``PolicySession`` on an episode of a served world, bound to one scenario."""

    def __init__(self, client: Any, spec: TrialSpec, metadata: dict[str, Any]) -> None:
        self._client = client
        self._spec = spec
        self._instructions = str(metadata.get("instructions", spec.scenario.instructions))
        self._calls_left = int(metadata.get("calls_left", spec.scenario.budget))
        self._done = False
        self._tools: list[dict[str, Any]] | None = None
        #: The first failure of the wire, kept even when a policy swallows the exception.
        self.failure: WireFailure | None = None

    @property
    def scenario(self) -> Scenario:
        """The scenario being played (this side's copy: its solution too, for scripted policies)."""
        return self._spec.scenario

    @property
    def instructions(self) -> str:
        """What the agent is asked to do, as the server's reset said."""
        return self._instructions

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self._done

    @property
    def calls_left(self) -> int:
        """How many tool calls the agent may still make, as the server counts them."""
        return self._calls_left

    @property
    def seed(self) -> int:
        """The trial's seed."""
        return self._spec.seed

    def tools(self) -> list[dict[str, Any]]:
        """The tool list, ``submit`` last; asked of the server once an episode."""
        if self._tools is None:
            self._tools = self._wire(self._client.list_tools)
        return [dict(tool) for tool in self._tools]

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; the result as JSON data. A refusal raises ``ToolError`` with its code."""
        if not isinstance(tool, str):
            # The policy's mistake, not the wire's: a frame carries a tool's name only.
            raise TypeError(f"session.call takes the tool's name, a string; got {tool!r}")
        try:
            json.dumps(arguments)
        except (TypeError, ValueError) as error:
            raise TypeError(f"the arguments of {tool} are not JSON: {error}") from None
        observation = self._wire(lambda: self._client.call(tool, **arguments))
        self._observe(observation.done, observation.metadata)
        if observation.error is not None:
            raise _refusal(observation.seahaven_error, observation.error, self._spec)
        return observation.result

    def submit(self, answer: str) -> None:
        """End the episode with an answer."""
        self.call(SUBMIT_TOOL, answer=answer)

    def finish(self) -> dict[str, Any] | None:
        """End the episode where it stands (if it has not ended); answer the grade, if sent."""
        result = self._wire(self._client.finish)
        metadata = result.observation.metadata
        self._observe(True, metadata)
        grade: dict[str, Any] | None = metadata.get("grade")
        return grade

    def _observe(self, done: bool, metadata: dict[str, Any]) -> None:
        self._done = self._done or bool(done)
        calls_left = metadata.get("calls_left")
        if isinstance(calls_left, int):
            self._calls_left = calls_left

    def _wire(self, frame: Any) -> Any:
        try:
            return frame()
        except Exception as error:
            failure = _classify(error)
            if self.failure is None:
                self.failure = failure
            raise failure from error


def _refusal(triple: dict[str, Any] | None, error: Any, spec: TrialSpec) -> ToolError:
    """The ``ToolError`` a refused call raises in process, rebuilt from the world's triple."""
    if triple is None:
        return ToolError("execution_error", str(getattr(error, "message", error)))
    code = str(triple.get("code"))
    details = triple.get("details")
    if code == "episode_over" and isinstance(details, dict):
        return EpisodeOver(str(details.get("ended_by")), spec.scenario.budget)
    return ToolError(
        code, str(triple.get("message")), details if isinstance(details, dict) else None
    )


def _classify(error: BaseException) -> WireFailure:
    """A wire's failure as a trial reports it."""
    from seahaven_openenv.clients.errors import ServerError

    if isinstance(error, WireFailure):
        return error
    if isinstance(error, ServerError) and error.code == "EXECUTION_ERROR":
        return WireFailure("world", f"the server failed the step: {error.message}")
    return WireFailure("runner", f"{type(error).__name__}: {error}")


def trial_runner(url: str, *, message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S) -> TrialRunner:
    """A ``TrialRunner`` that plays every trial on the world served at ``url``.

    ``url`` is a served world's base URL (``http://host:8000``, or
    ``http://host:8000/worlds/NAME`` on a server of several worlds). The server must
    hold the trials' pack (``seahaven serve --scenarios PACK``, or installed); a trial
    whose scenario is another version there than here fails as the runner's.
    """
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise WorldBug(f"--url {url!r}: give a served world's http:// or https:// address")

    def run(specs: Sequence[TrialSpec], policy: Policy) -> Iterator[TrialResult]:
        if not specs:
            return
        _check_served_world(base, specs)
        from seahaven_openenv.clients.client import SeahavenClient

        client = SeahavenClient(base_url=base, message_timeout_s=message_timeout_s)
        try:
            for spec in specs:
                yield run_remote_trial(client, spec, policy, runner=f"served at {base}")
        finally:
            # A connection already gone has nothing left to close.
            with contextlib.suppress(Exception):
                client.close()

    return run


def _check_served_world(base: str, specs: Sequence[TrialSpec]) -> None:
    """Refuse at once a server that is not there, or serves another world than the trials'."""
    try:
        with urllib.request.urlopen(base + "/metadata", timeout=30) as answer:
            metadata = json.loads(answer.read())
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise WorldBug(
            f"--url {base}: no served world answers there ({error}); start one with "
            "seahaven serve --world WORLD --scenarios PACK"
        ) from None
    served = metadata.get("name") if isinstance(metadata, dict) else None
    wanted = sorted({spec.scenario.world_name for spec in specs})
    if wanted != [served]:
        raise WorldBug(
            f"--url {base} serves world {served!r}, but these trials run on "
            f"{', '.join(map(repr, wanted))}; point --url at the world they run on"
        )


def run_remote_trial(
    client: Any, spec: TrialSpec, policy: Policy, *, runner: str = "served"
) -> TrialResult:
    """Play one trial on the server ``client`` talks to, and read its grade there."""
    started = time.perf_counter()
    scenario = spec.scenario
    reference = f"{spec.pack.name}/{scenario.id}"
    error: TrialError | None = None
    grade: dict[str, Any] | None = None
    report: dict[str, Any] = {}
    world = {"name": scenario.world_name, "version": ""}

    def result() -> TrialResult:
        scored = grade is not None and (error is None or not error.errored)
        return spec.result(
            world=str(world.get("name")),
            world_version=str(world.get("version")),
            score=float(grade["score"]) if scored and grade is not None else 0.0,
            passed=bool(grade["passed"]) if scored and grade is not None else False,
            checks=list(grade["checks"]) if grade is not None else [],
            calls=int(report.get("calls_made", 0)),
            ended_by=report.get("ended_by"),
            answer=report.get("answer"),
            seconds=time.perf_counter() - started,
            state_sha256=report.get("state_sha256"),
            runner=runner,
            error=error,
            # The conversation with the scenario's user, as the server's trial recorded it.
            conversation=list(report.get("conversation") or []),
            user_tokens=report.get("user_tokens"),
        )

    try:
        reset = client.reset(scenario=reference, seed=spec.seed, episode_id=spec.episode_id)
    except Exception as failure:
        wire = _classify(failure)
        error = TrialError(kind="runner", message=f"reset of {reference} failed: {wire.message}")
        return result()
    metadata = reset.observation.metadata
    if metadata.get("scenario_hash") != scenario.hash:
        error = TrialError(
            kind="runner",
            message=f"the server's {reference} is another version of the task (hash "
            f"{str(metadata.get('scenario_hash'))[:12]}, here {scenario.hash[:12]}); serve the "
            "same version of the pack",
        )
        return result()
    session = RemoteSession(client, spec, metadata)
    # The wire's failures are kept on the session, so they decide even when the policy
    # caught them; an async policy is awaited to its end, as in process.
    error = play_policy(policy, session)
    if session.failure is not None and session.failure.kind == "runner":
        return result()
    try:
        if not session.done:
            session.finish()
        document = session._wire(client.state)
    except WireFailure as failure:
        if error is None or error.kind == "policy":
            error = TrialError(kind=failure.kind, message=failure.message)
        return result()
    world = document.world.model_dump()
    if document.scenario is not None:
        report = document.scenario.model_dump()
        grade = report.get("grade")
    return result()
