"""The errors the back office answers with. Each class fixes one code, and the code is the contract.

Every error is a ``seahaven.ToolError``, so it reaches the agent as
``{code, message, details}``. Errors of the worlds the company adds (a card
the payments processor refused, a channel the chat product will not post in)
are their own classes with their own codes, and reach the agent unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = [
    "AlreadyExists",
    "CompanyError",
    "Forbidden",
    "Internal",
    "InvalidInput",
    "InvalidState",
    "NotFound",
]


class CompanyError(seahaven.ToolError):
    """The base of the back office's errors: a subclass fixes ``CODE`` once."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(CompanyError):
    """Nothing in the back office has that id."""

    CODE = "NOT_FOUND"

    def __init__(self, kind: str, key: str) -> None:
        super().__init__(f"no such {kind}: {key}", {"kind": kind, "id": key})


class InvalidInput(CompanyError):
    """An argument is malformed or out of range; ``details.violations`` lists every problem."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        self.violations = [
            {"field": str(item["field"]), "message": str(item["message"])} for item in violations
        ]
        summary = "; ".join(f"{item['field']}: {item['message']}" for item in self.violations)
        if len(self.violations) != 1:
            summary = f"{len(self.violations)} invalid arguments: {summary}"
        super().__init__(summary, {"violations": self.violations})

    @classmethod
    def on(cls, field: str, message: str) -> InvalidInput:
        """One argument is wrong: name it and say what it must be."""
        return cls([{"field": field, "message": message}])


class Forbidden(CompanyError):
    """The acting member of staff may not do this."""

    CODE = "FORBIDDEN"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, details or None)


class InvalidState(CompanyError):
    """The object exists, but is not in a state that allows this."""

    CODE = "INVALID_STATE"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, details or None)


class AlreadyExists(CompanyError):
    """Something that must be unique is already there."""

    CODE = "ALREADY_EXISTS"

    def __init__(self, kind: str, field: str, value: str, existing_id: str) -> None:
        super().__init__(
            f"a {kind} with {field} {value} already exists ({existing_id})",
            {"kind": kind, "field": field, "value": value, "existing_id": existing_id},
        )


class Internal(CompanyError):
    """Something broke inside the back office; changing the arguments will not help."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__(
            "the back office hit an internal error; none of its own records were changed", None
        )
