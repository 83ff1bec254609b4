"""The limits contained SQL is held to: its size, its time, and the threads that may be stopped.

``MAX_VALUE_BYTES`` bounds one value (and one row), ``MAX_SQL_BYTES`` one
statement's text, ``MAX_RESULT_BYTES`` a whole result as JSON text;
``STATEMENT_SECONDS`` and ``SETUP_SQL_SECONDS`` how long a statement of a SQL
door, and one instance's whole ``setup_sql``, may run before ``Deadline`` stops
it. The code of the sandbox reads these through this module when it runs, so
setting one here (or on ``seahaven.sandbox``, which passes it on) takes effect.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

import apsw

from seahaven.errors import WorldBug

__all__ = [
    "MAX_RESULT_BYTES",
    "MAX_SQL_BYTES",
    "MAX_VALUE_BYTES",
    "SETUP_SQL_SECONDS",
    "STATEMENT_SECONDS",
    "Deadline",
    "check_limits",
    "interrupt_thread",
    "interruptible",
    "limit_values",
]

# The largest single value (and row) agent-written SQL may materialise.
MAX_VALUE_BYTES = 1_000_000

# The longest SQL text one statement of a SQL door may be.
MAX_SQL_BYTES = 1_000_000

# The largest result a SQL door returns, as JSON text; past it the statement fails.
MAX_RESULT_BYTES = 10_000_000

# How long one statement of a SQL door may run, reading its rows included.
STATEMENT_SECONDS = 10.0

# How long one instance's setup_sql may run, all its statements together: as long as
# one statement of a SQL door, since setup_sql is for small per-episode changes.
SETUP_SQL_SECONDS = 10.0


# How many SQLite virtual-machine steps pass between two looks at the clock.
_PROGRESS_STEPS = 10_000


def limit_values(conn: apsw.Connection) -> None:
    """Hold every string and blob on ``conn`` to ``MAX_VALUE_BYTES``; past it is SQLITE_TOOBIG.

    SQLite applies the same limit to a whole row, so a row wider than this cannot be
    read or written on ``conn`` either.
    """
    conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)


class Deadline:
    """A progress handler on one connection for the length of a ``with`` block.

    SQLite calls it every few thousand steps of a running statement. Past
    ``seconds`` (``None``: never) it stops the statement, which then fails with
    ``apsw.InterruptError`` and ``expired`` is true. Because the handler is
    Python, a Ctrl-C arriving meanwhile is raised from it as ``KeyboardInterrupt``
    instead of waiting for the statement to end.
    """

    __slots__ = ("_conn", "_ends", "expired", "seconds")

    def __init__(self, conn: apsw.Connection, seconds: float | None) -> None:
        self._conn = conn
        self.seconds = seconds
        self._ends = 0.0
        self.expired = False

    def _check(self) -> bool:
        if self.seconds is not None and time.monotonic() >= self._ends:
            self.expired = True
            return True
        if _interrupted and threading.get_ident() in _interrupted:
            self.expired = True
            return True
        return False

    def install(self) -> None:
        """Start the clock and install the handler, outside a ``with`` block."""
        self._ends = time.monotonic() + (self.seconds or 0.0)
        self.expired = False
        self._conn.set_progress_handler(self._check, _PROGRESS_STEPS)

    def __enter__(self) -> Deadline:
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._conn.set_progress_handler(None)


# The threads inside an ``interruptible()`` block, and those of them ``interrupt_thread`` stopped.
_interruptible: set[int] = set()
_interrupted: set[int] = set()
_interrupt_lock = threading.Lock()


@contextmanager
def interruptible() -> Iterator[int]:
    """A block whose statements another thread may stop with ``interrupt_thread(ident)``.

    Yields this thread's ident. A server runs each piece of a session's work in
    such a block, so that when the session's client goes or the server stops, a
    statement running under a ``Deadline`` (``setup_sql``, a SQL door, a reader)
    ends as if its time had run out, instead of holding the thread for its whole
    allowance. Leaving the block clears any interruption.
    """
    ident = threading.get_ident()
    with _interrupt_lock:
        _interruptible.add(ident)
    try:
        yield ident
    finally:
        with _interrupt_lock:
            _interruptible.discard(ident)
            _interrupted.discard(ident)


def interrupt_thread(ident: int) -> None:
    """Stop what runs under a ``Deadline`` on thread ``ident``, inside its ``interruptible()``.

    A thread outside such a block is left alone.
    """
    with _interrupt_lock:
        if ident in _interruptible:
            _interrupted.add(ident)


def _check_limit(value: int | None, what: str, ceiling: int | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorldBug(f"{what} must be a positive integer or None, not {value!r}")
    if ceiling is not None and value > ceiling:
        raise WorldBug(
            f"{what} is {value}, past seahaven.sandbox.MAX_RESULT_BYTES ({ceiling}); a result "
            "is never larger, so give at most that"
        )


def check_limits(max_rows: int | None, max_bytes: int | None) -> None:
    """Refuse a truncation policy that is not positive integers (``WorldBug``)."""
    _check_limit(max_rows, "max_rows")
    _check_limit(max_bytes, "max_bytes", MAX_RESULT_BYTES)
