"""The hand-off to a human agent."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

import seahaven
from telecom_world.world import world

__all__ = ["transfer_to_human_agents"]


@world.tool
def transfer_to_human_agents(
    ctx: seahaven.Ctx,
    summary: Annotated[str, Field(description="A summary of the customer's issue.")],
) -> str:
    """Hand the customer over to a human agent, with a summary of their issue. Only when the
    customer asks for a human, or when the policy and your tools cannot solve their issue."""
    return "Transfer successful"
