"""``ModelUser``: a model on a Chat Completions endpoint plays the scenarios' simulated users.

A scenario's ``user`` is played by its script unless a run says otherwise;
``evaluate(pack, agent, user=ModelUser("gpt-4.1-mini"))`` (``seahaven eval
PACK --user-model NAME``) says otherwise. ``ModelUser`` is a user source
(``seahaven.evaluation.users``): each trial gets a ``ModelUserPlayer`` of its
own, holding that user's conversation with the model.

The model is prompted with ``DEFAULT_USER_PROMPT`` and the user's own
instructions (``UserContext.instructions``, which the agent never sees). The
agent's messages come to it as the other side of the chat; its replies go back
to the agent. The user's own tools (dual control) are offered to it as
function schemas: a tool call it makes runs through the turn's ``call``, as the
``user`` actor, and its result or refusal goes back to it, until it answers in
text. A reply holding ``###STOP###`` ends the conversation (``STOP_MARKER``).

Its model calls are recorded in the trial's transcript as the ``user``'s
(``speaker: "user"``), and its tokens go in each reply's ``tokens``, which the
trial sums as ``user_tokens``, apart from the agent's. The model client retries
as the agent's does (``ModelClient``); when every attempt fails, the trial is
**errored**, of kind ``user_model``: the simulator failed, not the agent.

Every player's model calls run on one event loop of the ``ModelUser``'s own, in
a thread of its own, so that trials anywhere (a thread, another event loop, a
Ray worker) share its connections; ``close()`` (or ``aclose()``) ends it, and
the next call starts it again. A ``ModelUser`` pickles without it, so it
travels to Ray workers as ``ChatAgent`` does; no key ever travels in it unless
it was given as ``api_key=``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from seahaven import ToolError, WorldBug
from seahaven.scenarios import UserContext, UserReply
from seahaven_agents.agent import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from seahaven_agents.client import EncodedTools, ModelClient, ModelFailure, ModelReply
from seahaven_agents.schemas import ToolNames, function_schemas

if TYPE_CHECKING:
    from seahaven.evaluation import Transcript, TrialSpec

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_USER_PROMPT",
    "INSTRUCTIONS_CLOSE",
    "INSTRUCTIONS_OPEN",
    "ModelUser",
    "ModelUserPlayer",
    "UserModelFailure",
]

# Model calls one user turn may take (tool calls on the user's side, then the reply).
DEFAULT_MAX_STEPS = 8
# Where the user's instructions sit in the system message, so that a reader (or a scripted
# server standing in for the model) can find them.
INSTRUCTIONS_OPEN = "<instructions>"
INSTRUCTIONS_CLOSE = "</instructions>"
DEFAULT_USER_PROMPT = (
    "You are playing a person who is talking, by chat, with an agent: an assistant working for "
    "a company. Who you are, what you want and what you know are in your instructions below; "
    "the agent has not seen them. The messages you receive are the agent's.\n"
    "- Write what this person would write to the agent: one short message at a time, in plain "
    "words. You are not the assistant: do not offer help, and do not do the agent's work.\n"
    "- Give a piece of information when the agent asks for it or your instructions say to. "
    "Never make up a name, a number, an id, an address or a date your instructions do not "
    "give you; asked for something you do not know, say you do not know it.\n"
    "- Hold to your instructions: what you want, what you accept and what you refuse. Do not "
    "give up on what you want sooner than they say.\n"
    "- Tools, if you have any, act on your own side (your device, your account, a portal). "
    "Use one when the agent asks you to do something there or your instructions say to, then "
    "tell the agent what you did and what you saw.\n"
    "- When what you wanted is done, or the agent has made clear it cannot be done, or your "
    "instructions say the conversation is over, write your last message and end it with "
    "###STOP###."
)

T = TypeVar("T")


class UserModelFailure(ModelFailure):
    """The user's model failed on every attempt (or would not answer): errored, ``user_model``."""

    def __init__(self, message: str, attempts: Any = ()) -> None:
        super().__init__(message, attempts)
        self.kind = "user_model"


class ModelUser:
    """A model that plays the scenarios' users: a user source; see the module.

    ``model``, ``base_url``, ``api_key``, ``api_key_env``, ``temperature``,
    ``max_tokens``, ``extra_body``, ``max_retries``, ``timeout`` and
    ``retry_backoff`` are ``ChatAgent``'s, for the user's model.
    ``system_prompt`` replaces ``DEFAULT_USER_PROMPT`` (the instructions are
    added after it either way); ``max_steps`` is how many model calls one
    turn of the user may take.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        system_prompt: str | None = None,
        temperature: float | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        retry_backoff: float = 1.0,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise WorldBug(f"max_retries is a whole number, 0 or more; got {max_retries!r}")
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, int | float)
        ):
            raise WorldBug(f"temperature is a number; got {temperature!r}")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise WorldBug(
                f"max_steps is a whole number of model calls a turn, 1 or more; got {max_steps!r}"
            )
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise WorldBug(f"system_prompt is text; got {system_prompt!r}")
        self.client = ModelClient.sampling(
            model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            temperature=temperature,
            max_tokens=max_tokens,
            extra_body=extra_body,
        )
        self.system_prompt = DEFAULT_USER_PROMPT if system_prompt is None else system_prompt
        self.max_steps = max_steps
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # --- naming, without the key ---------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model's name on its server."""
        return self.client.model

    def describe(self) -> str:
        """How results name what played the users: ``chat:MODEL@HOST``, never the key."""
        return f"chat:{self.client.describe()}"

    def __repr__(self) -> str:
        return f"ModelUser({self.client.model!r}, endpoint={self.client.endpoint!r})"

    # --- a user source -------------------------------------------------------------------------

    def player(
        self, trial: TrialSpec | None = None, transcript: Transcript | None = None
    ) -> ModelUserPlayer:
        """A player for one trial's user, recording its model calls in ``transcript``."""
        return ModelUserPlayer(self, transcript)

    def system_message(self, instructions: str) -> str:
        """The user model's system message: the prompt, then the user's instructions."""
        prompt = self.system_prompt.strip()
        block = f"{INSTRUCTIONS_OPEN}\n{instructions.strip()}\n{INSTRUCTIONS_CLOSE}"
        return f"{prompt}\n\nYour instructions:\n{block}" if prompt else block

    # --- its event loop ------------------------------------------------------------------------

    def run(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coroutine`` on this user model's own event loop; its future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop())

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is not None and thread is not None and thread.is_alive():
                return loop
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            thread = threading.Thread(
                target=_serve, args=(loop, ready), name="seahaven-user-model", daemon=True
            )
            thread.start()
            ready.wait()
            self._loop, self._thread = loop, thread
            return loop

    def close(self) -> None:
        """Close the model's connections and end the event loop (the next call starts one)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if thread.is_alive():
            closing = asyncio.run_coroutine_threadsafe(self.client.aclose(), loop)
            with contextlib.suppress(Exception):
                closing.result(timeout=30)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)

    async def aclose(self) -> None:
        """``close()``, awaited from another event loop (a runner's, when its trials are done)."""
        await asyncio.to_thread(self.close)

    def __getstate__(self) -> dict[str, Any]:
        # The event loop and its thread do not travel (to a Ray worker, say); a new one starts
        # there at the first call. The client drops its connections itself.
        state = dict(self.__dict__)
        state["_lock"] = None
        state["_loop"] = None
        state["_thread"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    """The user model's event loop, run in its thread until ``close()`` stops it."""
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    try:
        loop.run_forever()
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


class ModelUserPlayer:
    """One trial's user, played by a ``ModelUser``'s model: a ``UserPlayer``.

    It keeps the user's side of the conversation (the system message, the
    agent's messages, the model's replies and its tool calls with their
    results), so each turn sends it whole.
    """

    #: Its answers wait on a model: a runner answers its messages off the trials' event loop.
    waits = True

    def __init__(self, owner: ModelUser, transcript: Transcript | None = None) -> None:
        self._owner = owner
        self._transcript = transcript
        self._messages: list[dict[str, Any]] = []
        self._tools: EncodedTools | None = None
        self._names = ToolNames()
        self._future: concurrent.futures.Future[UserReply] | None = None
        self._cancelled = False

    def __repr__(self) -> str:
        return f"ModelUserPlayer({self._owner.model!r}, {len(self._messages)} messages)"

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The user's conversation with its model so far (a copy)."""
        return [dict(message) for message in self._messages]

    def respond(self, turn: UserContext) -> UserReply:
        """Ask the model for the user's reply to ``turn``'s message, its tool calls made first."""
        if self._cancelled:
            raise UserModelFailure("the trial was given up while its user was answering")
        future = self._owner.run(self._turn(turn))
        self._future = future
        try:
            return future.result()
        finally:
            self._future = None

    def cancel(self) -> None:
        """Stop waiting for the model (the trial was given up); the turn fails."""
        self._cancelled = True
        future = self._future
        if future is not None:
            future.cancel()

    async def _turn(self, turn: UserContext) -> UserReply:
        owner = self._owner
        if not self._messages:
            self._messages.append(
                {"role": "system", "content": owner.system_message(turn.instructions)}
            )
            schemas, self._names = function_schemas(turn.tools)
            self._tools = EncodedTools.of(schemas)
        # The agent's message is the other side of the user's chat.
        self._messages.append({"role": "user", "content": turn.message})
        tokens = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        tokens.update(model_calls=0, retries=0)
        for _ in range(owner.max_steps):
            reply = await self._ask(tokens)
            self._messages.append(reply.message)
            if not reply.tool_calls:
                return UserReply(reply.text or "", tokens=tokens)
            for call in reply.tool_calls:
                content = self._run_tool(turn, call.name, call.arguments)
                self._messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        raise UserModelFailure(
            f"the user's model {owner.client.describe()} made {owner.max_steps} calls in one "
            "turn without replying to the agent"
        )

    async def _ask(self, tokens: dict[str, int]) -> ModelReply:
        owner, transcript = self._owner, self._transcript
        tools = self._tools if self._tools is not None else ()
        try:
            reply = await owner.client.complete(self._messages, tools)
        except ModelFailure as failure:
            tokens["retries"] += len(failure.attempts)
            if transcript is not None:
                transcript.model_failure(failure.message, retries=failure.attempts, speaker="user")
            # "the model M@host failed after ..." said of the user's model.
            said = failure.message.removeprefix("the ")
            raise UserModelFailure(f"the simulated user's {said}", failure.attempts) from None
        tokens["model_calls"] += 1
        tokens["retries"] += len(reply.retries)
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            tokens[key] += int((reply.usage or {}).get(key) or 0)
        if transcript is not None:
            transcript.model_call(
                self._messages,
                reply.raw,
                model=reply.model or owner.model,
                usage=reply.usage,
                seconds=round(reply.seconds, 6),
                retries=reply.retries,
                finish_reason=reply.finish_reason,
                history=reply.message,
                speaker="user",
            )
        return reply

    def _run_tool(self, turn: UserContext, name: str, arguments: str) -> str:
        """One of the user's tool calls, as the ``user``; the ``tool`` message's content."""
        tool = self._names.tool(name)
        problem: str | None = None
        parsed: Any = None
        if tool is None:
            problem = f"you have no tool named {name!r}; call one of your tools by its exact name"
        else:
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except ValueError as error:
                problem = f"the arguments of {name} are not JSON ({error}); send a JSON object"
            else:
                if not isinstance(parsed, dict):
                    problem = f"the arguments of {name} are not a JSON object; send one"
        if problem is not None or tool is None:
            if self._transcript is not None:
                self._transcript.invalid_call(name, arguments, problem or "", speaker="user")
            return _json({"error": {"code": "invalid_tool_call", "message": problem}})
        try:
            result = turn.call(tool, **parsed)
        except ToolError as refused:
            return _json({"error": refused.to_dict()})
        return _json(result)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
