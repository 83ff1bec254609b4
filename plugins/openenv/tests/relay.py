"""A TCP relay on 127.0.0.1 between a client and a server, whose connections a test can cut.

Cutting closes both sockets of every relayed connection at once: the client
sees its TCP connection end with no WebSocket close frame, as when a network
drops it, and the server sees its peer vanish. ``refuse`` makes the next
connections' handshakes be answered by the relay itself, as a busy load
balancer or server answers them, and never reach the server.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any


class Relay:
    """Relay every connection made to ``port`` on to ``target_port``, until ``close``."""

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        #: How many connections were relayed so far.
        self.connections = 0
        #: How many connections were answered by ``refuse``'s answers so far.
        self.refused = 0
        self._answers: list[bytes] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    @property
    def base_url(self) -> str:
        """The HTTP base URL a client uses to reach the server through the relay."""
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                answer = self._answers.pop(0) if self._answers else None
                self.refused += answer is not None
            if answer is not None:
                threading.Thread(target=_answer, args=(downstream, answer), daemon=True).start()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                downstream.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._pairs.append((downstream, upstream))
                self.connections += 1
            for source, sink in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def refuse(self, answers: list[bytes]) -> None:
        """Answer the next ``len(answers)`` connections' requests with these, then close them.

        Each answer is a status line and headers; the relay ends the head.
        """
        with self._lock:
            self._answers.extend(answers)

    def cut(self) -> int:
        """Close every relayed connection, both ends; how many there were."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for end in pair:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
        return len(pairs)

    def close(self) -> None:
        """Stop accepting, and cut what is relayed."""
        self._listener.close()
        self.cut()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _answer(downstream: socket.socket, answer: bytes) -> None:
    # Read the request's head, as a server does before it answers, then answer and close.
    with contextlib.suppress(OSError), downstream:
        downstream.settimeout(10)
        head = b""
        while b"\r\n\r\n" not in head:
            data = downstream.recv(65536)
            if not data:
                return
            head += data
        downstream.sendall(answer + b"content-length: 0\r\nconnection: close\r\n\r\n")
