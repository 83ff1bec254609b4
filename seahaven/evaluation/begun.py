"""Which trials a worker running them in turn has begun, told without waking the parent.

A worker that runs its trials one after another (``worker.in_turn``) sends their
results back in batches, and a message saying each trial has begun would wake
the parent as often as the results once did. So each begun trial's index is
written, as 8 bytes, to a socket of its own that the parent reads only when it
is awake anyway: as it takes a batch of results from that worker, and once the
worker has gone, when it needs to know which trials the worker took down with it
(those are errored; the ones it never began run elsewhere). The parent reads at
least once a batch, so the socket never holds more than a batch's indices.
"""

from __future__ import annotations

import contextlib
import socket
import struct

__all__ = ["BegunReader", "BegunWriter"]

_INDEX = struct.Struct("<q")


class BegunWriter:
    """The worker's end: ``note(index)`` before the trial runs."""

    def __init__(self, descriptor: int) -> None:
        self._socket = socket.socket(fileno=descriptor)

    def note(self, index: int) -> None:
        """Say trial ``index`` begins; nothing to do when the parent has gone."""
        with contextlib.suppress(OSError):
            self._socket.sendall(_INDEX.pack(index))

    def close(self) -> None:
        """Let go of the socket."""
        self._socket.close()


class BegunReader:
    """The parent's end: ``drain()`` the indices written since the last drain."""

    def __init__(self, end: socket.socket) -> None:
        end.setblocking(False)
        self._socket = end
        self._partial = b""

    def drain(self) -> list[int]:
        """Every index the worker has written and this end has not read yet, in order."""
        data = self._partial
        while True:
            try:
                chunk = self._socket.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break  # closed under us: what was read is all there is
            if not chunk:
                break  # the worker's end is closed: everything it wrote is read
            data += chunk
        whole = len(data) - len(data) % _INDEX.size
        self._partial = data[whole:]
        return [index for (index,) in _INDEX.iter_unpack(data[:whole])]

    def fileno(self) -> int:
        """The socket's file descriptor (for a forked worker to close)."""
        return self._socket.fileno()

    def close(self) -> None:
        """Let go of the socket."""
        self._socket.close()
