"""What ``World``'s registration verbs check and record, apart from the world itself.

The process-wide registration counter (``Registrations``) a sealed composition
compares against; a startup hook's keywords (``StartupHookInfo``), read from its
signature; the checks on a middleware and on ``add_world``'s tool lists; and how
a message names a function or the line that registered something.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from seahaven.errors import WorldBug

__all__ = [
    "Registrations",
    "StartupHookInfo",
    "caller_origin",
    "check_middleware",
    "qualname",
    "startup_hook_info",
    "tool_list",
]


class Registrations:
    """The process-wide registration counter a sealed composition compares against."""

    generation = 0

    @classmethod
    def bump(cls) -> None:
        """Count one registration: every sealed composition is stale."""
        cls.generation += 1


@dataclass(frozen=True, slots=True)
class StartupHookInfo:
    """One startup hook, and the keywords it names, requires and whether it takes any."""

    fn: Callable[..., None]
    keywords: frozenset[str]
    required: frozenset[str]
    accepts_any: bool


def startup_hook_info(obj: Any) -> StartupHookInfo:
    """A startup hook checked: ``(ctx, *, keyword=...)``, its keywords read; else a ``WorldBug``."""
    label = f"startup hook {qualname(obj)}"
    if not callable(obj):
        raise WorldBug(f"{label} is not callable")
    try:
        parameters = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        raise WorldBug(f"{label}: its signature cannot be read") from None
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if len(positional) != 1 or positional[0].kind is inspect.Parameter.VAR_POSITIONAL:
        raise WorldBug(
            f"{label}: the context must be its one and only positional parameter, and "
            "every startup keyword keyword-only: def hook(ctx, *, user_id: str) -> None"
        )
    keywords = frozenset(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)
    required = frozenset(
        p.name
        for p in parameters
        if p.kind is p.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    )
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    return StartupHookInfo(obj, keywords, required, accepts_any)


def check_middleware(obj: Any) -> None:
    """Refuse, with a ``WorldBug``, a middleware that is not ``(ctx, call, next_) -> result``."""
    label = f"middleware {qualname(obj)}"
    if not callable(obj):
        raise WorldBug(f"{label} is not callable; a middleware is (ctx, call, next_) -> result")
    try:
        inspect.signature(obj).bind(None, None, None)
    except (TypeError, ValueError):
        raise WorldBug(
            f"{label} cannot be called with three positional arguments; a middleware is "
            "(ctx, call, next_) -> result"
        ) from None


def caller_origin(depth: int = 2) -> str:
    """Where the code ``depth`` frames up is: ``file.py:12``, for a message to name."""
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def tool_list(child: str, keyword: str, value: Sequence[str] | None) -> tuple[str, ...] | None:
    """``add_world``'s ``tool_allow_list`` or ``tool_block_list`` checked, as a tuple."""
    if value is None:
        return None
    if isinstance(value, str | bytes):
        raise WorldBug(
            f"add_world(name={child!r}): {keyword} is a bare string, which would name one tool "
            f"per character; pass a list, such as [{value!r}]"
        )
    items = tuple(value)
    if not all(isinstance(item, str) for item in items):
        raise WorldBug(f"add_world(name={child!r}): {keyword} must hold tool names")
    return items


def qualname(obj: object) -> str:
    """How a message names a function: its qualified name, else its repr."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return str(name) if name else repr(obj)
