"""What keeping a store's connection between episodes saves: SQLite's share of an episode.

Issue 44's item 4 (airline gold-action episodes) is bounded by what a fresh in-memory
instance costs SQLite: the fixture image copied in, its schema parsed at the first
statement, and every statement of the episode prepared anew, since a prepared statement
belongs to one connection. This benchmark measures that bound without the framework:

1. it replays each airline task's gold calls through the framework once, recording every
   statement the store's connection ran (text and bindings);
2. it replays those statements with APSW alone, two ways, alternating round by round:
   ``fresh``, a new connection per episode loaded from the fixture image (what making an
   instance did before ``seahaven.stores.pool``), and ``kept``, one connection for the
   whole run with each episode inside ``BEGIN`` ... ``ROLLBACK`` (a call's ``BEGIN``/
   ``COMMIT`` becoming a savepoint), so the image, the parsed schema and the prepared
   statements carry over.

The figures are microseconds of SQLite and APSW work per episode, medians of the rounds,
and their ratio. The framework's own Python is left out: add the two to
``airline_episodes.py``'s figure to see what a kept connection makes of an episode.
Nothing asserts. Run it with

    .venv/bin/python benchmarks/kept_connection.py --rounds 15
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from typing import Any

import apsw
from airline_episodes import gold_calls

Statement = tuple[str, Any]

# What a kept connection does not run again each episode: its set-up (the pragmas hold for
# the connection's life) and loading the image (``deserialize`` runs ``ATTACH``).
_SET_UP = ("ATTACH", "PRAGMA locking_mode", "PRAGMA synchronous", "PRAGMA foreign_keys")
_NESTED = {"BEGIN": "SAVEPOINT call", "COMMIT": "RELEASE call", "ROLLBACK": "ROLLBACK TO call"}


def recorded_episodes() -> tuple[bytes, list[list[Statement]]]:
    """The fixture's image, and each task's statements as the framework ran them."""
    import airline_world

    import seahaven
    from seahaven.stores import pool

    episodes: list[list[Statement]] = []

    def trace(_cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        episodes[-1].append((sql, bindings))
        return True

    def record(conn: apsw.Connection) -> None:
        conn.exec_trace = trace

    # A hook sees new connections only: each episode gets one, since the pool keeps none with
    # a tracer left on it; and none waits there from before.
    pool.clear()
    apsw.connection_hooks.append(record)
    try:
        for steps in gold_calls():
            episodes.append([])
            with airline_world.world.instance("initial", storage="memory") as inst:
                for tool, arguments in steps:
                    with contextlib.suppress(seahaven.ToolError):
                        inst.call(tool, **arguments)
                inst.state()
    finally:
        apsw.connection_hooks.remove(record)
    with airline_world.world.instance("initial", storage="memory") as inst:
        image = inst.db.conn.serialize("main")
    return image, episodes


def _replay(conn: apsw.Connection, statements: list[Statement], kept: bool) -> None:
    for sql, bindings in statements:
        if kept:
            if sql.startswith(_SET_UP):
                continue
            sql = _NESTED.get(sql, sql)
        elif sql.startswith("ATTACH"):
            continue  # deserialize ran it
        # A statement the episode saw fail (a constraint a tool relies on) fails here too.
        with contextlib.suppress(apsw.Error):
            conn.execute(sql, bindings).fetchall()


def fresh_round(image: bytes, episodes: list[list[Statement]]) -> float:
    """Seconds per episode, each on a new connection loaded from ``image``."""
    started = time.perf_counter()
    for statements in episodes:
        conn = apsw.Connection(":memory:")
        conn.deserialize("main", image)
        _replay(conn, statements, kept=False)
        conn.close()
    return (time.perf_counter() - started) / len(episodes)


def kept_round(conn: apsw.Connection, episodes: list[list[Statement]]) -> float:
    """Seconds per episode, all on ``conn``, each undone by rolling its transaction back."""
    started = time.perf_counter()
    for statements in episodes:
        conn.execute("BEGIN")
        _replay(conn, statements, kept=True)
        conn.execute("ROLLBACK")
    return (time.perf_counter() - started) / len(episodes)


def main(argv: list[str]) -> int:
    """Alternate fresh and kept rounds; print the medians and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    arguments = parser.parse_args(argv)
    image, episodes = recorded_episodes()
    kept = apsw.Connection(":memory:")
    kept.deserialize("main", image)
    kept.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=OFF; PRAGMA foreign_keys=ON")
    # Each side once before timing: the kept connection prepares its statements here.
    fresh_round(image, episodes)
    kept_round(kept, episodes)
    fresh: list[float] = []
    keeping: list[float] = []
    for _ in range(arguments.rounds):
        fresh.append(fresh_round(image, episodes))
        keeping.append(kept_round(kept, episodes))
    statements = sum(len(episode) for episode in episodes) / len(episodes)
    print(
        f"airline: {len(episodes)} episodes a round, {statements:.1f} statements an episode, "
        f"image {len(image) / 1e6:.1f} MB; medians of {arguments.rounds} rounds; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    fresh_us, kept_us = statistics.median(fresh) * 1e6, statistics.median(keeping) * 1e6
    print(f"  fresh connection per episode  {fresh_us:7.1f} us of SQLite and APSW an episode")
    print(f"  kept connection, rolled back  {kept_us:7.1f} us of SQLite and APSW an episode")
    print(f"  saved an episode: {fresh_us - kept_us:.1f} us ({fresh_us / kept_us:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
