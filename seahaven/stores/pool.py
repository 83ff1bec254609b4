"""Connections kept between stores of one image, so the next store skips SQLite's setup.

A new connection to a fixture's image pays, before its first call returns, for
copying the image in, parsing the schema, preparing every statement the calls
run, and, at the end, for closing: about half of what a short episode costs on
a multi-megabyte fixture. A store in memory loaded from an image this process
loads again and again runs inside an episode (``seahaven.stores.transactions``);
when it closes with the episode intact, the episode is rolled back, which leaves
the connection holding that image exactly, and the connection waits here for
the next store of the same image and world.

What is kept is bounded: ``PER_IMAGE`` idle connections an image, and
``LIMIT_BYTES`` of images in all, the least recently used going first. A process
that forks drops what it inherited (``os.register_at_fork``); ``clear()``
closes everything kept (tests, a server shutting down).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from typing import Any

import apsw

from seahaven.stores.capture import Capture
from seahaven.stores.clock import Clock, rebind_clock
from seahaven.stores.db import is_closing, open_connection, use_memory_store_journal
from seahaven.stores.ids import sql_random
from seahaven.stores.images import with_room
from seahaven.stores.transactions import StoreConnection, end_episode, start_episode

__all__ = [
    "LIMIT_BYTES",
    "PER_IMAGE",
    "begin_kept",
    "clear",
    "hand_back",
    "idle",
    "open_kept",
]

# Idle connections kept for one image and world: enough for the stores a few threads
# destroy and make again at once; beyond that a connection closes as it used to.
PER_IMAGE = 4
# Bytes of images held by idle connections, at most (each holds its image and some room).
LIMIT_BYTES = 64 * 1024 * 1024

_Entry = tuple[bytes, Any, list[apsw.Connection]]

_lock = threading.Lock()
# (id(image), id(world)) -> (image, world, idle connections): the image and world are held so
# their ids stay theirs while the key is here.
_kept: OrderedDict[tuple[int, int], _Entry] = OrderedDict()
_bytes = 0


def _take(image: bytes, world: Any) -> apsw.Connection | None:
    """An idle connection holding ``image`` for a store of ``world``, or ``None``."""
    key = (id(image), id(world))
    with _lock:
        entry = _kept.get(key)
        if entry is None or entry[0] is not image:
            return None
        conn = entry[2].pop()
        _forget(key, entry, len(image))
        return conn


def _forget(key: tuple[int, int], entry: _Entry, size: int) -> None:
    global _bytes
    _bytes -= size
    if not entry[2]:
        del _kept[key]


def _give(image: bytes, world: Any, conn: apsw.Connection) -> bool:
    """Keep ``conn`` (holding ``image`` exactly, nothing open) for the next store; or refuse."""
    global _bytes
    size = len(image)
    if size > LIMIT_BYTES:
        return False
    key = (id(image), id(world))
    dropped: list[apsw.Connection] = []
    with _lock:
        entry = _kept.get(key)
        if entry is not None and entry[0] is not image:
            return False
        if entry is None:
            entry = _kept[key] = (image, world, [])
        elif len(entry[2]) >= PER_IMAGE:
            return False
        entry[2].append(conn)
        _kept.move_to_end(key)
        _bytes += size
        while _bytes > LIMIT_BYTES and _kept:
            oldest_key, oldest = next(iter(_kept.items()))
            dropped.append(oldest[2].pop(0))
            _forget(oldest_key, oldest, len(oldest[0]))
    for old in dropped:
        with contextlib.suppress(apsw.Error):
            old.close()
    return conn not in dropped


def open_kept(
    image: bytes, world: Any, *, clock: Clock, seed: bytes
) -> tuple[apsw.Connection, Capture | None]:
    """A connection holding ``image`` for a store of ``world``: a kept one, or a new one.

    A kept one has its journal set up and comes with the change capture it had,
    and gets ``clock`` and the random stream of ``seed`` now; a new one is set up
    as any store's in memory. The caller adds it to its instance, then calls
    ``begin_kept``.
    """
    conn = _take(image, world)
    if conn is not None:
        try:
            rebind_clock(conn, clock)
            sql_random(conn, seed, "main")
        except BaseException:
            conn.close()
            raise
        capture: Capture | None = conn.kept[2]  # type: ignore[attr-defined]
        return conn, capture
    conn = open_connection(":memory:", clock=clock, seed=seed, purpose="main", defer_journal=True)
    try:
        conn.deserialize("main", with_room(image))
        use_memory_store_journal(conn)
    except BaseException:
        conn.close()
        raise
    return conn, None


def begin_kept(conn: apsw.Connection, image: bytes, world: Any, capture: Capture) -> None:
    """Start ``conn``'s episode, noting what the pool needs to keep it when its store closes."""
    start_episode(conn)
    conn.kept = (image, world, capture)  # type: ignore[attr-defined]


def hand_back(conn: apsw.Connection, capture: Capture) -> bool:
    """Keep ``conn`` for the next store if its episode rolls back whole; whether it was kept.

    Not when anything might outlive the store on it: a call still running (a
    ``destroy()`` stopping it), an authorizer or tracer someone set, an episode
    settled or lost. The caller closes a connection not kept.
    """
    if type(conn) is not StoreConnection or conn.kept is None:
        return False
    kept, conn.kept = conn.kept, None
    if not conn.episode or is_closing(conn) or not _idle_ready(conn):
        return False
    try:
        if not end_episode(conn):
            return False
    except apsw.Error:
        return False
    capture.stop()
    capture.keep_layouts_of(conn)
    rebind_clock(conn, None)
    sql_random(conn, None, "main")
    conn.kept = kept
    if _give(kept[0], kept[1], conn):
        return True
    conn.kept = None
    return False


def _idle_ready(conn: apsw.Connection) -> bool:
    """Whether nothing a store set on ``conn`` outlives it, so another store may have it."""
    try:
        return conn.authorizer is None and conn.exec_trace is None and conn.row_trace is None
    except apsw.Error:
        return False


def idle() -> int:
    """How many connections wait here now."""
    with _lock:
        return sum(len(entry[2]) for entry in _kept.values())


def clear() -> None:
    """Close every connection kept."""
    global _bytes
    with _lock:
        conns = [conn for entry in _kept.values() for conn in entry[2]]
        _kept.clear()
        _bytes = 0
    for conn in conns:
        with contextlib.suppress(apsw.Error):
            conn.close()


def _drop_inherited() -> None:
    # A child of fork() must not hand its parent's connections out (nor wait on a lock another
    # thread of the parent held at the fork): it forgets them, and frees its copies of them.
    global _bytes, _lock
    _lock = threading.Lock()
    _kept.clear()
    _bytes = 0


os.register_at_fork(after_in_child=_drop_inherited)
