"""The clock: the ``Clock`` class, the four modes, where the clock starts, and the SQL date and
time functions that read it, one reading per statement."""

import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import apsw
import pytest

import seahaven
from seahaven.stores.clock import format_instant, parse_instant

START = "2026-06-01T09:00:00.000Z"
START_AT = datetime(2026, 6, 1, 9, tzinfo=UTC)

SCHEMA = """
CREATE TABLE stamps (id INTEGER PRIMARY KEY, a TEXT, pause INTEGER, b TEXT) STRICT;
CREATE TABLE trail (id INTEGER PRIMARY KEY, stamp_id INTEGER NOT NULL, at TEXT NOT NULL) STRICT;
CREATE TRIGGER stamps_trail AFTER INSERT ON stamps BEGIN
    INSERT INTO trail (stamp_id, at) VALUES (new.id, CURRENT_TIMESTAMP);
END;
"""


def declare(**options: Any) -> seahaven.World:
    """A world whose tools read the clock in Python and in SQL."""
    world = seahaven.World(
        name="clock", version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1", **options
    )

    @world.tool
    def what_time(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Read the clock several times, in Python and in SQL."""
        return {
            "python": [ctx.clock.iso(), ctx.clock.iso()],
            "now": ctx.clock.now(),
            "sql": ctx.db.one("SELECT CURRENT_TIMESTAMP AS a, datetime('now') AS b"),
        }

    @world.tool
    def sql(ctx: seahaven.Ctx, query: str) -> Any:
        """Evaluate one SQL expression."""
        row = ctx.db.one(f"SELECT {query} AS value")
        assert row is not None
        return row["value"]

    return world


def plain_sqlite(expression: str, *params: Any) -> Any:
    """What SQLite's own functions answer, on a connection without the clock's overrides."""
    conn = apsw.Connection(":memory:")
    try:
        return conn.execute(f"SELECT {expression}", params).fetchall()[0][0]
    finally:
        conn.close()


def ms(text: str) -> int:
    """Milliseconds since the epoch of canonical text."""
    moment = datetime.fromisoformat(text)
    return int(moment.timestamp() * 1000 + 0.5)


# --- the Clock class -----------------------------------------------------------------------------


def test_a_clock_built_from_a_datetime_is_fixed_at_it() -> None:
    clock = seahaven.Clock(START_AT)
    assert clock.mode == "fixed"
    assert clock.iso() == START
    assert clock.now() == START_AT
    time.sleep(0.01)
    assert clock.iso() == START


def test_readings_are_truncated_to_milliseconds() -> None:
    clock = seahaven.Clock(datetime(2026, 6, 1, 9, 0, 0, 123999, tzinfo=UTC))
    assert clock.iso() == "2026-06-01T09:00:00.123Z"
    assert clock.now() == datetime(2026, 6, 1, 9, 0, 0, 123000, tzinfo=UTC)


def test_canonical_text_renders_a_datetime_in_utc() -> None:
    two_hours_east = timezone(timedelta(hours=2))
    clock = seahaven.Clock(datetime(2026, 6, 1, 11, 0, 0, 5000, tzinfo=two_hours_east))
    assert clock.iso() == "2026-06-01T09:00:00.005Z"
    assert clock.now().utcoffset() == timedelta(0)
    assert clock.now().tzinfo is not None


def test_canonical_text_sorts_as_time_does() -> None:
    moments = [
        datetime(2026, 6, 1, 9, 0, 0, 999000, tzinfo=UTC),
        datetime(2026, 6, 1, 9, 0, 1, tzinfo=UTC),
        datetime(2026, 6, 1, 10, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    ]
    texts = [seahaven.Clock(moment).iso() for moment in moments]
    assert texts == sorted(texts)
    assert all(len(text) == len(START) and text.endswith("Z") for text in texts)


@pytest.mark.parametrize(
    "ms",
    [
        0,
        -1,
        1,
        951_782_400_000,  # 2000-02-29, a leap day
        1_780_304_400_123,
        -62_135_596_800_000,  # the first instant of year 1
        253_402_300_799_999,  # the last of year 9999
        *range(-86_400_000 * 800, 86_400_000 * 800, 86_400_000 * 7 + 3_601_001),
    ],
)
def test_canonical_text_is_what_datetime_shows(ms: int) -> None:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert format_instant(ms) == expected.rjust(len(START), "0")
    assert parse_instant(format_instant(ms)) == ms


@pytest.mark.parametrize("ms", [-62_135_596_800_001, 253_402_300_800_000])
def test_an_instant_past_datetimes_years_has_no_canonical_text(ms: int) -> None:
    with pytest.raises(OverflowError):
        format_instant(ms)


def test_a_naive_datetime_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="no time zone"):
        seahaven.Clock(datetime(2026, 6, 1, 9))


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="not a clock mode"):
        seahaven.Clock(START_AT, "hourglass")  # type: ignore[arg-type]


def test_a_clock_compares_by_identity_and_its_mode_is_read_only() -> None:
    first, second = seahaven.Clock(START_AT), seahaven.Clock(START_AT)
    assert first != second
    assert first == first
    with pytest.raises(AttributeError):
        first.mode = "tick"  # type: ignore[misc]


# --- where the clock starts ----------------------------------------------------------------------


def test_now_is_the_start_instant_as_text_or_datetime() -> None:
    world = declare()
    with world.instance(now=START, clock_mode="fixed") as inst:
        assert inst.clock.iso() == START
    with world.instance(now=START_AT + timedelta(hours=1), clock_mode="fixed") as inst:
        assert inst.clock.iso() == "2026-06-01T10:00:00.000Z"
    with world.instance(now="2026-06-01T11:00:00.123456+02:00", clock_mode="fixed") as inst:
        assert inst.clock.iso() == "2026-06-01T09:00:00.123Z"


def test_a_blank_instance_without_now_starts_at_the_wall_time() -> None:
    world = declare()
    before = time.time_ns() // 1_000_000
    with world.instance(clock_mode="fixed") as inst:
        after = time.time_ns() // 1_000_000
        assert before <= ms(inst.clock.iso()) <= after


def test_the_fixtures_now_is_the_start_and_an_earlier_now_is_refused(tmp_path: Path) -> None:
    world = declare(fixtures_dir=tmp_path)
    with world.instance(now=START, clock_mode="fixed") as inst:
        inst.freeze("base", "Empty, frozen at the start instant.")

    with world.instance("base", clock_mode="fixed") as inst:
        assert inst.clock.iso() == START
    with world.instance("base", now=START, clock_mode="fixed") as inst:
        assert inst.clock.iso() == START
    with world.instance("base", now="2026-06-03T17:45:00Z", clock_mode="fixed") as inst:
        assert inst.clock.iso() == "2026-06-03T17:45:00.000Z"
    with pytest.raises(seahaven.WorldBug, match="earlier than fixture 'base'"):
        world.instance("base", now="2026-06-01T08:59:59.999Z")


def test_a_schema_seeding_rows_stamps_them_from_the_instance_clock() -> None:
    world = seahaven.World(
        name="clock",
        version="1.0.0",
        schema="""
        CREATE TABLE plans (id TEXT PRIMARY KEY, created_at TEXT NOT NULL) STRICT;
        INSERT INTO plans VALUES ('free', CURRENT_TIMESTAMP);
        """,
        state_format="seahaven.state/1",
    )
    with world.instance(now=START, clock_mode="fixed") as inst:
        assert inst.inspect().rows("SELECT * FROM plans") == [{"id": "free", "created_at": START}]


# --- the modes -----------------------------------------------------------------------------------


def test_fixed_reads_the_start_instant_for_the_whole_life() -> None:
    world = declare()
    with world.instance(now=START, clock_mode="fixed") as inst:
        for _ in range(3):
            seen = inst.call("what_time")
            assert seen["python"] == [START, START]
            assert seen["now"] == START_AT
            assert seen["sql"] == {"a": START, "b": START}
        time.sleep(0.01)
        assert inst.clock.iso() == START


def test_tick_adds_one_second_per_dispatched_call() -> None:
    world = declare()
    with world.instance(now=START, clock_mode="tick") as inst:
        assert inst.clock.mode == "tick"
        assert inst.clock.iso() == START
        assert inst.clock.iso() == START  # reading never moves it
        first = inst.call("what_time")
        assert first["python"] == ["2026-06-01T09:00:01.000Z"] * 2
        assert first["sql"] == {"a": "2026-06-01T09:00:01.000Z", "b": "2026-06-01T09:00:01.000Z"}
        assert inst.clock.iso() == "2026-06-01T09:00:01.000Z"
        assert inst.call("what_time")["python"][0] == "2026-06-01T09:00:02.000Z"
        assert inst.inspect().one("SELECT CURRENT_TIMESTAMP AS t") == {
            "t": "2026-06-01T09:00:02.000Z"
        }


def test_tick_counts_refused_calls_but_not_unknown_names() -> None:
    world = declare()
    with world.instance(now=START, clock_mode="tick") as inst:
        with pytest.raises(seahaven.ArgumentError):
            inst.call("sql", query=1)
        assert inst.clock.iso() == "2026-06-01T09:00:01.000Z"
        with pytest.raises(seahaven.UnknownTool):
            inst.call("no_such_tool")
        assert inst.clock.iso() == "2026-06-01T09:00:01.000Z"
        assert inst.call("what_time")["python"][0] == "2026-06-01T09:00:02.000Z"


def test_tick_replays() -> None:
    world = declare()

    def run() -> list[Any]:
        with world.instance(now=START, clock_mode="tick") as inst:
            return [inst.call("what_time") for _ in range(3)]

    assert run() == run()


@pytest.mark.parametrize("mode", ["fixed", "tick", "running"])
def test_startup_hooks_see_the_start_instant(mode: str) -> None:
    world = declare()
    seen: list[Any] = []

    @world.instance_startup
    def look(ctx: seahaven.Ctx) -> None:
        seen.append(ctx.clock.iso())
        seen.append(ctx.db.one("SELECT CURRENT_TIMESTAMP AS t"))

    with world.instance(now=START, clock_mode=mode):  # type: ignore[arg-type]
        pass
    python, sql = seen
    if mode == "running":
        # Only the time the hook took to start can have passed.
        assert 0 <= ms(python) - ms(START) < 5_000
        assert ms(python) <= ms(sql["t"]) < ms(START) + 5_000
    else:
        assert seen == [START, {"t": START}]


def test_running_moves_with_real_time_from_the_start_instant() -> None:
    world = declare()
    past = "2020-01-01T00:00:00.000Z"
    with world.instance(now=past, clock_mode="running") as inst:
        first = ms(inst.clock.iso())
        time.sleep(0.05)
        second = ms(inst.clock.iso())
        within = ms(inst.call("what_time")["python"][0])
    assert ms(past) <= first < ms(past) + 5_000
    assert second - first >= 50
    assert second <= within < ms(past) + 10_000


def test_wall_reads_the_host_clock_and_ignores_the_start_instant() -> None:
    world = declare()
    with world.instance(now="2020-01-01T00:00:00.000Z", clock_mode="wall") as inst:
        before = time.time_ns() // 1_000_000
        reading = ms(inst.call("what_time")["python"][0])
        after = time.time_ns() // 1_000_000
    assert before <= reading <= after


def test_the_default_mode_is_running_and_a_world_may_set_its_own() -> None:
    with declare().instance() as inst:
        assert inst.clock.mode == "running"
    ticking = declare(default_clock_mode="tick")
    with ticking.instance() as inst:
        assert inst.clock.mode == "tick"
    with ticking.instance(clock_mode="wall") as inst:
        assert inst.clock.mode == "wall"


def test_ctx_clock_is_the_instances_one_clock() -> None:
    world = declare()
    seen: list[seahaven.Clock] = []

    @world.tool
    def grab(ctx: seahaven.Ctx) -> None:
        seen.append(ctx.clock)

    with world.instance() as inst:
        inst.call("grab")
        inst.call("grab")
        assert seen[0] is inst.clock and seen[1] is inst.clock


# --- SQL -----------------------------------------------------------------------------------------

FIXED = "2026-06-01T09:00:00.123Z"
FIXED_SQL_TEXT = "2026-06-01 09:00:00.123"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("CURRENT_TIMESTAMP", FIXED),
        ("current_date", "2026-06-01"),
        ("CURRENT_TIME", "09:00:00"),
        ("datetime('now')", FIXED),
        ("datetime()", FIXED),
        ("datetime('now', '+1 day')", "2026-06-02T09:00:00.123Z"),
        ("date('now')", "2026-06-01"),
        ("date()", "2026-06-01"),
        ("date('now', 'start of month', '-1 day')", "2026-05-31"),
        ("time('now')", "09:00:00"),
        ("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", FIXED),
        ("strftime('%s')", str(ms(FIXED) // 1000)),
        ("unixepoch('now')", ms(FIXED) // 1000),
        ("unixepoch()", ms(FIXED) // 1000),
        ("julianday('now')", plain_sqlite("julianday(?)", FIXED_SQL_TEXT)),
        ("julianday()", plain_sqlite("julianday(?)", FIXED_SQL_TEXT)),
        ("timediff('now', '2026-06-01 00:00:00')", "+0000-00-00 09:00:00.123"),
        ("timediff('2026-06-02 09:00:00.123', 'now')", "+0000-00-01 00:00:00.000"),
        ("CURRENT_TIMESTAMP > '2026-06-01T09:00:00.122Z'", 1),
        ("datetime('now') < '2026-06-01T09:00:00.124Z'", 1),
    ],
)
def test_sql_date_and_time_functions_read_the_instance_clock(
    expression: str, expected: Any
) -> None:
    with declare().instance(now=FIXED, clock_mode="fixed") as inst:
        assert inst.call("sql", query=expression) == expected
        # The inspection connection reads the same clock.
        assert inst.inspect().one(f"SELECT {expression} AS value") == {"value": expected}


@pytest.mark.parametrize(
    "expression",
    [
        "datetime('2020-01-02 03:04:05')",
        "date('2020-01-02 03:04:05', '+1 day')",
        "time('2020-01-02 03:04:05')",
        "julianday('2020-01-02')",
        "unixepoch('2020-01-02')",
        "strftime('%Y', '2020-01-02')",
        "timediff('2020-01-02', '2020-01-01')",
    ],
)
def test_functions_given_a_time_value_behave_as_sqlites_own(expression: str) -> None:
    with declare().instance(now=FIXED, clock_mode="fixed") as inst:
        assert inst.call("sql", query=expression) == plain_sqlite(expression)


@pytest.mark.parametrize("mode", ["running", "wall"])
def test_one_statement_takes_one_reading_and_its_trigger_shares_it(mode: str) -> None:
    world = declare()

    @world.tool
    def stamp_slowly(ctx: seahaven.Ctx) -> str:
        def pause() -> int:
            time.sleep(0.005)
            return 0

        ctx.db.conn.create_scalar_function("pause", pause, 0)
        # Four rows, each reading the clock either side of a pause: 20 ms in one statement.
        ctx.db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4) "
            "INSERT INTO stamps (id, a, pause, b) "
            "SELECT i, CURRENT_TIMESTAMP, pause(), datetime('now') FROM n"
        )
        time.sleep(0.005)
        row = ctx.db.one("SELECT CURRENT_TIMESTAMP AS later")
        assert row is not None
        return str(row["later"])

    with world.instance(now=START, clock_mode=mode) as inst:  # type: ignore[arg-type]
        later = inst.call("stamp_slowly")
        stamps = inst.inspect().rows("SELECT a, b FROM stamps ORDER BY id")
        trail = inst.inspect().rows("SELECT at FROM trail ORDER BY id")
    readings = {row["a"] for row in stamps} | {row["b"] for row in stamps}
    readings |= {row["at"] for row in trail}
    assert len(stamps) == 4 and len(trail) == 4
    assert len(readings) == 1, readings
    # The clock did move: the next statement reads a later instant.
    assert later > readings.pop()


def test_schema_objects_may_call_the_clock_functions() -> None:
    world = seahaven.World(
        name="clock",
        version="1.0.0",
        schema="""
        CREATE TABLE events (
            id TEXT PRIMARY KEY,
            at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        ) STRICT;
        """,
        state_format="seahaven.state/1",
    )

    @world.tool
    def happen(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO events (id) VALUES ('e1')")

    with world.instance(now=START, clock_mode="tick") as inst:
        inst.call("happen")
        assert inst.inspect().rows("SELECT at FROM events") == [{"at": "2026-06-01T09:00:01.000Z"}]
