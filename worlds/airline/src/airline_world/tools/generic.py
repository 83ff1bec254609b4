"""The two tools every tau2-bench domain gives its agent: a calculator and a hand-off."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

import seahaven
from airline_world.arithmetic import evaluate
from airline_world.errors import InvalidExpression
from airline_world.world import world

__all__ = ["calculate", "transfer_to_human_agents"]


@world.tool
def calculate(
    ctx: seahaven.Ctx,
    expression: Annotated[
        str,
        Field(
            description="Arithmetic to work out, such as '2 + 2': digits, + - * /, "
            "parentheses, decimal points and spaces only."
        ),
    ],
) -> str:
    """Work out an arithmetic expression; the result comes back rounded to two decimals.

    Errors: INVALID_EXPRESSION for any other character, or arithmetic that
    cannot be worked out (a division by zero, a malformed expression).
    """
    try:
        return evaluate(expression)
    except (ArithmeticError, SyntaxError, TypeError, ValueError) as refused:
        raise InvalidExpression(str(refused)) from None


@world.tool
def transfer_to_human_agents(
    ctx: seahaven.Ctx,
    summary: Annotated[str, Field(description="What the customer needs, for the human agent.")],
) -> str:
    """Hand the customer over to a human agent, with a summary of their issue.

    Transfer only when the customer asks for a human explicitly, or when the
    policy and these tools cannot resolve their issue.
    """
    return "Transfer successful"
