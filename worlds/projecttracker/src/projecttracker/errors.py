"""ProjectTracker's four error codes. The code is the contract an eval keys on; the message is
written for the agent and says what to do about it.

The codes are this product's vocabulary, in capitals, beside the framework's own lower-case
ones (``invalid_arguments``, ``db_error``, ``unknown_tool``), which the error handler restates
or, for the SQL door, lets through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = ["Conflict", "Internal", "InvalidInput", "NotFound", "TrackerError"]


class TrackerError(seahaven.ToolError):
    """The base of every error ProjectTracker raises for the agent; a subclass fixes ``CODE``."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(TrackerError):
    """A record the caller named does not exist."""

    CODE = "NOT_FOUND"

    def __init__(self, kind: str, ref: str, hint: str = "") -> None:
        message = f"{kind} {ref} not found"
        if hint:
            message = f"{message}; {hint}"
        super().__init__(message, {"kind": kind, "key": ref})


class InvalidInput(TrackerError):
    """Arguments the tracker will not accept; ``details["violations"]`` lists every one."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        listed = [{"field": str(v["field"]), "problem": str(v["problem"])} for v in violations]
        summary = "; ".join(f"{v['field']}: {v['problem']}" for v in listed)
        if len(listed) > 1:
            summary = f"{len(listed)} problems: {summary}"
        super().__init__(f"invalid input: {summary}", {"violations": listed})

    @classmethod
    def on(cls, field: str, problem: str) -> InvalidInput:
        """One argument, and what is wrong with it."""
        return cls([{"field": field, "problem": problem}])


class Conflict(TrackerError):
    """The call is well formed, but the tracker's current state does not allow it."""

    CODE = "CONFLICT"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, details or None)


class Internal(TrackerError):
    """Something failed inside the tracker; changing the arguments will not help."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__(
            "the tracker hit an internal error and changed nothing; try again, or report it"
        )
