"""The exception hierarchy: one branch for the author, one for the agent.

``WorldBug`` is a mistake in world code or in how the framework is used; it is
never shown to an agent. ``ToolError`` is everything an agent is meant to read,
with a ``code`` that is the contract and a ``message`` that is presentation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

__all__ = [
    "ArgumentError",
    "DbError",
    "SeahavenError",
    "ToolError",
    "UnknownTool",
    "WorldBug",
    "client_message",
]


class SeahavenError(Exception):
    """The root of everything the framework raises."""


class WorldBug(SeahavenError):
    """The author's mistake: a bad registration, a misused instance, a broken fixture.

    ``client_text``, when given, is the same news for a client on another machine
    (a server's): without what only the operator should see, such as a path on the
    server. ``client_message(error)`` picks it.
    """

    def __init__(self, *args: object, client_text: str | None = None) -> None:
        super().__init__(*args)
        self.client_text = client_text


# An absolute path of two or more parts (POSIX or Windows), not inside a word or a URL.
_PATH = re.compile(r"(?<![\w.~:/\\-])(?:/[^\s/'\"():;,{}]+){2,}/?|\b[A-Za-z]:\\[^\s'\"():;,]+")


def _last_part(match: re.Match[str]) -> str:
    parts = [part for part in re.split(r"[/\\]", match.group(0)) if part]
    return f".../{parts[-1]}" if parts else "..."


def client_message(error: BaseException) -> str:
    """``error``'s message as a client on another machine may read it: no path of this one.

    A ``WorldBug``'s ``client_text`` when it has one; otherwise its message with
    every absolute path cut to its last part (``.../fixture.yaml``). A server sends
    this, and logs ``str(error)`` for its operator.
    """
    text = getattr(error, "client_text", None)
    if not isinstance(text, str):
        text = str(error)
    return _PATH.sub(_last_part, text)


class _Category:
    """``ToolError.error_type``: the class's category, or an argument error's for a restatement.

    Read on an error raised ``from`` one whose category is ``invalid_args`` (a
    world's handler restating the framework's ``ArgumentError`` in its own
    words), it answers ``invalid_args`` too: the call's arguments were refused,
    whatever the world calls that.
    """

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __get__(self, error: ToolError | None, owner: type[ToolError]) -> str:
        if error is None or self.value != "execution_error":
            return self.value
        seen: set[int] = set()
        cause = error.__cause__
        while isinstance(cause, ToolError) and id(cause) not in seen:
            seen.add(id(cause))
            if isinstance(cause, ArgumentError):
                return ArgumentError.error_type
            cause = cause.__cause__
        return self.value


class ToolError(SeahavenError):
    """An error written for the agent: a stable ``code``, a ``message`` and optional ``details``.

    Worlds subclass it for their own product errors. ``error_type`` is the
    framework's coarse category and cannot be set by a subclass: ``execution_error``,
    or ``invalid_args`` for an error raised ``from`` an ``ArgumentError`` (a world's
    restatement of refused arguments, as ``seahaven.toolkit.error_handler`` raises).
    """

    error_type: ClassVar[str] = _Category("execution_error")  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "error_type" in cls.__dict__ and cls.__module__ != __name__:
            raise WorldBug(
                f"{cls.__qualname__} sets error_type, which is the framework's category for "
                f"the error; remove it and choose a code instead"
            )

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] | None = dict(details) if details is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The published shape, the same in process and over the wire."""
        return {"code": self.code, "message": self.message, "details": self.details}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class ArgumentError(ToolError):
    """The arguments did not validate; ``violations`` lists every problem at once."""

    error_type: ClassVar[str] = "invalid_args"

    def __init__(self, tool: str, violations: Sequence[Mapping[str, Any]]) -> None:
        # Each violation in pydantic's spelling (loc, msg) and the reference's (path, message).
        self.violations: list[dict[str, Any]] = [_both_spellings(v) for v in violations]
        count = len(self.violations)
        summary = "; ".join(f"{item['field']}: {item['message']}" for item in self.by_field())
        super().__init__(
            "invalid_arguments",
            f"{count} invalid argument{'s' if count != 1 else ''} for {tool}: {summary}",
            {"tool": tool, "violations": self.violations},
        )

    def by_field(self) -> list[dict[str, str]]:
        """Each violation as ``{"field": ..., "message": ...}``, the shape most products publish.

        ``field`` is the argument's dotted path (``address.city``), or
        ``(arguments)`` for a problem with the call as a whole.
        """
        return [
            {
                "field": _dotted_path(violation.get("loc", ())) or "(arguments)",
                "message": str(violation.get("msg", "invalid")),
            }
            for violation in self.violations
        ]


def _both_spellings(violation: Mapping[str, Any]) -> dict[str, Any]:
    spelled = dict(violation)
    if "loc" in spelled:
        spelled.setdefault("path", spelled["loc"])
    if isinstance(spelled.get("path"), list | tuple):
        # The reference's path is one string, its parts joined by dots ("items.0.sku"); the
        # parts themselves stay in ``loc``.
        spelled["path"] = _dotted_path(spelled["path"])
    if "msg" in spelled:
        spelled.setdefault("message", spelled["msg"])
    return spelled


def _dotted_path(parts: Sequence[Any]) -> str:
    """A violation's location as one string: its parts joined by dots, ``""`` for the call."""
    return ".".join(str(part) for part in parts)


class DbError(ToolError):
    """SQLite refused something. The engine's text is kept off the agent-facing message.

    ``refusals`` are what a ``seahaven.sandbox`` authorizer denied, also published in
    ``details["refusals"]``. A SQL door (``seahaven.sql_tools.run_sql``) chooses a
    ``message`` carrying SQLite's text, because there the engine's words are the answer.
    """

    def __init__(
        self,
        sqlite_message: str,
        sqlite_code: int | None = None,
        *,
        refusals: Sequence[str] = (),
        message: str = "the database refused the operation",
    ) -> None:
        self.refusals: tuple[str, ...] = tuple(refusals)
        details: dict[str, Any] = {"sqlite_code": sqlite_code}
        if self.refusals:
            details["refusals"] = list(self.refusals)
        super().__init__("db_error", message, details)
        self.sqlite_message = sqlite_message
        self.sqlite_code = sqlite_code


class UnknownTool(ToolError):
    """A call named a tool the instance does not serve."""

    error_type: ClassVar[str] = "tool_not_found"

    def __init__(self, name: str) -> None:
        super().__init__("unknown_tool", f"unknown tool: {name}", {"name": name})
