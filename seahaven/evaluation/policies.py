"""Policies: what a policy is handed, what counts as one, and how a runner plays it.

A **policy** is a callable, ``policy(session)``, that plays one episode: it
reads ``session.instructions`` and ``session.tools()``, calls tools with
``session.call(name, **arguments)`` (results come back as JSON data, and a
refusal raises ``seahaven.ToolError``), and ends with ``session.submit(answer)``
or by returning. It may be ``async def``: a runner awaits it to the end. The same
callable runs in process, on Ray and against a served world, because each runner
hands it a session with one interface (``PolicySession``) and plays it with
``play_policy``, which is where a failure is sorted into the agent's and the rest.

``check_policy`` refuses, before any trial, what cannot be a policy, and
``describe_policy`` is the name a result line records for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from pydantic_core import to_jsonable_python

from seahaven.errors import ToolError, WorldBug
from seahaven.evaluation.results import TrialError
from seahaven.evaluation.transcripts import Transcript
from seahaven.registry.targets import import_target
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.trial import Trial
from seahaven.scenarios.users import MESSAGE_USER_TOOL, UserPlayer

__all__ = [
    "LocalSession",
    "Policy",
    "PolicySession",
    "TrialFailure",
    "check_policy",
    "close_policy_async",
    "describe_policy",
    "idle_policy",
    "is_async_policy",
    "load_policy",
    "play_policy",
    "play_policy_async",
    "run_to_completion",
    "solution_policy",
]


@runtime_checkable
class PolicySession(Protocol):
    """What a policy is handed: one episode of one scenario, wherever it runs."""

    @property
    def scenario(self) -> Scenario:
        """The scenario being played (its solution too, for scripted policies)."""

    @property
    def instructions(self) -> str:
        """What the agent is asked to do."""

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""

    @property
    def calls_left(self) -> int:
        """How many tool calls the agent may still make."""

    def tools(self) -> list[dict[str, Any]]:
        """The tool list, ``submit`` last."""

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; the result as JSON data. A refusal raises ``ToolError``."""

    def submit(self, answer: str) -> None:
        """End the episode with an answer."""


Policy = Callable[[PolicySession], Any]
"""A function of the session (or an ``async`` one); what it returns is not used."""


class TrialFailure(Exception):
    """A failure that is not the agent's, raised through a policy: the trial is **errored**.

    ``kind`` is the ``TrialError`` kind it becomes (``world``, ``runner``, ...;
    see ``seahaven.evaluation.results.AGENT_KINDS``). A session keeps the first
    one it raised as its ``failure``, so a policy that catches every exception
    still cannot turn a crashed world or a lost server into a score.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class LocalSession:
    """A ``PolicySession`` on a trial in this process.

    Beside the protocol it has ``transcript`` (a ``Transcript``: every call is
    recorded on it, and a model-backed policy records its model calls there
    too; so are the simulated user's own calls, as the ``user``'s),
    ``policy_document`` (the pack's policy document, or ``None``) and
    ``acall``, the call an ``async`` policy awaits.
    """

    def __init__(
        self,
        trial: Trial,
        *,
        transcript: Transcript | None = None,
        policy_document: str | None = None,
    ) -> None:
        self._trial = trial
        #: The first failure of the world (or its grader) in this episode, kept even when
        #: the policy swallows the exception it raised.
        self.failure: TrialFailure | None = None
        #: The trial's exchange: the session records each call, a policy may record more.
        self.transcript = transcript if transcript is not None else Transcript()
        #: The rules the pack's agent works under in every scenario, when the pack has them.
        self.policy_document = policy_document
        cast = trial.cast
        if cast is not None and cast.has_user:
            # The user's own calls (dual control) go in the transcript as the user's, whoever
            # plays the user, so that a replay can make them again.
            cast.on_user_call = functools.partial(self.transcript.tool_call, speaker="user")

    @property
    def scenario(self) -> Scenario:
        """The scenario being played."""
        return self._trial.scenario

    @property
    def instructions(self) -> str:
        """What the agent is asked to do."""
        return self._trial.instructions

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self._trial.done

    @property
    def calls_left(self) -> int:
        """How many tool calls the agent may still make."""
        return self._trial.calls_left

    @property
    def seed(self) -> int | None:
        """The trial's seed."""
        return self._trial.seed

    def tools(self) -> list[dict[str, Any]]:
        """The tool list, ``submit`` last."""
        return self._trial.tools()

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; the result as JSON data, exactly as the wire would carry it.

        A refusal raises ``ToolError``; anything else a call raises is a bug in the
        world (or in grading the episode it ended), raised as it was, and kept as
        the session's ``failure``.
        """
        if not isinstance(tool, str):
            # The policy's mistake, not the world's: the wire carries a tool's name only.
            raise TypeError(f"session.call takes the tool's name, a string; got {tool!r}")
        try:
            result = to_jsonable_python(self._trial.call(tool, **arguments))
        except ToolError as refused:
            self.transcript.tool_call(tool, arguments, refusal=refused.to_dict())
            raise
        except Exception as bug:
            self._failed(f"the call to {tool}", bug)
            self.transcript.tool_call(tool, arguments, failure=_described(bug))
            raise
        self.transcript.tool_call(tool, arguments, result=result)
        return result

    async def acall(self, tool: str, /, **arguments: Any) -> Any:
        """``call``, for an ``async`` policy: awaited, it lets the trials beside it go on.

        A message to a user whose player waits on something slow (a model: its
        ``waits`` is true) is answered on a thread of its own while the event
        loop runs the other trials; every other call is quick and made here. If
        the trial is given up meanwhile (its time limit), the player's
        ``cancel()`` is called so that it stops waiting.
        """
        player = self._waiting_player(tool)
        if player is None:
            return self.call(tool, **arguments)
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[Any] = loop.create_future()

        def answer() -> None:
            try:
                value = self.call(tool, **arguments)
            except BaseException as error:  # handed to the awaiting task, whatever it is
                _settle_from_thread(loop, answered, None, error)
            else:
                _settle_from_thread(loop, answered, value, None)

        threading.Thread(target=answer, name="seahaven-user-turn", daemon=True).start()
        try:
            return await answered
        except asyncio.CancelledError:
            cancel = getattr(player, "cancel", None)
            if callable(cancel):
                cancel()
            raise

    def _waiting_player(self, tool: str) -> UserPlayer | None:
        """The trial's user player, when ``tool`` messages a user whose player ``waits``."""
        cast = self._trial.cast
        if tool != MESSAGE_USER_TOOL or cast is None or not cast.has_user:
            return None
        player = cast.player
        return player if getattr(player, "waits", False) is True else None

    def submit(self, answer: str) -> None:
        """End the episode with an answer."""
        try:
            self._trial.submit(answer)
        except ToolError as refused:
            self.transcript.submitted(answer, refusal=refused.to_dict())
            raise
        except Exception as bug:
            self._failed("submit", bug)
            raise
        self.transcript.submitted(answer)

    def _failed(self, what: str, bug: Exception) -> None:
        if self.failure is not None:
            return
        # A failure that is not the world's, raised under it (a model-played user's model that
        # failed past its retries, which the trial reports as its user's failure), keeps its
        # own kind: its trial is errored for that reason, not blamed on the world.
        cause = bug if isinstance(bug, TrialFailure) else bug.__cause__
        if isinstance(cause, TrialFailure):
            self.failure = TrialFailure(cause.kind, cause.message)
        else:
            self.failure = TrialFailure("world", f"{what} failed in the world: {_described(bug)}")


def _settle_from_thread(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    value: Any,
    error: BaseException | None,
) -> None:
    """Hand a thread's outcome to ``future`` on ``loop``; nothing if the loop has ended."""

    def settle() -> None:
        if future.done():
            return  # given up (cancelled) meanwhile
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    # A closed loop: the trial was given up, and nobody waits for the answer.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


def _described(bug: Exception) -> str:
    return str(bug) if isinstance(bug, WorldBug) else f"{type(bug).__name__}: {bug}"


def solution_policy(session: PolicySession) -> None:
    """A scripted policy: play the scenario's reference solution, refusals and all."""
    for step in session.scenario.solution or ():
        if session.done:
            return
        if step.tool == SUBMIT_TOOL:
            session.submit(step.arguments["answer"])
            return
        try:
            session.call(step.tool, **step.arguments)
        except ToolError:
            continue


def idle_policy(session: PolicySession) -> None:
    """A policy that does nothing: what ``scenarios check`` grades to show a task is not free."""


def describe_policy(policy: object) -> str:
    """The name a result line records for ``policy``.

    A policy object with a ``describe()`` method names itself (a model-backed agent
    says which model it runs); anything else is ``module:qualified_name`` of the
    function, or of the class of a callable object. The same function gets the same
    name however it was given (``--policy my_agent:play`` or ``play`` itself).
    """
    describe = getattr(policy, "describe", None)
    if callable(describe) and not inspect.isclass(policy):
        name = describe()
        if not isinstance(name, str) or not name.strip():
            raise WorldBug(
                f"the policy's describe() returned {name!r}; it returns a non-empty string "
                "naming the policy (a model-backed agent names its model)"
            )
        return name.strip()
    if isinstance(policy, functools.partial):
        return describe_policy(policy.func)
    target = policy if hasattr(policy, "__qualname__") else type(policy)
    module = getattr(target, "__module__", None) or "?"
    return f"{module}:{getattr(target, '__qualname__', repr(target))}"


def check_policy(policy: object, label: str | None = None) -> Policy:
    """``policy`` if it can be one; a ``WorldBug`` naming what was given otherwise.

    A policy is called with one argument, the session: a function (``async def``
    too), or an object with ``__call__``. A class, a coroutine object (an async
    function called, not given), anything not callable, and a callable that
    cannot take one argument are refused, before any trial runs.
    """
    named = label or _shown(policy)
    if inspect.isawaitable(policy):
        raise WorldBug(
            f"the policy {named} is an awaitable (an async function already called, such as "
            "play(...)); give the function itself, such as play"
        )
    if inspect.isclass(policy):
        raise WorldBug(
            f"the policy {named} is a class; give an instance of it (whose __call__ takes the "
            "session), or a function of the session"
        )
    if not callable(policy):
        raise WorldBug(
            f"the policy {named} is of type {type(policy).__name__}, not a function; a policy "
            "is a function of the session, or 'module:function' on the command line"
        )
    try:
        signature = inspect.signature(policy)
    except (TypeError, ValueError):
        return policy  # a builtin with no signature to read: it will say so itself
    try:
        signature.bind(None)
    except TypeError:
        raise WorldBug(
            f"the policy {named} takes {signature}, and a policy is called with one argument, "
            "the session; give it exactly one parameter without a default (more with defaults "
            "are fine)"
        ) from None
    return policy


def load_policy(target: str) -> Policy:
    """The policy at ``module:attr``, imported now and checked (see ``check_policy``)."""
    found = import_target(
        target, label=f"--policy {target!r}", what="a function", example="my_agent:play"
    )
    return check_policy(found, label=f"{target!r}")


def run_to_completion(awaitable: Awaitable[Any]) -> Any:
    """Run ``awaitable`` to its end from synchronous code, and return what it gives.

    With no event loop running in this thread it runs on a new one
    (``asyncio.run``); inside a running loop (a notebook, an async application)
    it runs on a loop of its own in a helper thread, since this thread's loop
    cannot be re-entered.
    """

    async def awaited() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaited())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="seahaven-policy") as pool:
        return pool.submit(asyncio.run, awaited()).result()


def play_policy(policy: Policy, session: PolicySession) -> TrialError | None:
    """Play ``policy`` on ``session`` to its end; how it failed, or ``None``.

    An ``async`` policy is awaited to its end (``run_to_completion``). Every
    runner plays policies through this function (or ``play_policy_async``), so
    they sort failures alike: see ``failure_of``.
    """
    try:
        returned = policy(session)
        if inspect.isawaitable(returned):
            run_to_completion(_closed_after(returned, policy))
    except Exception as raised:
        return failure_of(raised, session)
    return failure_of(None, session)


async def _closed_after(awaitable: Awaitable[Any], policy: Policy) -> Any:
    """Await ``awaitable``, then let ``policy`` release what it holds on this loop, which ends."""
    try:
        return await awaitable
    finally:
        await close_policy_async(policy)


def is_async_policy(policy: object) -> bool:
    """Whether ``policy`` is ``async``: an ``async def``, or an object whose ``__call__`` is."""
    if inspect.iscoroutinefunction(policy):
        return True
    if inspect.isfunction(policy) or inspect.ismethod(policy):
        return False
    # What calling the object runs: the first ``__call__`` along its class's MRO.
    for klass in type(policy).__mro__:
        if "__call__" in vars(klass):
            return inspect.iscoroutinefunction(vars(klass)["__call__"])
    return False


async def close_policy_async(policy: object) -> None:
    """Await the policy's ``aclose()``, if it has one, on the running loop; errors ignored.

    An async policy object may hold things bound to the event loop it plays on (a
    model client's connections). A runner awaits its ``aclose()`` before that loop
    ends: after each trial when each trial has a loop of its own, once after the
    last trial when they share one. What ``aclose`` raises cannot change a result,
    so it is dropped.
    """
    close = getattr(policy, "aclose", None)
    if close is None or inspect.isclass(policy) or not callable(close):
        return
    try:
        returned = close()
        if inspect.isawaitable(returned):
            await returned
    except Exception:
        pass  # the trials are over; a failure to let go of connections changes no result


async def play_policy_async(policy: Policy, session: PolicySession) -> TrialError | None:
    """``play_policy`` in asynchronous code: an ``async`` policy is awaited on this loop."""
    try:
        returned = policy(session)
        if inspect.isawaitable(returned):
            await returned
    except Exception as raised:
        return failure_of(raised, session)
    return failure_of(None, session)


def failure_of(raised: BaseException | None, session: object) -> TrialError | None:
    """How a policy's episode failed: ``raised`` by the policy, or kept by its session.

    A failure the session kept (``session.failure``, a ``TrialFailure``: the world
    or the server failed under the agent) decides, even if the policy caught it.
    Otherwise a ``TrialFailure`` the policy let through keeps its kind, a
    ``WorldBug`` is the world's, and anything else the policy raised, a
    ``ToolError`` it let escape included, is the policy's own.
    """
    kept = getattr(session, "failure", None)
    if isinstance(kept, TrialFailure):
        return TrialError(kind=kept.kind, message=kept.message)
    if raised is None:
        return None
    if isinstance(raised, TrialFailure):
        return TrialError(kind=raised.kind, message=raised.message)
    if isinstance(raised, WorldBug):
        return TrialError(kind="world", message=str(raised))
    if isinstance(raised, ToolError):
        # A policy that lets a refusal escape has ended its episode there.
        return TrialError(kind="policy", message=f"{raised.code}: {raised.message}")
    return TrialError(kind="policy", message=f"{type(raised).__name__}: {raised}")


def _shown(policy: object) -> str:
    """How a message names what was given: a callable by its name, anything else by its repr."""
    if callable(policy):
        try:
            return describe_policy(policy)
        except Exception:
            pass  # its describe() is broken; the repr still names it
    text = repr(policy)
    return text if len(text) <= 80 else text[:79] + "…"
