"""The test server of ``seahaven.http`` as an ASGI app: instances by id, a world's handler beneath.

``HttpWorldApp`` is a plain ASGI application. ``/worlds/{id}/...`` passes the
request to the handler, creating instance ``id`` first when there is none;
``PUT /worlds/{id}`` creates or replaces it and ``DELETE /worlds/{id}``
destroys it. Everything else the server answers itself, as JSON
``{"seahaven_error": "<what to fix>"}``.

Each request runs on a worker thread inside ``inst.bulk()``: one transaction
that any response commits and a raised exception rolls back. Requests to one
instance run one at a time (a per-instance lock, which a ``PUT`` takes too),
requests to different instances run in parallel, as many at once as the pool
has threads.

The server answers only its own hosts and origins (``seahaven_openenv.front.guard``),
refuses a body over ``max_body_bytes`` with 413 before reading it, and never
sends a server path or a traceback: those go to the ``seahaven.http`` log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_to_bytes

import seahaven
from seahaven.declaration.instance_options import check_instance_options
from seahaven.errors import SeahavenError, WorldBug, client_message
from seahaven.stores.storage import runner_storage
from seahaven.world import INSTANCE_OPTIONS
from seahaven_openenv.front.guard import (
    Guard,
    header,
    send_refusal,
)
from seahaven_openenv.web.http.messages import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_INSTANCES,
    HttpHandler,
    HttpRequest,
    HttpResponse,
)
from seahaven_openenv.wire import strict_json

__all__ = [
    "RESET_OPTION_KEYS",
    "HttpWorldApp",
    "check_reset_options",
    "layered",
]

_log = logging.getLogger("seahaven.http")

RESET_OPTION_KEYS = INSTANCE_OPTIONS
"""The keyword arguments of ``world.instance()`` a reset option may set."""

DEFAULT_CLOCK_MODE = "wall"
_MAX_ID = 64
_ALLOWED_ON_INSTANCE = "PUT, DELETE"
# A random caller seed fits in 63 bits, inside what the framework accepts.
_SEED_BITS = 63


def _is_instance_id(text: str) -> bool:
    return 1 <= len(text) <= _MAX_ID and all(
        ch.isascii() and (ch.isalnum() or ch in "-_") for ch in text
    )


def check_reset_options(options: object, *, source: str) -> dict[str, Any]:
    """``options`` as a dict of reset options, or a ``WorldBug`` naming what is wrong."""
    if not isinstance(options, Mapping):
        raise WorldBug(f"{source} must be a JSON object of reset options, not {options!r}")
    if "control_tools" in options:
        raise WorldBug(f"{source} sets control_tools; the HTTP server's instances never have them")
    # The keys and JSON types are seahaven.InstanceOptions's, checked in its words.
    check_instance_options(options, source=source)
    return dict(options)


def layered(server: Mapping[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """The server's options with ``request``'s laid over key by key; ``None`` removes a key."""
    merged = {**server, **request}
    return {key: value for key, value in merged.items() if value is not None}


class _Refused(Exception):
    """A response the server makes itself: a status and a message saying what to fix."""

    def __init__(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = tuple(headers)


@dataclass(eq=False)
class _Slot:
    """One instance id: its lock, and its instance once made."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    instance: seahaven.Instance | None = None
    # Set when DELETE took the slot away; a request that waited on it starts again.
    gone: bool = False


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def _error(status: int, message: str, headers: Sequence[tuple[str, str]] = ()) -> _Reply:
    # ASCII JSON: a lone surrogate echoed from a request is escaped, never a failed encoding.
    body = json.dumps({"seahaven_error": message}).encode("ascii")
    return _Reply(status, (("content-type", "application/json"), *headers), body)


def _internal(what: str) -> _Reply:
    """A 500 for a failure of the server's own, whose traceback is logged under an id."""
    correlation = f"err-{secrets.token_hex(6)}"
    _log.error("internal error (%s) on %s", correlation, what, exc_info=True)
    return _error(500, f"internal error ({correlation}); the seahaven.http log has its traceback")


class HttpWorldApp:
    """The ASGI application ``seahaven.http.app(world, handle)`` answers.

    Run it in one worker process: the instances are state in this process. At
    shutdown (ASGI lifespan) every instance is destroyed.
    """

    def __init__(
        self,
        world: seahaven.World,
        handle: HttpHandler,
        *,
        max_instances: int = DEFAULT_MAX_INSTANCES,
        reset_options: Mapping[str, Any] | None = None,
        workers: int | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(world, seahaven.World):
            raise WorldBug(f"seahaven.http serves a seahaven.World, not {world!r}")
        if not callable(handle):
            raise WorldBug(f"the handler {handle!r} is not callable: def handle(ctx, request)")
        if isinstance(max_instances, bool) or not isinstance(max_instances, int):
            raise WorldBug(f"max_instances must be a whole number, not {max_instances!r}")
        if max_instances < 0:
            raise WorldBug("max_instances must be 0 (no limit) or more")
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
            raise WorldBug(f"max_body_bytes must be a whole number, not {max_body_bytes!r}")
        if max_body_bytes < 0:
            raise WorldBug("max_body_bytes must be 0 (no body at all) or more")
        self.guard = Guard.build(allowed_hosts, allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.world = world
        self.handle = handle
        self.max_instances = max_instances
        self.reset_options = check_reset_options(reset_options or {}, source="reset_options")
        self._workers = workers or min(32, (os.cpu_count() or 1) + 4)
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        # Made and destroyed once, so options world.instance() refuses fail here, not later.
        try:
            self._make(self.reset_options).destroy()
        except SeahavenError as error:
            raise WorldBug(f"the server's reset options are refused: {error}") from None

    # --- instances ------------------------------------------------------------------------

    @property
    def instance_ids(self) -> list[str]:
        """The ids that hold an instance (or are making one) now, sorted."""
        with self._lock:
            return sorted(self._slots)

    def _make(self, options: Mapping[str, Any]) -> seahaven.Instance:
        arguments = dict(options)
        fixture = arguments.pop("fixture", None)
        arguments.setdefault("clock_mode", DEFAULT_CLOCK_MODE)
        # The server's own instance, reached only over HTTP: memory unless told otherwise.
        arguments["storage"] = runner_storage(arguments.get("storage"))
        if arguments.get("seed") is None:
            arguments["seed"] = secrets.randbits(_SEED_BITS)
        return self.world.instance(fixture, **arguments)

    def _claim(self, instance_id: str) -> tuple[_Slot, bool]:
        """The slot of ``instance_id``, made when there is none (``True``); 503 past the limit."""
        with self._lock:
            slot = self._slots.get(instance_id)
            if slot is not None:
                return slot, False
            if self.max_instances and len(self._slots) >= self.max_instances:
                raise _Refused(
                    503,
                    f"the server holds its limit of {self.max_instances} instances; DELETE "
                    "/worlds/{id} one you are done with, or start the server with a larger "
                    "--max-instances",
                )
            slot = self._slots[instance_id] = _Slot()
            return slot, True

    def _forget(self, instance_id: str, slot: _Slot) -> None:
        with self._lock:
            if self._slots.get(instance_id) is slot:
                del self._slots[instance_id]
        slot.gone = True

    def _request(self, instance_id: str, request: HttpRequest) -> _Reply:
        while True:
            slot, _ = self._claim(instance_id)
            with slot.lock:
                if slot.gone:
                    continue
                if slot.instance is None:
                    try:
                        slot.instance = self._make(self.reset_options)
                    except Exception as error:
                        self._forget(instance_id, slot)
                        _log.error("instance %s could not be created", instance_id, exc_info=True)
                        return _error(
                            500,
                            f"instance {instance_id} could not be created: {client_message(error)}",
                        )
                return self._run(instance_id, slot.instance, request)

    def _run(self, instance_id: str, inst: seahaven.Instance, request: HttpRequest) -> _Reply:
        inst.clock.tick()
        try:
            with inst.bulk() as ctx:
                response = self.handle(ctx, request)
                if not isinstance(response, HttpResponse):
                    raise TypeError(
                        f"the handler returned {type(response).__name__}, not an HttpResponse"
                    )
        except Exception as error:
            _log.error(
                "%s %s on instance %s: the handler failed",
                request.method,
                request.path,
                instance_id,
                exc_info=True,
            )
            return _error(
                500,
                f"the handler failed on {request.method} {request.path}: "
                f"{type(error).__name__}: {client_message(error)}; its traceback is in the "
                "seahaven.http log, and its writes were rolled back",
            )
        headers = tuple(
            (name.lower(), value)
            for name, value in response.headers
            if name.lower() not in ("content-length", "transfer-encoding")
        )
        return _Reply(response.status, headers, response.body_bytes)

    def _put(self, instance_id: str, body: bytes) -> _Reply:
        try:
            given = strict_json.loads(body) if body.strip() else {}
        except strict_json.TooDeep:
            return _error(
                400, "the PUT body nests too deeply to read; send a flat JSON object of options"
            )
        except strict_json.NotJson as error:
            return _error(400, f"the PUT body is not JSON ({error}); send a JSON object")
        try:
            options = layered(self.reset_options, check_reset_options(given, source="the PUT body"))
        except WorldBug as error:
            return _error(400, str(error))
        while True:
            slot, made = self._claim(instance_id)
            with slot.lock:
                if slot.gone:
                    continue
                try:
                    fresh = self._make(options)
                except SeahavenError as error:
                    if made:
                        self._forget(instance_id, slot)
                    _log.info("PUT /worlds/%s: world.instance() refused: %s", instance_id, error)
                    return _error(
                        400, f"world.instance() refused the options: {client_message(error)}"
                    )
                except Exception as error:
                    if made:
                        self._forget(instance_id, slot)
                    _log.error("instance %s could not be created", instance_id, exc_info=True)
                    return _error(
                        500,
                        f"instance {instance_id} could not be created: {client_message(error)}",
                    )
                old, slot.instance = slot.instance, fresh
                if old is not None:
                    try:
                        old.destroy()
                    except Exception as error:
                        _log.error("instance %s could not be destroyed", instance_id, exc_info=True)
                        return _error(
                            500,
                            f"instance {instance_id} was replaced, but the old one could not "
                            f"be destroyed: {client_message(error)}",
                        )
                status = 201 if old is None else 200
                body_out = json.dumps({"id": instance_id}).encode()
                return _Reply(status, (("content-type", "application/json"),), body_out)

    def _delete(self, instance_id: str) -> _Reply:
        with self._lock:
            slot = self._slots.pop(instance_id, None)
        if slot is None:
            return _error(404, f"there is no instance {instance_id} to delete")
        with slot.lock:
            slot.gone = True
            inst, slot.instance = slot.instance, None
            if inst is not None:
                try:
                    inst.destroy()
                except Exception as error:
                    _log.error("instance %s could not be destroyed", instance_id, exc_info=True)
                    return _error(
                        500,
                        f"instance {instance_id} could not be destroyed: {client_message(error)}",
                    )
        return _Reply(204, (), b"")

    def close(self) -> None:
        """Destroy every instance and stop the worker threads (the server is stopping)."""
        with self._lock:
            slots = list(self._slots.items())
            self._slots.clear()
        for instance_id, slot in slots:
            with slot.lock:
                slot.gone = True
                inst, slot.instance = slot.instance, None
                if inst is not None:
                    try:
                        inst.destroy()
                    except Exception:
                        _log.error("instance %s could not be destroyed", instance_id, exc_info=True)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    # --- ASGI -----------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer one ASGI connection: ``lifespan`` or ``http``."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        refused = self.guard.refusal(scope) if scope["type"] in ("http", "websocket") else None
        if refused is not None:
            _log.info("refused a request: %s", refused.message)
            reply = _error(403, refused.message)
            await send_refusal(scope, send, reply.status, reply.body, "application/json")
            return
        if scope["type"] != "http":
            # A WebSocket: this server has no such route.
            await send({"type": "websocket.close", "code": 1000})
            return
        try:
            reply = await self._answer(scope, receive)
        except Exception:
            # Never uvicorn's plain-text 500: a client tells the server's answers by their JSON.
            reply = _internal(f"{scope.get('method')} {scope.get('path')}")
        headers = [
            (name.encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers
        ]
        headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await asyncio.get_running_loop().run_in_executor(None, self.close)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _answer(self, scope: dict[str, Any], receive: Any) -> _Reply:
        method = str(scope["method"]).upper()
        raw: bytes = scope.get("raw_path") or str(scope["path"]).encode("utf-8")
        raw = raw.split(b"?", 1)[0]
        if not raw.startswith(b"/worlds/"):
            shown = raw.decode("latin-1")
            return _error(
                404,
                f"nothing is served at {shown}; requests go to /worlds/{{id}}/..., where {{id}} "
                "is an instance id of your choosing, such as /worlds/test1/",
            )
        id_part, slash, rest = raw[len(b"/worlds/") :].partition(b"/")
        instance_id = unquote_to_bytes(id_part).decode("utf-8", "replace")
        if not _is_instance_id(instance_id):
            return _error(
                400,
                f"{instance_id!r} is not an instance id: use 1 to {_MAX_ID} letters, digits, "
                "'-' and '_', such as test1",
            )
        try:
            body = await self._read_body(scope, receive)
            if not slash:
                if method == "PUT":
                    return await self._in_thread(self._put, instance_id, body)
                if method == "DELETE":
                    return await self._in_thread(self._delete, instance_id)
                return _error(
                    405,
                    f"/worlds/{instance_id} takes PUT (create or replace the instance) and "
                    f"DELETE (destroy it); the world's own routes are under /worlds/{instance_id}/",
                    (("allow", _ALLOWED_ON_INSTANCE),),
                )
            request = HttpRequest(
                method,
                "/" + unquote_to_bytes(rest).decode("utf-8", "replace"),
                query=bytes(scope.get("query_string", b"")).decode("latin-1"),
                headers=[
                    (name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in scope.get("headers", [])
                ],
                body=body,
            )
            return await self._in_thread(self._request, instance_id, request)
        except _Refused as refused:
            return _error(refused.status, refused.message, refused.headers)

    async def _in_thread(self, fn: Any, *args: Any) -> _Reply:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="seahaven-http")
        reply: _Reply = await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        return reply

    async def _read_body(self, scope: Mapping[str, Any], receive: Any) -> bytes:
        """The request's body, or a 413 before reading more than ``max_body_bytes`` of it."""
        limit = self.max_body_bytes
        declared = header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise self._too_large()
        chunks = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def _too_large(self) -> _Refused:
        # The rest of the body is never read, so the connection cannot carry another request.
        return _Refused(
            413,
            f"the request body is over the server's limit of {self.max_body_bytes} bytes; send "
            "less, or start the server with a larger --max-body-bytes",
            (("connection", "close"),),
        )
