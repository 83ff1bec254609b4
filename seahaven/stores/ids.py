"""Seeds, the seeded id stream, and SQL's ``random()`` and ``randomblob()``.

An instance derives one seed from the fixture id (or the world name) and the
caller's ``seed=``. Each node draws from a stream salted with its canonical path,
the root's being the instance seed untouched, and each connection's SQL draws
from a stream of its own, so no two doors hand out the same values.
"""

from __future__ import annotations

import functools
import hashlib
import random
import uuid
import weakref

import apsw

from seahaven.errors import WorldBug

__all__ = ["Ids", "check_seed", "derive_seed", "node_seed", "sql_random", "sql_stream"]

_SEED_DOMAIN = b"seahaven.seed/1\x00"
# The most bytes one draw from the stream makes for randomblob().
_BLOB_CHUNK = 1 << 24
_MAX_SEED = 2**64


class _LazyStream:
    """A seeded ``random.Random`` made the first time something draws from it.

    Seeding a Mersenne Twister costs as much as a small query, and most
    instances never draw: the stream is what it would have been, made later.
    The seed is the integer ``material``, or the SHA-256 of ``material`` bytes
    (hashed on first use too).
    """

    __slots__ = ("_material", "_stream")

    def __init__(self, material: int | bytes) -> None:
        self._material = material
        self._stream: random.Random | None = None

    def get(self) -> random.Random:
        """The stream, seeded now if nothing drew from it before."""
        stream = self._stream
        if stream is None:
            material = self._material
            if isinstance(material, bytes):
                material = int.from_bytes(hashlib.sha256(material).digest(), "big")
            stream = self._stream = random.Random(material)
        return stream


def check_seed(seed: object) -> int | None:
    """Return the caller's seed if it is ``None`` or an integer that fits in 8 unsigned bytes."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise WorldBug(f"seed must be an integer or None, not {type(seed).__name__}")
    if seed < 0:
        raise WorldBug(f"seed {seed} is negative; a seed is an integer from 0 to 2**64 - 1")
    if seed >= _MAX_SEED:
        raise WorldBug(f"seed {seed} does not fit in 8 bytes; use an integer below 2**64")
    return seed


@functools.lru_cache(maxsize=1024)
def derive_seed(base: str, seed: int | None) -> bytes:
    """The instance seed: the fixture id (or world name) and the caller's seed, hashed."""
    material = _SEED_DOMAIN + base.encode("utf-8") + b"\x00"
    if seed is not None:
        material += seed.to_bytes(8, "big")
    return hashlib.sha256(material).digest()


def node_seed(instance_seed: bytes, path: str) -> bytes:
    """A node's seed: the instance seed for the root, salted with the path for the rest."""
    if path == "main":
        return instance_seed
    return hashlib.sha256(instance_seed + b"\x00node\x00" + path.encode("utf-8")).digest()


def _stream(seed: bytes, purpose: str) -> _LazyStream:
    return _LazyStream(seed + purpose.encode())


class Ids:
    """The seeded stream world code draws identifiers and random choices from."""

    __slots__ = ("_stream",)

    def __init__(self, seed: bytes) -> None:
        # Seeded on first use: most calls draw nothing, and the stream is the same either way.
        self._stream = _LazyStream(int.from_bytes(seed, "big"))

    @property
    def random(self) -> random.Random:
        """The seeded ``random.Random`` itself, for any draw other than an id."""
        return self._stream.get()

    def uuid(self) -> str:
        """A UUIDv4-shaped identifier drawn from the seeded stream."""
        return str(uuid.UUID(int=self._stream.get().getrandbits(128), version=4))

    def __repr__(self) -> str:
        return "Ids(<seeded>)"


class _SqlSource:
    """The stream ``random()`` and ``randomblob()`` of one connection draw from, replaceable."""

    __slots__ = ("__weakref__", "lazy")

    def __init__(self, lazy: _LazyStream | None) -> None:
        self.lazy = lazy


# Each connection's source, once its functions are registered: a snapshot saves where its stream
# is and a restore goes on from there, and a kept connection gets each new store's stream by
# replacing the source's, since registering the functions again would make SQLite prepare every
# cached statement anew. Weak, so a closed and dropped connection takes its source with it.
_sql_sources: weakref.WeakKeyDictionary[apsw.Connection, _SqlSource] = weakref.WeakKeyDictionary()


def sql_random(conn: apsw.Connection, seed: bytes | None, purpose: str) -> None:
    """Override ``random()`` and ``randomblob()`` on ``conn`` with a stream of its own.

    Called again on the same connection it replaces the stream; ``seed`` ``None``
    lets go of it (a kept connection between stores).
    """
    lazy = _stream(seed, "sql:" + purpose) if seed is not None else None
    source = _sql_sources.get(conn)
    if source is not None:
        source.lazy = lazy
        return
    source = _sql_sources[conn] = _SqlSource(lazy)

    def draw() -> random.Random:
        current = source.lazy
        if current is None:
            raise apsw.MisuseError("random() on a connection no store holds")
        return current.get()

    def sql_random_value() -> int:
        return draw().getrandbits(64) - 2**63

    def randbytes(count: int) -> bytes:
        return draw().randbytes(count)

    def sql_randomblob(size: object) -> bytes:
        count = size if isinstance(size, int) else 1
        if count < 1:
            return randbytes(1)
        # SQLite's own randomblob() refuses what the connection's length limit
        # refuses; asking Python for the bytes first would exhaust memory or overflow.
        if count > conn.limit(apsw.SQLITE_LIMIT_LENGTH, -1):
            raise apsw.TooBigError("string or blob too big")
        if count <= _BLOB_CHUNK:
            return randbytes(count)
        # getrandbits takes at most 2**31 - 1 bits at a time.
        pieces = [randbytes(_BLOB_CHUNK) for _ in range(count // _BLOB_CHUNK)]
        pieces.append(randbytes(count % _BLOB_CHUNK))
        return b"".join(pieces)

    # Innocuous so that a DEFAULT or a trigger may call them; not deterministic,
    # so that SQLite asks for a fresh value every time.
    flags = apsw.SQLITE_INNOCUOUS
    # APSW's stubs want a function of any SQL values; these take the one arity they register.
    conn.create_scalar_function("random", sql_random_value, 0, flags=flags)  # type: ignore[arg-type]
    conn.create_scalar_function("randomblob", sql_randomblob, 1, flags=flags)  # type: ignore[arg-type]


def sql_stream(conn: apsw.Connection) -> random.Random | None:
    """The stream ``conn``'s SQL ``random()`` and ``randomblob()`` draw from, if any."""
    source = _sql_sources.get(conn)
    lazy = source.lazy if source is not None else None
    return lazy.get() if lazy is not None else None
