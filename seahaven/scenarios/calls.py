"""One tool call written as data: a solution's step, a scripted user's action.

``ToolCall`` lives apart from the scenario model so that the models of users
and events (``seahaven.scenarios.users``, ``events``) can use it and the
scenario model can use them; ``seahaven.scenarios.model.ToolCall`` is the
same class.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolCall"]


class ToolCall(BaseModel):
    """One call of a reference solution: a tool's surface name and its arguments.

    ``{"tool": "submit", "arguments": {"answer": ...}}`` submits an answer, and in
    a scenario with a user ``{"tool": "message_user", "arguments": {"text": ...}}``
    says something to the user.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
