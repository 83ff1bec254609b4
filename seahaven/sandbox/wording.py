"""Why a contained statement failed, and how that reads for the agent who sent it.

``StatementFailed`` is what the statement gate raises, with a ``kind`` each door
words for its own audience; ``agent_error`` is the wording of the SQL doors,
the ``DbError`` (or ``WorldBug``) an agent's tool call fails with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import apsw

import seahaven.sandbox.limits as limits
from seahaven.errors import DbError, WorldBug
from seahaven.sandbox.policy import Authorizer, Refused
from seahaven.stores.db import DESTROYED_WHILE_RUNNING, INTERRUPTED, db_error

__all__ = ["FailureKind", "StatementFailed", "agent_error"]

FailureKind = Literal[
    "refused",
    "expired",
    "too_big",
    "too_long",
    "invalid_text",
    "result_too_big",
    "statements",
    "interrupted",
    "destroyed",
    "sqlite",
]


class StatementFailed(Exception):
    """Why a contained statement failed, for the door to word: the framework's, not public.

    ``kind`` is ``refused`` (``refused`` lists what), ``expired`` (the deadline),
    ``too_big`` (a value past ``MAX_VALUE_BYTES``), ``too_long`` (the text past
    ``MAX_SQL_BYTES``), ``invalid_text`` (text that is not UTF-8), ``result_too_big``,
    ``statements`` (not exactly one, or a write on a read-only door),
    ``interrupted`` (another thread interrupted it), ``destroyed`` (the instance is
    being destroyed) or ``sqlite`` (SQLite's
    own error, a syntax error say). ``error`` is APSW's exception, if any.
    """

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        refused: Sequence[Refused] = (),
        error: apsw.Error | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message
        self.refused = tuple(refused)
        self.error = error


def agent_error(
    failed: StatementFailed, authorizer: Authorizer, seconds: float
) -> DbError | WorldBug:
    """The agent's error for a failed statement: SQLite's text, or what was refused or hit."""
    code: int | None = None
    sqlite_message = failed.message
    if failed.error is not None:
        base = db_error(failed.error)
        if isinstance(base, DbError):
            code, sqlite_message = base.sqlite_code, base.sqlite_message
    if failed.kind == "destroyed":
        return WorldBug(DESTROYED_WHILE_RUNNING)
    if failed.kind == "interrupted":
        return DbError(sqlite_message, apsw.SQLITE_INTERRUPT, message=INTERRUPTED)
    if failed.kind == "refused":
        first = failed.refused[0]
        message = f"not authorized: {first.text}"
        if first.kind == "read" or first.text.endswith("which is not listed"):
            listed = ", ".join(authorizer.tables) or "none"
            message += f"; the tables this door may use are: {listed}"
        return DbError(
            sqlite_message,
            code if code is not None else apsw.SQLITE_AUTH,
            refusals=[refused.text for refused in failed.refused],
            message=message,
        )
    if failed.kind == "expired":
        return DbError(
            sqlite_message,
            code,
            message=f"the statement ran past its time limit of {seconds:g} seconds "
            "(seahaven.sandbox.STATEMENT_SECONDS) and was stopped; narrow the query, or end a "
            "recursive one with a WHERE or LIMIT",
        )
    if failed.kind == "too_big":
        return DbError(
            sqlite_message,
            code,
            message=f"{sqlite_message}: a value or row grew past seahaven.sandbox.MAX_VALUE_BYTES "
            f"({limits.MAX_VALUE_BYTES} bytes)",
        )
    if failed.kind in ("statements", "result_too_big", "too_long", "invalid_text"):
        return DbError(sqlite_message, code or apsw.SQLITE_MISUSE, message=failed.message)
    return DbError(sqlite_message, code, message=sqlite_message)
