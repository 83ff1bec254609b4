"""The errors the chat product answers with.

Every one is a ``seahaven.ToolError`` whose ``code`` is the contract an agent and
an eval key on; the message is written for the agent and says what to do next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import seahaven

__all__ = [
    "AlreadyInChannel",
    "AlreadyReacted",
    "ChannelArchived",
    "ChatError",
    "Internal",
    "InvalidInput",
    "NameTaken",
    "NoActingUser",
    "NoReaction",
    "NotAuthor",
    "NotFound",
    "NotInChannel",
    "RestrictedAction",
    "UserDeactivated",
]


class ChatError(seahaven.ToolError):
    """The base of every error this world raises for the agent."""


class NotFound(ChatError):
    """The record does not exist, or lives in a private channel the acting user is not in."""

    def __init__(self, kind: str, key: str, hint: str = "") -> None:
        message = f"{kind} {key} not found"
        if hint:
            message = f"{message}; {hint}"
        super().__init__("NOT_FOUND", message, {"kind": kind, "key": key})


class InvalidInput(ChatError):
    """One or more arguments were refused; ``details["violations"]`` lists every one."""

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        listed = [{"field": str(v["field"]), "problem": str(v["problem"])} for v in violations]
        summary = "; ".join(f"{v['field']}: {v['problem']}" for v in listed)
        super().__init__("INVALID_INPUT", f"invalid input: {summary}", {"violations": listed})

    @classmethod
    def field(cls, name: str, problem: str) -> InvalidInput:
        """One argument, and what is wrong with it."""
        return cls([{"field": name, "problem": problem}])

    @classmethod
    def from_violations(
        cls,
        violations: Sequence[Mapping[str, Any]],
        descriptions: Mapping[str, str] | None = None,
    ) -> InvalidInput:
        """Restate the framework's argument violations in this product's shape.

        A value that fails a pattern is explained with the argument's own
        description, because a regular expression is no help to the agent.
        """
        restated = []
        for violation in violations:
            location = [str(part) for part in violation.get("loc", ())]
            field = ".".join(location) or "arguments"
            problem = str(violation.get("msg", "invalid"))
            described = (descriptions or {}).get(location[0]) if location else None
            if violation.get("type") == "string_pattern_mismatch" and described:
                problem = f"not in the expected form. {described}"
            restated.append({"field": field, "problem": problem})
        return cls(restated)


class NotInChannel(ChatError):
    """The acting user must be a member of the channel to do this."""

    def __init__(self, channel_id: str, name: str, hint: str = "join it first") -> None:
        message = f"you are not a member of #{name}"
        if hint:
            message = f"{message}; {hint}"
        super().__init__("NOT_IN_CHANNEL", message, {"channel_id": channel_id})


class AlreadyInChannel(ChatError):
    """The user is already a member of the channel."""

    def __init__(self, channel_id: str, name: str, user_id: str) -> None:
        super().__init__(
            "ALREADY_IN_CHANNEL",
            f"user {user_id} is already a member of #{name}",
            {"channel_id": channel_id, "user_id": user_id},
        )


class ChannelArchived(ChatError):
    """The channel is archived, so nothing in it can change."""

    def __init__(self, channel_id: str, name: str) -> None:
        super().__init__(
            "CHANNEL_ARCHIVED",
            f"#{name} is archived; it can be read and searched but not changed",
            {"channel_id": channel_id},
        )


class NameTaken(ChatError):
    """A channel name or a user handle is already in use."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(
            "NAME_TAKEN",
            f"the {kind} {name!r} is already taken (archived channels keep their names); "
            "choose another",
            {"kind": kind, "name": name},
        )


class NotAuthor(ChatError):
    """Only the author of a message may edit or delete it."""

    def __init__(self, message_id: str) -> None:
        super().__init__(
            "NOT_AUTHOR",
            f"message {message_id} was written by someone else; only its author can change it",
            {"message_id": message_id},
        )


class AlreadyReacted(ChatError):
    """The acting user has already added this emoji to this message."""

    def __init__(self, message_id: str, emoji: str) -> None:
        super().__init__(
            "ALREADY_REACTED",
            f"you already reacted with :{emoji}: to message {message_id}",
            {"message_id": message_id, "emoji": emoji},
        )


class NoReaction(ChatError):
    """The acting user has not added this emoji to this message."""

    def __init__(self, message_id: str, emoji: str) -> None:
        super().__init__(
            "NO_REACTION",
            f"you have not reacted with :{emoji}: to message {message_id}",
            {"message_id": message_id, "emoji": emoji},
        )


class UserDeactivated(ChatError):
    """The user's account is deactivated, so they cannot be added to anything."""

    def __init__(self, user_id: str, handle: str) -> None:
        super().__init__(
            "USER_DEACTIVATED",
            f"@{handle} is deactivated; a deactivated account cannot be added to channels "
            "or deactivated again",
            {"user_id": user_id},
        )


class RestrictedAction(ChatError):
    """The workspace does not let the acting user do this."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__("RESTRICTED_ACTION", message, {"reason": reason})


class NoActingUser(ChatError):
    """The workspace has no account yet, so there is nobody to act as."""

    def __init__(self) -> None:
        super().__init__(
            "NO_ACTING_USER",
            "this workspace has no accounts yet; create the first account, which becomes the "
            "workspace owner and the user you act as",
        )


class Internal(ChatError):
    """Something went wrong inside the product; the agent cannot fix it by retrying."""

    def __init__(self) -> None:
        super().__init__("INTERNAL", "an internal error occurred; this request was not applied")
