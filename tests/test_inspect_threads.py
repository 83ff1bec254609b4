"""One ``inst.inspect()`` reader shared by several threads while another thread writes.

The reader is one connection, and SQLite's connections are not for two threads at
once; the reader takes its statements one at a time, so each thread gets its rows,
in memory and on disk alike, never a driver's error. Every wait here is bounded by
counts and a join timeout, never by a clock a slow machine could miss.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from storage_worlds import make_depot

import seahaven

READERS = 4
READS = 300
WRITES = 200
# How long a join may take before the test calls the threads stuck: far past what the
# counts above need on any machine, and only there so a deadlock fails instead of hanging.
JOIN_SECONDS = 300


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_one_reader_serves_several_threads_while_another_writes(storage: str) -> None:
    depot = make_depot()
    with depot.instance(storage=storage) as inst:  # type: ignore[arg-type]
        inst.call("put", id="b0", n=0)
        reader = inst.inspect()
        errors: list[BaseException] = []
        seen: dict[int, list[int]] = {}
        start = threading.Barrier(READERS + 1)

        def read(number: int) -> None:
            counts: list[int] = []
            try:
                start.wait()
                for index in range(READS):
                    if index % 2:
                        # Long enough a statement (SQLite lets go of the interpreter while it
                        # runs) that another thread's arrives while it is running.
                        row = reader.one(
                            "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k "
                            "WHERE x < 2000) SELECT (SELECT count(*) FROM boxes) AS n, "
                            "count(*) AS k FROM k"
                        )
                        assert row is not None and row["k"] == 2000
                        counts.append(row["n"])
                    else:
                        rows = reader.rows("SELECT n FROM boxes ORDER BY id LIMIT 5")
                        assert rows and rows[0] == {"n": 0}
            except BaseException as error:
                errors.append(error)
            seen[number] = counts

        def write() -> None:
            try:
                start.wait()
                for index in range(1, WRITES + 1):
                    inst.call("put", id=f"b{index}", n=index)
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=read, args=(number,)) for number in range(READERS)]
        threads.append(threading.Thread(target=write))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(JOIN_SECONDS)
        assert not any(thread.is_alive() for thread in threads), "a thread is stuck"
        assert errors == [], [f"{type(error).__name__}: {error}" for error in errors]
        # Each read saw a committed state, and no thread's reads went back in time.
        for counts in seen.values():
            assert len(counts) == READS // 2
            assert counts == sorted(counts)
            assert all(1 <= count <= WRITES + 1 for count in counts)
        assert reader.one("SELECT count(*) AS n FROM boxes") == {"n": WRITES + 1}


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_reader_shared_by_threads_still_stops_for_destroy(storage: str) -> None:
    depot = make_depot()
    inst = depot.instance(storage=storage)  # type: ignore[arg-type]
    reader = inst.inspect()
    outcomes: list[Any] = []
    start = threading.Barrier(3)

    def read() -> None:
        start.wait()
        try:
            for _ in range(10_000):
                reader.one("SELECT count(*) AS n FROM boxes")
        except seahaven.WorldBug as error:
            outcomes.append(str(error))
        except BaseException as error:
            outcomes.append(error)
        else:
            outcomes.append("finished")

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    start.wait()
    inst.destroy()
    for thread in threads:
        thread.join(JOIN_SECONDS)
    assert not any(thread.is_alive() for thread in threads), "a reader is stuck"
    # A reader either finished before the destroy reached it, or was told the instance went.
    for outcome in outcomes:
        assert outcome == "finished" or (isinstance(outcome, str) and "destroyed" in outcome), (
            outcome
        )
