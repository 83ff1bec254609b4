"""Images of stores in memory: loaded with room to grow, and read back without it.

SQLite's in-memory database holds exactly the image ``Connection.deserialize``
gives it, and the first page a write adds past it reallocates the whole buffer
at twice the size, copying the image again (half of the airline pack's
episodes add one to four pages to its 2.1 MB image). Zero bytes past the end of
an image whose header records its page count are no part of the database:
SQLite reads the count from the header, and writes its new pages there. So an
image the process loads again and again (a fixture's, a blank schema's) is
loaded with zeros after it (``room_for``: a sixteenth of it, at most
``ROOM_BYTES``, in whole pages), a padded copy made once per image and kept.
``Connection.serialize()`` copies the buffer as it is, room and all; ``image_of``
reads back the database alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import apsw

__all__ = ["ROOM_BYTES", "image_of", "recorded_size", "room_for", "with_room"]

ROOM_BYTES = 64 * 1024
"""The most zeros a store in memory is loaded with after its image, to grow into."""

# The room is at most this share of the image: copying a small image again costs little, and
# an idle instance in memory (16,384 of them, served at once) holds at most a sixteenth more.
_ROOM_SHARE = 16

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
    return int.from_bytes(image[28:32], "big") * _page_size(image) or None


def _page_size(image: bytes) -> int:
    # Bytes 16 and 17 of the header; the value 1 stands for 65,536.
    size = int.from_bytes(image[16:18], "big")
    return 65536 if size == 1 else size


def room_for(image: bytes) -> int:
    """The zeros ``image`` is loaded with: a sixteenth of it, at most ``ROOM_BYTES``, whole pages.

    Nothing for an image whose header does not record its size: SQLite would count the
    zeros as pages of the database.
    """
    if recorded_size(image) != len(image):
        return 0
    room = min(ROOM_BYTES, len(image) // _ROOM_SHARE)
    return room - room % _page_size(image)


def with_room(image: bytes) -> bytes:
    """``image`` followed by ``room_for(image)`` zeros, made once per image and kept."""
    global _roomy_size
    key = id(image)
    with _roomy_lock:
        kept = _roomy.get(key)
        if kept is not None and kept[0] is image:
            _roomy.move_to_end(key)
            return kept[1]
    room = room_for(image)
    if room == 0 or len(image) + room > _ROOMY_LIMIT:
        return image
    padded = image + bytes(room)
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
