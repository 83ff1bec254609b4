"""``calculate``'s arithmetic: what the benchmark works out with ``eval``, without ``eval``.

tau2-bench accepts an expression of digits, ``+ - * / ( ) .`` and spaces, runs
it through Python's ``eval`` and answers ``str(round(float(result), 2))``. Those
characters spell Python's numbers, ``+ - * / // **`` and parentheses, and only
those: this module parses the expression as Python does and computes the same
operations on the same numbers, so the answers (and the errors' texts) agree. A
power whose result would be enormous is refused instead of computed, where the
benchmark's process would hang.
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Callable

__all__ = ["ALLOWED", "evaluate"]

ALLOWED = frozenset("0123456789+-*/(). ")
"""The characters an expression may hold, as the benchmark allows them."""

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
# Python computes an integer power exactly however large it grows; past this many
# bits of result the answer could not be shown as a float anyway.
_MAX_POWER_BITS = 4096


def evaluate(expression: str) -> str:
    """The benchmark's answer for ``expression``: the result rounded to 2 places, as text.

    Raises ``ValueError`` with the benchmark's text for a character outside
    ``ALLOWED``, and ``ArithmeticError``, ``SyntaxError`` or ``TypeError`` with
    Python's own text for what Python's ``eval`` would refuse.
    """
    if not all(char in ALLOWED for char in expression):
        raise ValueError("Invalid characters in expression")
    # eval() ignores leading spaces; ast.parse would call them an indent.
    with warnings.catch_warnings():
        # "(1)(2)" parses with a SyntaxWarning; the call is refused below, as eval refuses it.
        warnings.simplefilter("ignore", SyntaxWarning)
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
    return str(round(float(_value(tree.body)), 2))


def _value(node: ast.expr) -> float:
    # A number; True and False cannot be spelled with these characters.
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.Tuple | ast.Constant):
        kind = "tuple" if isinstance(node, ast.Tuple) else type(node.value).__name__
        raise TypeError(f"float() argument must be a string or a real number, not '{kind}'")
    if isinstance(node, ast.Call):
        raise TypeError(f"'{type(_value(node.func)).__name__}' object is not callable")
    raise TypeError(f"cannot calculate {ast.unparse(node)!r}")


def _check_power(base: float, exponent: float) -> None:
    whole = isinstance(base, int) and isinstance(exponent, int)
    if whole and abs(base) > 1 and exponent * int(abs(base)).bit_length() > _MAX_POWER_BITS:
        raise OverflowError("int too large to convert to float")
