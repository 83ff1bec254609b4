"""A model on a Chat Completions endpoint: one request, its retries, its key kept out of sight.

``ModelClient(model, base_url=..., api_key_env=...)`` sends a conversation and
the tools' schemas to ``/chat/completions`` with the official SDK's
``AsyncOpenAI`` and returns a ``ModelReply``: the assistant's message, its tool
calls, the finish reason, the token counts, the latency and every failed
attempt before it. The SDK's own retries are off; this client tries again as
``seahaven_agents.retries`` says, and when every attempt failed it raises
``ModelFailure``: a ``TrialFailure`` of kind ``model``, so the trial is
errored (not the agent's failure) and ``--resume`` runs it again.

The API key is read from the environment (``OPENAI_API_KEY``, or the variable
``api_key_env`` names) when the first request is made, or given as
``api_key=``. It goes into the request's ``Authorization`` header and nowhere
else: not into a result, a transcript, a message, a log, or ``repr``; an error
text that echoes it has it blanked out. A server of your own (vLLM, llama.cpp,
Ollama) usually wants no key: with ``base_url`` given and no key set, a
placeholder is sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai

from seahaven import WorldBug
from seahaven.evaluation import TrialFailure
from seahaven_agents.retries import Attempt, RetryPolicy, classify

__all__ = [
    "DEFAULT_BASE_URL",
    "NO_KEY",
    "EncodedTools",
    "ModelClient",
    "ModelFailure",
    "ModelReply",
    "ToolCallRequest",
]

# Where a model is asked when no base URL is given (nor OPENAI_BASE_URL), as the SDK does.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# What is sent as the key to a server of one's own when no key is set: vLLM's convention.
NO_KEY = "EMPTY"
# A key shorter than this is not hunted for in texts (it would blank out ordinary words).
_SHORTEST_SECRET = 8


class ModelFailure(TrialFailure):
    """The model API failed on every attempt: the trial is errored (kind ``model``)."""

    def __init__(self, message: str, attempts: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__("model", message)
        #: Each failed attempt, as the transcript records it.
        self.attempts = [dict(attempt) for attempt in attempts]


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call in a model's reply, as it came: ``arguments`` is the model's JSON text."""

    id: str
    name: str
    arguments: str


@dataclass
class ModelReply:
    """What one model call returned, and what it took."""

    # The assistant message as the conversation keeps it: role, content, tool_calls.
    message: dict[str, Any]
    # The message as the model sent it (every field the server filled in).
    raw: dict[str, Any]
    tool_calls: list[ToolCallRequest]
    text: str | None
    finish_reason: str | None
    usage: dict[str, int] | None
    seconds: float
    model: str | None = None
    # Each failed attempt before the one that answered.
    retries: list[dict[str, Any]] = field(default_factory=list)


class ModelClient:
    """A model served on a Chat Completions endpoint, asked with retries; see the module."""

    @classmethod
    def sampling(
        cls,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        api_key_env: str,
        timeout: float,
        max_retries: int,
        retry_backoff: float,
        temperature: float | None,
        max_tokens: int | None,
        extra_body: Mapping[str, Any] | None,
    ) -> ModelClient:
        """A client from the sampling options an agent or a user takes, the unset ones left out."""
        params: dict[str, Any] = {}
        if temperature is not None:
            params["temperature"] = float(temperature)
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if extra_body:
            params["extra_body"] = dict(extra_body)
        return cls(
            model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout=timeout,
            retry=RetryPolicy(max_retries=max_retries, backoff=retry_backoff),
            params=params,
        )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise WorldBug(f"the model is named by a non-empty string; got {model!r}")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise WorldBug(f"api_key_env names an environment variable; got {api_key_env!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise WorldBug(f"timeout is a number of seconds above 0; got {timeout!r}")
        self.model = model
        given = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL")
        self.base_url = (given or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WorldBug(
                f"the base URL {_without_credentials(self.base_url)!r} is not an http:// or "
                "https:// address; give the server's, such as http://127.0.0.1:8000/v1"
            )
        self.own_server = given is not None
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.retry = retry if retry is not None else RetryPolicy()
        self.params = dict(params or {})
        self._api_key = api_key
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()
        self._key()  # refuse now, not at the first trial, a hosted endpoint with no key

    # --- naming, without the key ---------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The server's host and port, as messages name it."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or "?"
        return f"{host}:{parts.port}" if parts.port else host

    def describe(self) -> str:
        """The model and the host serving it: ``gpt-4.1-mini@api.openai.com``.

        The port is left out, so that a results file can be resumed against the
        same model served again on another port.
        """
        return f"{self.model}@{urlsplit(self.base_url).hostname or '?'}"

    def __repr__(self) -> str:
        return f"ModelClient({self.model!r}, endpoint={self.endpoint!r})"

    def __getstate__(self) -> dict[str, Any]:
        # A client bound to an event loop does not travel (to a Ray worker, say); the rest does.
        state = dict(self.__dict__)
        state["_clients"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = weakref.WeakKeyDictionary()

    def scrub(self, text: str) -> str:
        """``text`` with the API key blanked out, wherever a server or an error echoed it."""
        key = self._key(required=False)
        if key and len(key) >= _SHORTEST_SECRET and key in text:
            text = text.replace(key, "[API key]")
        return text

    # --- asking --------------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | EncodedTools = (),
        **params: Any,
    ) -> ModelReply:
        """Send the conversation and the tools; the reply, after as many tries as it took.

        ``tools`` are function schemas, or ``EncodedTools`` of them (encoded once
        for the many requests of a conversation). ``params`` (``temperature``,
        ``max_tokens``, ...) go with the request, over the client's own.
        Raises ``ModelFailure`` when no attempt answered.
        """
        client = self._client()
        content = self._body(messages, tools, params)
        failed: list[dict[str, Any]] = []
        for attempt in range(self.retry.max_retries + 1):
            started = time.perf_counter()
            try:
                # The SDK's documented way to post a body of one's own (``client.post``): the
                # auth header, the timeout, the error types and the connection pool are its,
                # but the body is JSON text made here, the tools' schemas encoded once a
                # conversation, and the answer is read here. ``chat.completions.create`` would
                # walk every message and schema through its type-driven transform and build a
                # typed ``ChatCompletion``: about 3x the CPU a request (docs/performance.md).
                answered = await client.post(
                    "/chat/completions",
                    content=content,
                    cast_to=bytes,
                    options={
                        "headers": {"Content-Type": "application/json"},
                        "security": {"bearer_auth": True},
                    },
                )
                reply = _read(answered, time.perf_counter() - started)
            except (openai.OpenAIError, _Unreadable) as error:
                seen = (
                    classify(error)
                    if isinstance(error, openai.OpenAIError)
                    else Attempt(str(error), retryable=True)
                )
                assert seen is not None
                record = self._failed_attempt(attempt, seen, time.perf_counter() - started)
                failed.append(record)
                wait = self._wait(attempt, seen)
                if wait is None:
                    break
                record["wait"] = round(wait, 3)
                await asyncio.sleep(wait)
                continue
            reply.retries = failed
            return reply
        last = failed[-1]["error"] if failed else "no attempt was made"
        tries = "1 attempt" if len(failed) == 1 else f"{len(failed)} attempts"
        raise ModelFailure(
            f"the model {self.describe()} failed after {tries}: {last}", attempts=failed
        )

    def _body(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | EncodedTools,
        params: Mapping[str, Any],
    ) -> bytes:
        """The request's JSON: the model, the messages, the tools, then the parameters."""
        extra = {**self.params, **params}
        fields: dict[str, Any] = dict(extra.pop("extra_body", None) or {})
        fields.update(extra)
        fields.pop("model", None)
        fields.pop("messages", None)
        fields.pop("tools", None)
        encoded = tools if isinstance(tools, EncodedTools) else EncodedTools.of(tools)
        parts = [
            b'{"model":',
            _dumps(self.model),
            b',"messages":',
            _dumps(list(messages)),
        ]
        if encoded.schemas:
            parts += [b',"tools":', encoded.json]
        for name, value in fields.items():
            parts += [b",", _dumps(str(name)), b":", _dumps(value)]
        parts.append(b"}")
        return b"".join(parts)

    async def aclose(self) -> None:
        """Close the connections this client holds on the running event loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    # --- inside --------------------------------------------------------------------------------

    def _key(self, *, required: bool = True) -> str | None:
        key = self._api_key if self._api_key is not None else os.environ.get(self.api_key_env)
        if key:
            return key
        if not required:
            return None
        if self.own_server and self.api_key_env == "OPENAI_API_KEY":
            return NO_KEY
        where = f"the server at {self.endpoint}" if self.own_server else f"{self.endpoint} (hosted)"
        raise WorldBug(
            f"no API key for {where}: set the environment variable {self.api_key_env} (or "
            "name another with --api-key-env / api_key_env=)"
        )

    def _client(self) -> openai.AsyncOpenAI:
        # One SDK client per event loop: its connections belong to the loop that opened them,
        # and trials sharing a loop share the connections.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=self._key(),
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
            )
            self._clients[loop] = client
        return client

    def _failed_attempt(self, attempt: int, seen: Attempt, seconds: float) -> dict[str, Any]:
        record: dict[str, Any] = {
            "attempt": attempt + 1,
            "error": self.scrub(seen.error),
            "seconds": round(seconds, 6),
        }
        if seen.status is not None:
            record["status"] = seen.status
        if seen.retry_after is not None:
            record["retry_after"] = seen.retry_after
        return record

    def _wait(self, attempt: int, seen: Attempt) -> float | None:
        """How long to wait before the next attempt; ``None``: no next attempt."""
        if not seen.retryable or attempt >= self.retry.max_retries:
            return None
        if seen.retry_after is not None:
            if seen.retry_after > self.retry.max_retry_after:
                return None
            return seen.retry_after
        return self.retry.backoff_wait(attempt)


class _Unreadable(Exception):
    """An answer that is not a completion with a message: the server's fault, tried again."""


@dataclass(frozen=True)
class EncodedTools:
    """Function schemas and their JSON text, made once for every request of a conversation."""

    schemas: tuple[Mapping[str, Any], ...]
    json: bytes

    @classmethod
    def of(cls, schemas: Sequence[Mapping[str, Any]]) -> EncodedTools:
        """``schemas`` with their JSON text."""
        kept = tuple(schemas)
        return cls(kept, _dumps(list(kept)))


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _read(answered: bytes, seconds: float) -> ModelReply:
    """The reply in a completion's JSON text; ``_Unreadable`` for anything else."""
    try:
        completion = json.loads(answered)
    except ValueError:
        raise _Unreadable("the model's answer is not JSON") from None
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Unreadable("the model's answer held no choice")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _Unreadable("the model's answer held no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = _text_of(content)
    calls: list[ToolCallRequest] = []
    kept_calls: list[dict[str, Any]] = []
    found = message.get("tool_calls")
    for index, call in enumerate(found if isinstance(found, list) else ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue  # not a function call (a custom tool's): none were offered
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        found_name = function.get("name")
        name = found_name if isinstance(found_name, str) else ""
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            # A server that sends the arguments as an object rather than JSON text.
            arguments = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
        call_id = call_id or f"call_{index}"
        calls.append(ToolCallRequest(call_id, name, arguments))
        kept_calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
    refusal = message.get("refusal")
    text = content if content is not None else refusal if isinstance(refusal, str) else None
    kept: dict[str, Any] = {"role": "assistant", "content": content}
    if kept_calls:
        kept["tool_calls"] = kept_calls
    usage = completion.get("usage")
    finish = choice.get("finish_reason")
    model = completion.get("model")
    return ModelReply(
        message=kept,
        raw=dict(message),
        tool_calls=calls,
        text=text,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=_usage(usage) if isinstance(usage, dict) else None,
        seconds=seconds,
        model=model if isinstance(model, str) else None,
    )


def _usage(usage: Mapping[str, Any]) -> dict[str, int]:
    counts = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        counts[key] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return counts


def _text_of(content: Any) -> str:
    # Content as parts (``[{"type": "text", "text": ...}]``), as a few servers send it.
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()
