"""The instance clock, its canonical text, and the SQL functions that read it.

One ``Clock`` per instance. World code reads it through ``ctx.clock``; every
connection the instance opens overrides SQLite's date and time functions so
that SQL reads the same clock. Readings are whole milliseconds.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

import apsw

from seahaven.errors import WorldBug

__all__ = ["CLOCK_MODES", "Clock", "ClockMode", "format_instant", "parse_instant"]

ClockMode = Literal["fixed", "tick", "running", "wall"]
CLOCK_MODES: tuple[str, ...] = get_args(ClockMode)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TRACE_ID = "seahaven.clock"


def check_clock_mode(value: object) -> ClockMode:
    """Return ``value`` if it names a clock mode, else raise ``WorldBug``."""
    if value not in CLOCK_MODES:
        raise WorldBug(f"{value!r} is not a clock mode; choose one of {', '.join(CLOCK_MODES)}")
    return value  # type: ignore[return-value]


def _to_ms(moment: datetime) -> int:
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        raise WorldBug(
            f"{moment.isoformat()} has no time zone; give an aware datetime, "
            "such as 2026-06-01T09:00:00.000Z"
        )
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_instant(value: datetime | str) -> int:
    """Milliseconds since the epoch for an aware ``datetime`` or ISO-8601 text with a zone."""
    if isinstance(value, datetime):
        return _to_ms(value)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise WorldBug(
                f"{value!r} is not an ISO-8601 instant; write it like 2026-06-01T09:00:00.000Z"
            ) from None
        return _to_ms(parsed)
    raise WorldBug(f"an instant is an aware datetime or ISO-8601 text, not {type(value).__name__}")


def ms_to_datetime(ms: int) -> datetime:
    """The aware UTC ``datetime`` for a millisecond reading."""
    return _EPOCH + timedelta(milliseconds=ms)


# The readings ``datetime`` can show, years 1 to 9999; ``time.gmtime`` answers these the same.
_FIRST_MS = -62_135_596_800_000
_LAST_MS = 253_402_300_799_999


def format_instant(ms: int) -> str:
    """Canonical text for a millisecond reading: ``2026-06-01T09:00:00.000Z``."""
    if _FIRST_MS <= ms <= _LAST_MS:
        # gmtime costs half of datetime arithmetic, and the clock's text is read by every
        # state document and, under a tick clock, every call.
        seconds, millis = divmod(ms, 1000)
        t = time.gmtime(seconds)
        return f"{t[0]:04d}-{t[1]:02d}-{t[2]:02d}T{t[3]:02d}:{t[4]:02d}:{t[5]:02d}.{millis:03d}Z"
    # Past datetime's years, as datetime says (OverflowError).
    moment = _EPOCH + timedelta(milliseconds=ms)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}."
        f"{moment.microsecond // 1000:03d}Z"
    )


def is_canonical(text: object) -> bool:
    """Whether ``text`` round-trips through the clock's own formatter unchanged."""
    if not isinstance(text, str):
        return False
    try:
        return format_instant(parse_instant(text)) == text
    except WorldBug:
        return False


class Clock:
    """An instance's time. Reading it never moves it; a ``Clock`` compares by identity."""

    __slots__ = ("_cached_iso", "_cached_ms", "_mode", "_mono_start", "_start_ms", "_ticks")

    def __init__(self, now: datetime, mode: ClockMode = "fixed") -> None:
        self._start_ms = _to_ms(now)
        self._mode: ClockMode = check_clock_mode(mode)
        self._ticks = 0
        self._mono_start = time.monotonic_ns()
        self._cached_ms = -1
        self._cached_iso = ""

    @classmethod
    def starting_at(cls, start_ms: int, mode: ClockMode) -> Clock:
        """A clock whose first reading is ``start_ms`` (ms since the epoch), for an instance."""
        clock = cls.__new__(cls)
        clock._start_ms = start_ms
        clock._mode = mode
        clock._ticks = 0
        clock._mono_start = time.monotonic_ns()
        clock._cached_ms = -1
        clock._cached_iso = ""
        return clock

    @property
    def mode(self) -> ClockMode:
        """How the clock moves: ``fixed``, ``tick``, ``running`` or ``wall``."""
        return self._mode

    def reading_ms(self) -> int:
        """The current reading in whole milliseconds since the epoch."""
        mode = self._mode
        if mode == "fixed":
            return self._start_ms
        if mode == "tick":
            return self._start_ms + 1000 * self._ticks
        if mode == "running":
            return self._start_ms + (time.monotonic_ns() - self._mono_start) // 1_000_000
        return time.time_ns() // 1_000_000

    def now(self) -> datetime:
        """The current reading as an aware UTC ``datetime``."""
        return _EPOCH + timedelta(milliseconds=self.reading_ms())

    def iso(self) -> str:
        """The current reading as canonical text."""
        ms = self.reading_ms()
        if ms != self._cached_ms:
            self._cached_iso = format_instant(ms)
            self._cached_ms = ms
        return self._cached_iso

    def tick(self) -> None:
        """Move a ``tick`` clock one step (one second) forward, as dispatching a call does.

        For a driver that runs work outside tool calls, such as the HTTP test
        server of ``seahaven.http`` before each request; the other modes do not
        count steps, so it changes nothing for them.
        """
        self._ticks += 1

    def set_dispatched(self, count: int) -> None:
        """Say how many calls the instance has dispatched (what a ``tick`` clock counts)."""
        # Under `tick`, readings inside call i are start + (i + 1) seconds.
        self._ticks = count

    def position(self) -> tuple[ClockMode, int, int]:
        """``(mode, start_ms, ticks)``: what ``Clock.resumed`` needs to go on from this reading.

        A ``running`` clock answers its current reading as the start, so the clock
        made from it runs on from there; a ``wall`` clock keeps nothing.
        """
        if self._mode == "running":
            return self._mode, self.reading_ms(), 0
        return self._mode, self._start_ms, self._ticks

    @classmethod
    def resumed(cls, mode: ClockMode, start_ms: int, ticks: int) -> Clock:
        """A clock that goes on from a ``position()``: the same next readings, in the same mode."""
        clock = cls.starting_at(start_ms, mode)
        clock._ticks = ticks
        return clock

    def resume_at(self, mode: ClockMode, start_ms: int, ticks: int) -> None:
        """Go on from a ``position()`` in place, as ``resumed`` would make a clock do.

        For an instance restored in place: the connections' SQL time functions
        read this clock, so it moves rather than being replaced. The mode is
        the clock's own; another one is refused.
        """
        if mode != self._mode:
            raise WorldBug(
                f"a {self._mode} clock cannot go on from a {mode} clock's position; restore "
                "into an instance made with the same clock mode"
            )
        self._start_ms = start_ms
        self._ticks = ticks
        self._mono_start = time.monotonic_ns()
        self._cached_ms = -1
        self._cached_iso = ""

    def __repr__(self) -> str:
        return f"Clock({self.iso()}, mode={self._mode!r})"


# --- SQL overrides -----------------------------------------------------------------------------

# The StatementClock whose overrides each connection has, for ``rebind_clock``.
_installed: weakref.WeakKeyDictionary[apsw.Connection, StatementClock] = weakref.WeakKeyDictionary()


def rebind_clock(conn: apsw.Connection, clock: Clock | None) -> None:
    """Point ``conn``'s clock overrides at ``clock`` (``None``: at nothing), or install them."""
    installed = _installed.get(conn)
    if installed is not None:
        installed.rebind(conn, clock)
    elif clock is not None:
        StatementClock(clock).install(conn)


_plain = threading.local()


def _plain_sqlite() -> apsw.Connection:
    """A connection with SQLite's own date functions, to compute what the overrides return."""
    conn: apsw.Connection | None = getattr(_plain, "conn", None)
    if conn is None:
        conn = apsw.Connection(":memory:")
        _plain.conn = conn
    return conn


def _builtin(function: str, args: tuple[Any, ...]) -> Any:
    placeholders = ", ".join("?" for _ in args)
    for row in _plain_sqlite().execute(f"SELECT {function}({placeholders})", args):
        return row[0]
    return None


def _sql_text(ms: int) -> str:
    # SQLite's own time-value text, which its date functions parse.
    canonical = format_instant(ms)
    return f"{canonical[:10]} {canonical[11:23]}"


def _is_now(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == "now"


class StatementClock:
    """One connection's view of the clock: one reading per SQL statement.

    Under ``fixed`` and ``tick`` the clock cannot move inside a call, so the
    reading is taken directly. Under ``running`` and ``wall`` a statement trace
    registered as ``seahaven.clock`` takes one reading when each top-level
    statement starts, and everything the statement runs, triggers included,
    shares it.
    """

    __slots__ = ("__weakref__", "_clock", "_per_statement", "_reading")

    def __init__(self, clock: Clock) -> None:
        self._clock: Clock = clock
        self._per_statement = clock.mode in ("running", "wall")
        self._reading: int | None = None

    def ms(self) -> int:
        """The reading this statement sees."""
        if not self._per_statement:
            return self._clock.reading_ms()
        if self._reading is None:
            self._reading = self._clock.reading_ms()
        return self._reading

    def _on_statement(self, event: dict[str, Any]) -> None:
        if not event.get("trigger"):
            self._reading = None

    def rebind(self, conn: apsw.Connection, clock: Clock | None) -> None:
        """Make the overrides installed on ``conn`` read ``clock``; ``None`` lets go of the last.

        A kept connection gets each new store's clock this way: registering the
        functions again would make SQLite prepare every cached statement anew.
        """
        per_statement = clock is not None and clock.mode in ("running", "wall")
        if per_statement != self._per_statement:
            if per_statement:
                conn.trace_v2(apsw.SQLITE_TRACE_STMT, self._on_statement, id=_TRACE_ID)
            else:
                conn.trace_v2(0, None, id=_TRACE_ID)
        self._per_statement = per_statement
        self._reading = None
        if clock is not None:
            self._clock = clock
        else:
            del self._clock

    def install(self, conn: apsw.Connection) -> None:
        """Register the overrides (and the trace, where the mode needs one) on ``conn``."""
        _installed[conn] = self
        if self._per_statement:
            conn.trace_v2(apsw.SQLITE_TRACE_STMT, self._on_statement, id=_TRACE_ID)
        flags = apsw.SQLITE_INNOCUOUS
        now_text = self._now_text

        def current_timestamp() -> str:
            return format_instant(self.ms())

        def current_date() -> str:
            return now_text()[:10]

        def current_time() -> str:
            return now_text()[11:19]

        def datetime_(*args: Any) -> Any:
            if not args or _is_now(args[0]):
                result = _builtin("datetime", (now_text(), *args[1:], "subsec"))
                if not isinstance(result, str):
                    return result
                return result.replace(" ", "T", 1) + ("Z" if "." in result else ".000Z")
            return _builtin("datetime", args)

        def time_value_function(name: str, position: int) -> Callable[..., Any]:
            def override(*args: Any) -> Any:
                if len(args) <= position:
                    args = (*args, now_text())
                elif _is_now(args[position]):
                    args = (*args[:position], now_text(), *args[position + 1 :])
                return _builtin(name, args)

            return override

        def timediff(a: Any, b: Any) -> Any:
            return _builtin(
                "timediff", (now_text() if _is_now(a) else a, now_text() if _is_now(b) else b)
            )

        # Typed Any: APSW's stubs name one signature per arity, and these take several.
        overrides: list[tuple[str, Any, int]] = [
            ("current_timestamp", current_timestamp, 0),
            ("current_date", current_date, 0),
            ("current_time", current_time, 0),
            ("datetime", datetime_, -1),
            ("date", time_value_function("date", 0), -1),
            ("time", time_value_function("time", 0), -1),
            ("julianday", time_value_function("julianday", 0), -1),
            ("unixepoch", time_value_function("unixepoch", 0), -1),
            ("strftime", time_value_function("strftime", 1), -1),
            ("timediff", timediff, 2),
        ]
        for name, function, arity in overrides:
            conn.create_scalar_function(name, function, arity, flags=flags)

    def _now_text(self) -> str:
        return _sql_text(self.ms())
