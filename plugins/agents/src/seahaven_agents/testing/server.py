"""``ScriptedChatServer``: a Chat Completions server on loopback, answering from a script.

It speaks the wire format the ``openai`` SDK and every serving stack use
(``POST /v1/chat/completions``, non-streaming, with tool calls and token
usage; ``GET /v1/models``), so a real client pointed at it with ``base_url``
runs exactly as it would against a model: the agent's loop, its retries, its
timeouts and its transcripts, offline, in a test or on a laptop::

    from seahaven_agents.testing import ScriptedChatServer, answer, call, tool_calls

    with ScriptedChatServer([tool_calls(call("list_invoices", {})), answer("6")]) as server:
        agent = ChatAgent("scripted", base_url=server.url)
        ...

It listens on 127.0.0.1 at a port the system picks, answers only requests
addressed to a loopback host (a page elsewhere cannot reach it through DNS
rebinding), refuses bodies over ``MAX_BODY`` bytes and anything that is not a
JSON object with a ``messages`` list, and keeps every request it answered in
``requests``. Each request runs on a thread of its own, so requests wait their
``delay`` side by side, as a served model's do.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from seahaven_agents.testing.replies import ChatRequest, Reply

__all__ = ["MAX_BODY", "Script", "ScriptedChatServer"]

# The largest request body taken: a long conversation with many tools is a few megabytes.
MAX_BODY = 64 * 1024 * 1024
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})

Script = Sequence[Reply] | Callable[[ChatRequest], Reply]
"""Replies in order, or a function of each request that returns its reply."""


class ScriptedChatServer:
    """A Chat Completions server on 127.0.0.1 answering from ``script``; see the module.

    ``delay`` (seconds) is added before every answer, as a model's latency.
    Use it as a context manager, or ``start()`` and ``stop()``. A function
    script is called for several requests at once, from the server's threads.
    """

    def __init__(self, script: Script, *, delay: float = 0.0) -> None:
        self._script = script
        self._replies: Iterator[Reply] | None = None if callable(script) else iter(list(script))
        self.delay = float(delay)
        #: Every request answered, in the order they came.
        self.requests: list[ChatRequest] = []
        #: Each failure of the script itself (it raised, or returned no ``Reply``).
        self.script_errors: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._http: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- running -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port it listens on (once started)."""
        if self._http is None:
            raise RuntimeError("the scripted server is not started")
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give a client: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedChatServer:
        """Listen, and answer on a thread of its own."""
        if self._http is not None:
            return self
        self._stopping.clear()
        self._http = _Http(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-chat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening; requests still waiting (``hang``, a delay) are let go unanswered."""
        self._stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- answering -------------------------------------------------------------------------------

    def _reply_to(self, body: Mapping[str, Any], headers: Mapping[str, str]) -> Reply | str:
        """The script's reply to one request, or why there is none."""
        with self._lock:
            request = ChatRequest(index=len(self.requests), body=body, headers=headers)
            self.requests.append(request)
            if self._replies is not None:
                reply: Any = next(self._replies, None)
                if reply is None:
                    return f"the script has no reply left for request {request.index}"
        if self._replies is None:
            # A function is called outside the lock, so requests are answered side by side; a
            # script that keeps state of its own guards it (``flaky`` does).
            assert callable(self._script)
            try:
                reply = self._script(request)
            except Exception as error:
                problem = f"the script raised {type(error).__name__}: {error}"
                with self._lock:
                    self.script_errors.append(problem)
                return problem
        if not isinstance(reply, Reply):
            problem = f"the script returned {reply!r}, not a Reply"
            with self._lock:
                self.script_errors.append(problem)
            return problem
        return reply

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds``; ``False`` when the server stopped meanwhile."""
        return not self._stopping.wait(seconds) if seconds > 0 else not self._stopping.is_set()

    def _hang(self) -> None:
        self._stopping.wait()


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in a benchmark; the default backlog of 5 drops some.
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], handler: type, owner: ScriptedChatServer) -> None:
        self.owner = owner
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def setup(self) -> None:
        """Answer without Nagle's delay: headers and body go out as soon as they are written."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test's output is its own (and a request's headers are never printed)."""

    # --- routes --------------------------------------------------------------------------------

    def do_GET(self) -> None:
        """``/v1/models``: the one model a script plays, under any name."""
        if not self._from_loopback():
            return
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": [_model_entry("scripted")]})
        else:
            self._error(404, f"no route {self.path.split('?')[0]!r}; POST /v1/chat/completions")

    def do_POST(self) -> None:
        """``/v1/chat/completions``: the script's next reply."""
        if not self._from_loopback():
            return
        path = self.path.split("?")[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._drain()
            self._error(404, f"no route {path!r}; POST /v1/chat/completions")
            return
        body = self._body()
        if body is None:
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        owner = self.server.owner
        reply = owner._reply_to(body, headers)
        if isinstance(reply, str):
            # The script's own failure: a status the client does not retry, naming it.
            self._error(400, reply, kind="script_error")
            return
        if not owner._wait(owner.delay + reply.delay):
            self.close_connection = True
            return
        if reply.hang:
            owner._hang()
            self.close_connection = True
            return
        if reply.drop:
            self.close_connection = True
            return
        if reply.status != 200:
            self._error(reply.status, reply.message or "error", headers=reply.headers)
            return
        message = reply.message_body()
        completion_size = len(json.dumps(message))
        length = int(self.headers.get("Content-Length") or 0)
        usage = (
            dict(reply.usage)
            if reply.usage is not None
            else {
                "prompt_tokens": max(1, length // 4),
                "completion_tokens": max(1, completion_size // 4),
            }
        )
        usage.setdefault(
            "total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        index = len(owner.requests)
        self._json(
            200,
            {
                "id": f"chatcmpl-scripted-{index}",
                "object": "chat.completion",
                "created": 0,
                "model": str(body.get("model", "scripted")),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": reply.finish_reason
                        or ("tool_calls" if reply.calls else "stop"),
                        "logprobs": None,
                    }
                ],
                "usage": usage,
            },
            headers=reply.headers,
        )

    # --- reading and writing -------------------------------------------------------------------

    def _from_loopback(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in _LOOPBACK:
            self._drain()
            self._error(403, "this server answers requests to 127.0.0.1 or localhost only")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and not any(
            origin.lower().startswith(f"{scheme}://{loopback}")
            for scheme in ("http", "https")
            for loopback in _LOOPBACK
        ):
            self._drain()
            self._error(403, "requests from a web page elsewhere are refused")
            return False
        return True

    def _drain(self) -> None:
        """Leave unread a body that will not be used, and close the connection after answering."""
        self.close_connection = True

    def _body(self) -> dict[str, Any] | None:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._error(411, "send the body with a Content-Length")
            return None
        text = self.headers.get("Content-Length")
        try:
            length = int(text) if text is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._error(411, "send the body with a Content-Length")
            return None
        if length > MAX_BODY:
            self.close_connection = True
            self._error(413, f"the body is over {MAX_BODY} bytes")
            return None
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            self._error(400, "the body is not JSON")
            return None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "the body is a JSON object with a list of messages")
            return None
        return body

    def _error(
        self,
        status: int,
        message: str,
        *,
        kind: str = "scripted_error",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._json(
            status,
            {"error": {"message": message, "type": kind, "code": str(status), "param": None}},
            headers=headers,
        )

    def _json(self, status: int, data: Any, *, headers: Mapping[str, str] | None = None) -> None:
        payload = json.dumps(data, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout) before the answer


def _model_entry(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "seahaven"}
