"""Where instance directories live, and the sweep of dead processes' leftovers.

By default every process keeps its instances under
``<temp>/seahaven-<uid>/<world name>/<pid>-<start>/``. The first time a process
makes an instance of a world, it removes the directories of processes that no
longer run. A ``work_dir`` the world names is used exactly as given and never
swept.

What an instance holds is the agent's and the eval's business alone, so every
directory made here is ``0700`` and every file ``0600``. Each directory of the
default path is checked before it is used: one that is a link, is not a
directory, belongs to another user, or that others may write is refused with a
``WorldBug``, since whoever controls it could read or swap what an instance
keeps there. One of ours that others may only read (made by an older release)
is narrowed to ``0700``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from seahaven.errors import WorldBug

__all__ = [
    "DIRECTORY_MODE",
    "FILE_MODE",
    "instance_directory",
    "mark_is_live",
    "open_new_file",
    "owner_of",
    "process_mark",
    "remove_directory",
    "write_new_file",
]

# Only the owner may list, read or write what an instance keeps.
DIRECTORY_MODE = 0o700
FILE_MODE = 0o600

_swept: set[Path] = set()
# Not inherited by child processes, and (on Windows) written as bytes.
_EXTRA_OPEN_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_lock = threading.Lock()


def _start_token(pid: int) -> str:
    """The process's start time where the platform tells it, so a reused pid is not mistaken."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return "0"


def _alive(pid: int, token: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return _start_token(pid) == token


_own_name: tuple[int, str] | None = None


def process_mark() -> str:
    """``<pid>-<start>``: names this process among every process the machine has ever run."""
    global _own_name
    pid = os.getpid()
    # Remembered per pid, so a forked child still names a directory of its own.
    if _own_name is None or _own_name[0] != pid:
        _own_name = (pid, f"{pid}-{_start_token(pid)}")
    return _own_name[1]


def mark_is_live(mark: str) -> bool | None:
    """Whether the process a ``process_mark()`` names still runs; ``None`` if it is not a mark."""
    pid_text, separator, token = mark.partition("-")
    if not pid_text.isdigit() or not separator or not token:
        return None
    return _alive(int(pid_text), token)


def _sweep(parent: Path) -> None:
    mine = process_mark()
    for entry in parent.iterdir():
        if entry.name == mine or not entry.is_dir():
            continue
        if mark_is_live(entry.name) is False:
            shutil.rmtree(entry, ignore_errors=True)


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def owner_of(status: os.stat_result) -> int:
    """The uid owning a file, as ``lstat`` reports it; the seam the ownership tests replace."""
    return status.st_uid


def _private_directory(directory: Path) -> None:
    """Make ``directory`` (0700) or check one that is there; refuse one someone else controls."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=DIRECTORY_MODE)
    uid = _uid()
    if uid is None:  # no owners to compare on this platform
        return
    status = directory.lstat()
    problem = None
    if stat.S_ISLNK(status.st_mode):
        problem = "is a symbolic link"
    elif not stat.S_ISDIR(status.st_mode):
        problem = "is not a directory"
    elif owner_of(status) != uid:
        problem = f"belongs to uid {owner_of(status)}, not to this process's uid {uid}"
    elif status.st_mode & 0o022:
        problem = f"may be written by other users (mode {stat.S_IMODE(status.st_mode):o})"
    if problem is not None:
        raise WorldBug(
            f"the instance directory {directory} {problem}, so another user could read or "
            f"replace what instances keep there; remove it (or run chmod 700 {directory} if it is "
            "yours), or point TMPDIR at a directory of your own"
        )
    if status.st_mode & 0o077:
        # Ours, but readable by others: made before instances were kept private.
        directory.chmod(DIRECTORY_MODE)


def _default_parent(world_name: str) -> Path:
    uid = _uid()
    return (
        Path(tempfile.gettempdir()) / f"seahaven-{uid if uid is not None else 'user'}" / world_name
    )


def instance_directory(world_name: str, work_dir: Path | None, instance_id: str) -> Path:
    """Create and return a fresh directory (0700) for one instance.

    Under the default location, each directory on the way is made private or
    checked (``WorldBug`` for one another user controls); a world's own
    ``work_dir`` is made if missing and otherwise used as it is.
    """
    if work_dir is not None:
        directory = work_dir / instance_id
    else:
        parent = _default_parent(world_name)
        with _lock:
            if parent not in _swept:
                _private_directory(parent.parent)
                _private_directory(parent)
                _sweep(parent)
                _private_directory(parent / process_mark())
                _swept.add(parent)
        directory = parent / process_mark() / instance_id
    try:
        directory.mkdir(mode=DIRECTORY_MODE)
    except FileNotFoundError:
        # The first instance here: make the directories above it, once.
        if work_dir is not None:
            directory.parent.mkdir(parents=True, exist_ok=True, mode=DIRECTORY_MODE)
        else:
            # Removed since it was checked (a sweep by another process cannot, it is live).
            _private_directory(directory.parent)
        directory.mkdir(mode=DIRECTORY_MODE)
    return directory


def remove_directory(directory: Path, names: Iterable[str] = ()) -> None:
    """Remove an instance directory and everything in it; a missing one is fine.

    ``names`` are the files the caller expects inside: they are unlinked and the
    directory removed directly, which is all an instance usually leaves. Only
    when something else is there does the removal walk the tree. Nothing is
    synced: an instance directory need not survive a crash. An interrupt that
    lands part way (a Ctrl-C, a worker told to stop) is raised once the rest is
    removed: nothing else would remove it.
    """
    try:
        for name in names:
            try:
                os.unlink(directory / name)
            except FileNotFoundError:
                pass
            except OSError:
                break
        try:
            os.rmdir(directory)
            return
        except FileNotFoundError:
            return
        except OSError:
            pass
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    shutil.rmtree(directory, ignore_errors=True)


def open_new_file(target: Path) -> int:
    """Create ``target`` for writing, readable by its owner only; it must not exist yet."""
    return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _EXTRA_OPEN_FLAGS, FILE_MODE)


def write_new_file(target: Path, data: bytes) -> None:
    """Create ``target`` (0600), which must not exist yet, holding ``data``; nothing is synced."""
    descriptor = open_new_file(target)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)
