"""Images of stores in memory: loaded with room to grow, and read back without it.

SQLite's in-memory database holds exactly the image ``Connection.deserialize``
gives it, and the first page a write adds past it reallocates the whole buffer
at twice the size, copying the image again (half of the airline pack's
episodes add one to four pages to its 2.1 MB image). Zero bytes past the end of
an image whose header records its page count are no part of the database:
SQLite reads the count from the header, and writes its new pages there. So an
image the process loads again and again (a fixture's, a blank schema's) is
loaded with ``ROOM_BYTES`` of zeros after it, a padded copy made once per image
and kept. ``Connection.serialize()`` copies the buffer as it is, room and all;
``image_of`` reads back the database alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import apsw

__all__ = ["ROOM_BYTES", "image_of", "recorded_size", "with_room"]

ROOM_BYTES = 64 * 1024
"""The zeros a store in memory is loaded with after its image, to grow into."""

# The padded copies kept, by the identity of the image they copy (kept alive with them), least
# recently used first out past this many bytes. An image larger than this is loaded as it is.
_ROOMY_LIMIT = 64 * 1024 * 1024
_roomy: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()
_roomy_size = 0
_roomy_lock = threading.Lock()


def recorded_size(image: bytes) -> int | None:
    """The size ``image``'s header records, when SQLite trusts it; else ``None``.

    The header's page count (bytes 28 to 31) is trusted when the change counter it
    was written with (bytes 92 to 95) matches the file's (bytes 24 to 27).
    """
    if len(image) < 100 or image[24:28] != image[92:96]:
        return None
    page_size = int.from_bytes(image[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    return int.from_bytes(image[28:32], "big") * page_size or None


def with_room(image: bytes) -> bytes:
    """``image`` followed by ``ROOM_BYTES`` of zeros, made once per image and kept."""
    global _roomy_size
    key = id(image)
    with _roomy_lock:
        kept = _roomy.get(key)
        if kept is not None and kept[0] is image:
            _roomy.move_to_end(key)
            return kept[1]
    if len(image) + ROOM_BYTES > _ROOMY_LIMIT or recorded_size(image) != len(image):
        return image
    padded = image + bytes(ROOM_BYTES)
    with _roomy_lock:
        if key not in _roomy:
            _roomy[key] = (image, padded)
            _roomy_size += len(padded)
            while _roomy_size > _ROOMY_LIMIT:
                _, (_, dropped) = _roomy.popitem(last=False)
                _roomy_size -= len(dropped)
    return padded


def image_of(conn: apsw.Connection) -> bytes:
    """The image of ``conn``'s main database, without the room it may have been loaded with."""
    image = conn.serialize("main")
    size = recorded_size(image)
    return image[:size] if size is not None and size < len(image) else image
