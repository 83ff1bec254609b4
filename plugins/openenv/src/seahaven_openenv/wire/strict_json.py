"""Reading a client's JSON as JSON, and only JSON: ``loads``.

Python's parser takes more than RFC 8259 allows, and some of what it takes can
never be written back: ``NaN`` and ``Infinity``, and a number too large for a
double (``1e999`` reads as infinity). A request holding one would be accepted
and then fail its own reply (a 500, a closed socket) instead of being refused.
``loads`` refuses them, and turns the parser's other failures (an integer of
more digits than Python reads, nesting deeper than its stack) into the same
``NotJson``, a ``ValueError``, so each door answers its protocol's error.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NotJson", "TooDeep", "loads"]

# How much of the parser's own complaint (or of a number) a refusal repeats.
_SHOWN_CHARACTERS = 200


class NotJson(ValueError):
    """Text that is not JSON a reply could carry back; the message says why, briefly."""


class TooDeep(NotJson):
    """JSON nested more deeply than the parser's stack reaches (which depends on the Python)."""


def loads(text: str | bytes) -> Any:
    """``text`` parsed as strict JSON; ``NotJson`` saying why it is not.

    ``UnicodeDecodeError`` (bytes that are not UTF-8) is a ``NotJson`` too.
    Lone surrogates and the depth a door reads are the door's to check.
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except NotJson:
        raise
    except RecursionError:
        raise TooDeep("the text nests arrays and objects too deeply to read") from None
    except (ValueError, UnicodeDecodeError) as error:
        # json.JSONDecodeError, an integer past Python's digit limit, bytes that are not UTF-8.
        raise NotJson(_shortened(str(error))) from None


def _no_constant(name: str) -> float:
    raise NotJson(f"{name} is not a JSON value; send a number, or a string saying what it is")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise NotJson(
            f"the number {_shortened(text, 40)} is too large for a double (the largest is "
            "about 1.8e308); send a smaller one, or a string"
        )
    return number


def _shortened(text: str, limit: int = _SHOWN_CHARACTERS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
