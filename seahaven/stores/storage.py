"""Where an instance keeps its stores: files in a directory ("disk") or in memory ("memory").

A memory instance's stores are SQLite in-memory databases, each loaded in one
step (``Connection.deserialize``) from an image held in this process: a
fixture file's bytes, read once, or a blank schema's image
(``seahaven.schema.blank_image``). Nothing is written to disk and nothing is
left to remove. Fixture images live in a cache bounded in bytes, least
recently used first out, keyed by the file's ``file_sha256``, which the bytes
are checked against when they are read: a fixture file changed since it was
cached has another hash, so it is never served from an older image.

Where an instance goes when its maker names no storage depends on who holds
it, and this module is the one place that says so. A plain ``world.instance()``
is held by its caller, who may open its files, so it gets the seed's files on
disk (``INSTANCE_STORAGE``). An instance a runner makes for itself and hands to
nobody (a trial, an eval's, an episode's, a served session's, ``seahaven
mcp``'s) is in memory (``RUNNER_STORAGE``), where its speed shows and its files
would not. ``SEAHAVEN_STORAGE`` (``memory`` or ``disk``) sets both for the
process, which is how a test run is pointed at one mode.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Literal

from seahaven.errors import WorldBug

__all__ = [
    "DEFAULT_STORAGE",
    "INSTANCE_STORAGE",
    "RUNNER_STORAGE",
    "STORAGES",
    "STORAGE_VARIABLE",
    "Storage",
    "cached_image_bytes",
    "check_storage",
    "default_storage",
    "fixture_image",
    "rollback_image",
    "runner_storage",
    "set_image_cache_limit",
]

Storage = Literal["memory", "disk"]
"""Where an instance's stores live: in this process's memory, or in files of its own."""

STORAGES: tuple[str, ...] = ("memory", "disk")
"""Every storage an instance can have."""

INSTANCE_STORAGE: Storage = "disk"
"""Where ``world.instance()`` keeps its stores when neither it nor ``SEAHAVEN_STORAGE`` names one:
the seed's files, one per node in one instance directory, for the caller who holds the instance."""

RUNNER_STORAGE: Storage = "memory"
"""Where an instance a runner makes for itself keeps its stores when neither the runner's caller
nor ``SEAHAVEN_STORAGE`` names one: memory, since nobody outside the runner opens its files."""

DEFAULT_STORAGE: Storage = INSTANCE_STORAGE
"""The storage a plain ``world.instance()`` gets by default (``INSTANCE_STORAGE``)."""

STORAGE_VARIABLE = "SEAHAVEN_STORAGE"
"""The environment variable naming the default storage (`memory` or `disk`)."""

# SQLite's header says at bytes 18 and 19 which journal a file was written with:
# 2 for the write-ahead log, 1 for a rollback journal. An in-memory database has
# no write-ahead log, and refuses an image that asks for one.
_ROLLBACK_VERSIONS = b"\x01\x01"


def default_storage(*, runner: bool = False) -> Storage:
    """The storage for an instance whose maker named none: ``SEAHAVEN_STORAGE``, else the default.

    The default is ``RUNNER_STORAGE`` (memory) for an instance a runner makes for
    itself (``runner=True``), and ``INSTANCE_STORAGE`` (disk) for one a caller holds.
    """
    value = os.environ.get(STORAGE_VARIABLE)
    if value is None or value == "":
        return RUNNER_STORAGE if runner else INSTANCE_STORAGE
    if value not in STORAGES:
        raise WorldBug(
            f"{STORAGE_VARIABLE}={value!r} is not a storage; "
            "set it to 'memory' or 'disk', or unset it"
        )
    return "memory" if value == "memory" else "disk"


def check_storage(storage: object, *, runner: bool = False) -> Storage:
    """``storage`` checked, or ``default_storage(runner=runner)`` when it is ``None``."""
    if storage is None:
        return default_storage(runner=runner)
    if storage == "memory":
        return "memory"
    if storage == "disk":
        return "disk"
    raise WorldBug(f"storage must be 'memory' or 'disk' (or None for the default), not {storage!r}")


def runner_storage(storage: object = None) -> Storage:
    """Where an instance a runner makes for itself goes: ``storage`` checked, else its default.

    Every runner that owns its instances (``Trial``, ``run_episode``,
    ``seahaven serve``'s sessions, ``seahaven.http``, ``seahaven mcp``) calls this
    with what its caller asked for, ``None`` when nothing: ``SEAHAVEN_STORAGE``,
    else ``RUNNER_STORAGE``.
    """
    return check_storage(storage, runner=True)


def rollback_image(data: bytes) -> bytes:
    """``data``, a database image, marked for a rollback journal so it can be loaded in memory."""
    if len(data) >= 20 and data[18:20] != _ROLLBACK_VERSIONS:
        return data[:18] + _ROLLBACK_VERSIONS + data[20:]
    return data


class _ImageCache:
    """Fixture images by ``file_sha256``, least recently used first out past ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._images: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            image = self._images.get(key)
            if image is not None:
                self._images.move_to_end(key)
            return image

    def put(self, key: str, image: bytes) -> None:
        with self._lock:
            if key in self._images:
                return
            if len(image) > self.limit:
                # Larger than the whole cache: used for this instance, kept for none.
                return
            self._images[key] = image
            self.size += len(image)
            self._trim()

    def _trim(self) -> None:
        while self.size > self.limit and self._images:
            _, dropped = self._images.popitem(last=False)
            self.size -= len(dropped)

    def resize(self, limit: int) -> None:
        with self._lock:
            self.limit = limit
            self._trim()

    def total(self) -> int:
        with self._lock:
            return self.size


_DEFAULT_LIMIT = 256 * 1024 * 1024
_cache = _ImageCache(_DEFAULT_LIMIT)


def set_image_cache_limit(limit_bytes: int) -> None:
    """Bound the fixture image cache of this process to ``limit_bytes`` (256 MiB unless set)."""
    if not isinstance(limit_bytes, int) or isinstance(limit_bytes, bool) or limit_bytes < 0:
        raise WorldBug("the image cache limit is a whole number of bytes, 0 or more")
    _cache.resize(limit_bytes)


def cached_image_bytes() -> int:
    """How many bytes of fixture images this process holds now."""
    return _cache.total()


def fixture_image(file: Path, file_sha256: str) -> bytes:
    """The image of a verified fixture file, from the cache or read (and checked) now.

    The bytes read are hashed against ``file_sha256`` before they are kept, so
    what the cache serves is what the fixture's sidecar promises, whatever
    happened to the file between its verification and this read.
    """
    image = _cache.get(file_sha256)
    if image is not None:
        return image
    try:
        data = file.read_bytes()
    except OSError as error:
        raise WorldBug(
            f"fixture file {file.name} could not be read ({error.strerror or error}); "
            "make it readable, or regenerate the fixture"
        ) from None
    if hashlib.sha256(data).hexdigest() != file_sha256:
        raise WorldBug(
            f"fixture file {file.name} changed while it was being read (it no longer matches "
            "its file_sha256); restore it, or freeze the fixture again"
        )
    image = rollback_image(data)
    _cache.put(file_sha256, image)
    return image
