"""Where instance directories live, and the sweep of dead processes' leftovers.

By default every process keeps its instances under
``<temp>/seahaven-<uid>/<world name>/<pid>-<start>/``. The first time a process
makes an instance of a world, it removes the directories of processes that no
longer run. A ``work_dir`` the world names is used exactly as given and never
swept.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "instance_directory",
    "mark_is_live",
    "process_mark",
    "remove_directory",
    "write_new_file",
]

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


def _default_parent(world_name: str) -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"seahaven-{uid}" / world_name


def instance_directory(world_name: str, work_dir: Path | None, instance_id: str) -> Path:
    """Create and return a fresh directory for one instance."""
    if work_dir is not None:
        directory = work_dir / instance_id
    else:
        parent = _default_parent(world_name)
        with _lock:
            if parent not in _swept:
                parent.mkdir(parents=True, exist_ok=True)
                _sweep(parent)
                _swept.add(parent)
        directory = parent / process_mark() / instance_id
    try:
        directory.mkdir()
    except FileNotFoundError:
        # The first instance here: make the directories above it, once.
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir()
    return directory


def remove_directory(directory: Path, names: Iterable[str] = ()) -> None:
    """Remove an instance directory and everything in it; a missing one is fine.

    ``names`` are the files the caller expects inside: they are unlinked and the
    directory removed directly, which is all an instance usually leaves. Only
    when something else is there does the removal walk the tree. Nothing is
    synced: an instance directory need not survive a crash.
    """
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
    shutil.rmtree(directory, ignore_errors=True)


def write_new_file(target: Path, data: bytes) -> None:
    """Create ``target``, which must not exist yet, holding ``data``; nothing is synced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _EXTRA_OPEN_FLAGS
    descriptor = os.open(target, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)
