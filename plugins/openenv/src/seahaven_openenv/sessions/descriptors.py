"""File descriptors: how many a session holds, how many the process may open, and running out.

Every open session holds its connection's socket and, for each store of its
instance, three files (the database, its write-ahead log and its shared-memory
index). At the 1024 open files many systems allow by default, a world of four
stores fits about 75 sessions, far fewer than the default capacity. So a server
raises its soft limit to the hard one where the system lets it, sizes its
default capacity from what it then has, and answers a reset that finds no
descriptor left as ``CAPACITY_REACHED`` rather than as an internal error.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

import seahaven

__all__ = [
    "DESCRIPTORS_PER_CONNECTION",
    "DESCRIPTORS_PER_STORE",
    "RESERVED_DESCRIPTORS",
    "exhausted",
    "open_descriptors",
    "per_session",
    "raise_soft_limit",
    "sessions_that_fit",
    "soft_limit",
]

# The database file, its write-ahead log and its shared-memory index.
DESCRIPTORS_PER_STORE = 3
# The session's own socket.
DESCRIPTORS_PER_CONNECTION = 1
# What the process holds besides its sessions (the listening socket, standard streams, imported
# modules' files, an eval reader, and the files a reset opens for a moment while it copies a
# fixture and runs setup_sql), kept free so the server never runs itself out.
RESERVED_DESCRIPTORS = 48
# The most a soft limit is raised to, where the hard limit is unlimited or vast.
_HIGHEST = 1 << 20
_OUT = frozenset({errno.EMFILE, errno.ENFILE})


def soft_limit() -> int | None:
    """This process's soft limit on open files, or ``None`` where it is unknown or unlimited."""
    try:
        import resource
    except ImportError:  # not a Unix
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_soft_limit() -> int | None:
    """Raise the soft limit on open files as far as the hard limit allows; answer the new one.

    Some systems refuse a soft limit as high as their hard one (macOS caps it
    below an unlimited hard limit), so lower steps are tried before giving up
    and keeping the limit as it was.
    """
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = _HIGHEST if hard == resource.RLIM_INFINITY else min(hard, _HIGHEST)
    for target in (ceiling, 65536, 10240):
        if soft != resource.RLIM_INFINITY and soft < target <= ceiling:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            except (ValueError, OSError):
                continue
            break
    return soft_limit()


def per_session(worlds: Sequence[seahaven.World]) -> int:
    """The descriptors one session of the largest of ``worlds`` holds while it has an instance."""
    stores = max(len(world.composition().nodes) for world in worlds)
    return stores * DESCRIPTORS_PER_STORE + DESCRIPTORS_PER_CONNECTION


def sessions_that_fit(limit: int, each: int) -> int:
    """How many sessions of ``each`` descriptors fit under ``limit``, keeping the reserve free."""
    return max(1, (limit - RESERVED_DESCRIPTORS) // each)


def open_descriptors() -> int | None:
    """How many descriptors this process holds, where the system lists them (Linux, macOS)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(listing))
        except FileNotFoundError:
            continue
        except OSError as error:
            if error.errno in _OUT:
                return soft_limit()
            raise
    return None


def exhausted(error: BaseException, *, needed: int) -> bool:
    """Whether ``error`` is the process running out of descriptors.

    It is when ``error``, or one it arose from, is ``EMFILE`` or ``ENFILE``, and
    when fewer than ``needed`` (what one more session takes) are left: SQLite's
    "unable to open" says no more than that, and by the time it is caught the
    failed reset has closed what it had opened.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _OUT:
            return True
        current = current.__cause__ or current.__context__
    limit, held = soft_limit(), open_descriptors()
    return limit is not None and held is not None and limit - held < needed
