"""The state-document cases of ``run.py``: the whole document and its JSON text, on a warm
instance and on a fresh one (the first read), and ``seahaven.state+last_step/1``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import apsw
from harness import (
    MEMOS_SCHEMA,
    NOW,
    Result,
    alternate,
    bare_connection,
    memo_world,
    scratch_directory,
)

import seahaven
import seahaven.fixtures

STATE_RECORDS = 2000


def _state_instances(scratch: Path) -> tuple[seahaven.Instance, apsw.Connection]:
    """An instance whose change log holds 2,000 records, and a bare file with the same rows."""
    world = memo_world(scratch)
    inst = world.instance(now=NOW, clock_mode="fixed")
    for key in range(1, STATE_RECORDS + 1):
        inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
    assert len(inst.change_log()) == STATE_RECORDS
    bare = bare_connection(scratch / "bare.sqlite")
    bare.execute(MEMOS_SCHEMA)
    bare.execute("BEGIN")
    bare.executemany(
        "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
        [(key, "a short memo", f"t{key}") for key in range(1, STATE_RECORDS + 1)],
    )
    bare.execute("COMMIT")
    return inst, bare


def _bare_rows(bare: apsw.Connection) -> list[dict[str, object]]:
    cursor = bare.execute("SELECT id, gist, tag FROM memos ORDER BY id")
    names = [column[0] for column in cursor.get_description()]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def case_state_document(count: int, rounds: int) -> Result:
    """``inst.state()`` over 2,000 records, against reading the same rows out as dicts."""
    with scratch_directory() as scratch:
        inst, bare = _state_instances(scratch)
        framework_us, bare_us = alternate(
            lambda _: inst.state(), lambda _: _bare_rows(bare), count=count, rounds=rounds
        )
        inst.destroy()
        bare.close()
    return Result("state() over 2,000 records", framework_us, bare_us, "<= 1.0 ms")


def case_state_json(count: int, rounds: int) -> Result:
    """``inst.state_json()`` over 2,000 records, against reading the rows and encoding them."""
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with scratch_directory() as scratch:
        inst, bare = _state_instances(scratch)
        framework_us, bare_us = alternate(
            lambda _: inst.state_json(),
            lambda _: encode(_bare_rows(bare)),
            count=count,
            rounds=rounds,
        )
        inst.destroy()
        bare.close()
    return Result("state_json() over 2,000 records", framework_us, bare_us, "<= 1.0 ms")


def _fresh_episode(scratch: Path, records: int) -> seahaven.Instance:
    """A new instance whose change log holds ``records`` records, one call each."""
    world = memo_world(scratch)
    inst = world.instance(now=NOW, clock_mode="fixed")
    for key in range(1, records + 1):
        inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
    return inst


def _fresh_bare(scratch: Path, index: int) -> apsw.Connection:
    bare = bare_connection(scratch / f"bare-{index}.sqlite")
    bare.execute(MEMOS_SCHEMA)
    for key in range(1, STATE_RECORDS + 1):
        bare.execute("BEGIN")
        bare.execute(
            "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)", (key, "a short memo", f"t{key}")
        )
        bare.execute("COMMIT")
    return bare


def _first_read(
    read: Callable[[seahaven.Instance], object], count: int, rounds: int
) -> tuple[float, float]:
    """Median of the first ``read`` of fresh 2,000-record episodes, and of the first bare read.

    The collector stays on, as in a harness: the first read of an episode is
    the one a harness makes, and what it allocates is what the collector walks.
    """
    framework_times: list[float] = []
    bare_times: list[float] = []
    with scratch_directory() as scratch:
        for index in range(max(count, rounds)):
            inst = _fresh_episode(scratch, STATE_RECORDS)
            start = time.perf_counter()
            read(inst)
            framework_times.append((time.perf_counter() - start) * 1e6)
            inst.destroy()
            bare = _fresh_bare(scratch, index)
            start = time.perf_counter()
            _bare_rows(bare)
            bare_times.append((time.perf_counter() - start) * 1e6)
            bare.close()
    return statistics.median(framework_times), statistics.median(bare_times)


def case_first_state(count: int, rounds: int) -> Result:
    """The first ``state()`` of fresh 2,000-record episodes, against reading the rows as dicts."""
    framework_us, bare_us = _first_read(lambda inst: inst.state(), count, rounds)
    return Result("first state() of a 2,000-record episode", framework_us, bare_us, ">= 1.0")


def case_first_state_json(count: int, rounds: int) -> Result:
    """The first ``state_json()`` of fresh 2,000-record episodes, against the rows as dicts."""
    framework_us, bare_us = _first_read(lambda inst: inst.state_json(), count, rounds)
    return Result("first state_json() of a 2,000-record episode", framework_us, bare_us, ">= 4.0")


LAST_STEP = "seahaven.state+last_step/1"


def case_last_step(count: int, rounds: int) -> Result:
    """``state_json`` and ``state`` in the last-step format: 10,000 records against 10.

    The "bare" column is the 10-record log, so the ratio is 1.0 when the read
    costs the same whatever the log's length.
    """
    with scratch_directory() as scratch:
        long_log = _fresh_episode(scratch, 10_000)
        short_log = _fresh_episode(scratch, 10)

        def read(inst: seahaven.Instance) -> Callable[[int], object]:
            return lambda _: (inst.state_json(LAST_STEP), inst.state(LAST_STEP))

        framework_us, bare_us = alternate(
            read(long_log), read(short_log), count=count, rounds=rounds
        )
        long_log.destroy()
        short_log.destroy()
    return Result(
        "state+last_step: 10,000 records (bare: 10)",
        framework_us,
        bare_us,
        "~1.0 (flat)",
    )
