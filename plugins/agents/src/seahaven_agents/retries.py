"""Which failures of a model call are tried again, and how long to wait before each try.

The ``openai`` client's own retries are turned off (``max_retries=0``), so that
every failed attempt is seen here, recorded in the transcript and classified:

- tried again: a timeout, a connection that failed or dropped, and the statuses
  408, 409, 429 and 5xx (unless the server says ``x-should-retry: false``), and an
  answer that could not be read;
- not tried again: any other status (a wrong key, a model that does not exist,
  a request the server refuses), which the next attempt would meet as well.

The wait honours the server's ``Retry-After`` (or ``retry-after-ms``) when it
gives one, and is otherwise an exponential backoff with jitter; a server asking
for a longer wait than ``RetryPolicy.max_retry_after`` is not waited for.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

import openai

__all__ = ["Attempt", "RetryPolicy", "classify", "retry_after"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a model call is tried again."""

    # Tries after the first; 0 never tries again.
    max_retries: int = 4
    # The first backoff's wait, in seconds; each next one doubles, up to ``max_wait``.
    backoff: float = 1.0
    max_wait: float = 60.0
    # The longest ``Retry-After`` waited for; a longer one ends the tries at once.
    max_retry_after: float = 120.0

    def backoff_wait(self, retry: int) -> float:
        """The wait before try ``retry + 1`` when the server named none: doubling, jittered."""
        base = min(self.max_wait, self.backoff * (2**retry))
        # Jitter, so that trials failing together do not all come back together.
        return float(base * random.uniform(0.5, 1.0))


@dataclass(frozen=True)
class Attempt:
    """One failed attempt: what went wrong, whether to try again, and the server's wait."""

    error: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for, in seconds: ``retry-after-ms``, else ``retry-after``."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
        return math.inf  # an absurd wait: more than any limit
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def classify(error: BaseException) -> Attempt | None:
    """What a model call's exception was, or ``None`` for one that is not the API's."""
    if isinstance(error, openai.APITimeoutError):
        return Attempt("the model did not answer in time", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        return Attempt(f"the connection to the model failed{detail}", retryable=True)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        headers = error.response.headers
        should = headers.get("x-should-retry")
        retryable = status in (408, 409, 429) or status >= 500
        if should in ("true", "false"):
            retryable = should == "true"
        reason = getattr(error.response, "reason_phrase", "") or ""
        text = f"{status} {reason}".strip() + f": {_message(error)}"
        return Attempt(text, retryable=retryable, status=status, retry_after=retry_after(headers))
    if isinstance(error, openai.APIResponseValidationError):
        return Attempt(f"the model's answer could not be read: {_message(error)}", retryable=True)
    if isinstance(error, openai.OpenAIError):
        return Attempt(f"{type(error).__name__}: {error}", retryable=False)
    return None


def _message(error: openai.APIError) -> str:
    # The server's own words when its body says them (``{"error": {"message": ...}}``).
    body = error.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return " ".join(str(error.message).split())
