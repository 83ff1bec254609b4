"""The memory cases of ``run.py``: what one idle instance holds, of one store and of four,
as the process's resident size and as what Python allocated.
"""

from __future__ import annotations

import gc
import os
import shutil
import tracemalloc

import apsw
from harness import (
    Result,
    bare_connection,
    scratch_directory,
)

import seahaven
import seahaven.fixtures


def _resident_kib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def _held_kib() -> float:
    """What the process holds: Python's allocations and SQLite's, in KiB."""
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] + apsw.memory_used()) / 1024


def _memory_case(label: str, world: seahaven.World, fixture: str, count: int) -> Result:
    """KiB one idle instance holds (made from ``fixture``, startup run), against bare apsw.

    The bare side opens the same stores the same way (copies of the fixture's
    files, one connection each, the schema read) and holds them open.
    """
    world.instance(fixture).destroy()  # hashing, the sidecar and imports happen once
    tracemalloc.start()
    try:
        before = _held_kib()
        resident = _resident_kib()
        instances = [world.instance(fixture, seed=index) for index in range(count)]
        framework_kib = (_held_kib() - before) / count
        resident_kib = (_resident_kib() - resident) / count
        for inst in instances:
            inst.destroy()
        del instances
        files = [
            path
            for path, _ in seahaven.fixtures.load_all(world.fixtures_dir)[fixture].files().values()
        ]
        with scratch_directory() as scratch:
            before = _held_kib()
            conns = []
            for index in range(count):
                directory = scratch / str(index)
                directory.mkdir()
                for path in files:
                    shutil.copyfile(path, directory / path.name)
                    conn = bare_connection(directory / path.name)
                    conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
                    conns.append(conn)
            bare_kib = (_held_kib() - before) / count
            for conn in conns:
                conn.close()
    finally:
        tracemalloc.stop()
    return Result(
        label,
        framework_kib,
        bare_kib,
        "1,000 in < 1 GiB",
        note=f"resident {resident_kib:.0f} KiB an instance",
        unit="KiB",
    )


def case_memory_one_store(count: int, rounds: int) -> Result:
    """Memory per idle payments instance (one store, from small_shop)."""
    import payments_world

    return _memory_case(
        "memory per idle instance, 1 store (payments)", payments_world.world, "small_shop", count
    )


def case_memory_four_stores(count: int, rounds: int) -> Result:
    """Memory per idle company instance (four stores, from acme)."""
    import company_world

    return _memory_case(
        "memory per idle instance, 4 stores (company)", company_world.world, "acme", count
    )
