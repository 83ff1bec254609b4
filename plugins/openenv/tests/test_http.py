"""``seahaven.http``: the request and response types, a tool calling its handler, and the test
server driven over loopback with a real HTTP client.

Every server is ``seahaven.http.running(...)``: uvicorn on a background thread on a free port
of 127.0.0.1, stopped when its ``with`` block ends.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shelf import NOW, ShelfError, freeze_stocked, handle, make_shelf

import seahaven
import seahaven.http
from seahaven.http import HttpRequest, HttpResponse

TIMEOUT = 30.0


@pytest.fixture
def shelf(tmp_path: Path) -> seahaven.World:
    """A shelf world with the fixture ``stocked`` frozen in this test's own directory."""
    world = make_shelf(tmp_path / "fixtures")
    freeze_stocked(world)
    return world


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=TIMEOUT) as http:
        yield http


def error_of(response: httpx.Response) -> str:
    """The message of a response the server made itself."""
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert list(body) == ["seahaven_error"], body
    message: str = body["seahaven_error"]
    return message


# --- the types ---------------------------------------------------------------------------------


def test_a_request_keeps_its_method_in_upper_case_and_its_header_names_in_lower_case() -> None:
    request = HttpRequest(
        "post", "/v1/books", query="a=1&b=2", headers=[("X-Trace", "7")], body='{"t": 1}'
    )

    assert (request.method, request.path, request.query) == ("POST", "/v1/books", "a=1&b=2")
    assert request.headers == (("x-trace", "7"),)
    assert request.header("X-TRACE") == "7"
    assert request.header("missing") is None
    assert request.body == b'{"t": 1}'
    assert request.json() == {"t": 1}
    assert request == HttpRequest("POST", "/v1/books", "a=1&b=2", [("x-trace", "7")], b'{"t": 1}')


def test_a_json_response_names_its_content_type_unless_told_another() -> None:
    plain = HttpResponse.json({"é": [1, 2]}, status=201)
    assert plain.status == 201
    assert plain.header("Content-Type") == "application/json"
    assert json.loads(plain.body_bytes) == {"é": [1, 2]}

    told = HttpResponse.json([], headers=[("Content-Type", "application/problem+json")])
    assert [value for name, value in told.headers if name.lower() == "content-type"] == [
        "application/problem+json"
    ]

    text = HttpResponse(body="café")
    assert (text.status, text.body_bytes) == (200, "café".encode())


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"status": 1000}, "not an HTTP status"),
        ({"status": True}, "not an HTTP status"),
        ({"headers": [("x-a", "one\r\ntwo")]}, "line break"),
        ({"headers": [("bad name", "v")]}, "not an HTTP token"),
        ({"headers": {"x-a": "1"}}, "(name, value) pairs"),
        ({"body": 7}, "give bytes or str"),
    ],
)
def test_a_response_http_cannot_carry_is_refused_where_it_is_made(
    arguments: dict[str, Any], says: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=says.replace("(", r"\(").replace(")", r"\)")):
        HttpResponse(**arguments)


def test_a_tool_calls_the_handler_inside_its_own_transaction(shelf: seahaven.World) -> None:
    with shelf.instance(now=NOW, clock_mode="fixed", seed=3) as inst:
        book = inst.call("add_book", title="Dubliners")
        assert inst.call("get_book", book_id=book["id"]) == book
        with pytest.raises(ShelfError) as refused:
            inst.call("add_book", title="")
        assert refused.value.code == "invalid_request"
        # The handler's write is the tool call's: it carries the call's ordinal.
        assert [(record.i, record.table, record.op) for record in inst.change_log()] == [
            (0, "books", "insert")
        ]


# --- the server --------------------------------------------------------------------------------


def test_the_first_request_creates_the_instance_and_reaches_the_handler_unchanged(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        assert server.app.instance_ids == []
        echoed = client.post(
            server.url("test1") + "/v1/test/echo/a%2Fb?x=1&y=%20",
            content=b"hello",
            headers={"X-Custom": "Value"},
        )
        assert echoed.status_code == 200
        assert server.app.instance_ids == ["test1"]
        seen = echoed.json()
        assert seen["method"] == "POST"
        # The path is relative to the instance and percent-decoded: %2F arrives as "/".
        assert seen["path"] == "/v1/test/echo/a/b"
        assert seen["query"] == "x=1&y=%20"
        assert ["x-custom", "Value"] in seen["headers"]
        assert seen["body"] == "hello"
        # The handler's headers arrive as it set them, repeated names included.
        assert echoed.headers["x-shelf"] == "echo"
        assert echoed.headers.get_list("set-cookie") == ["a=1", "b=2"]
        assert "access-control-allow-origin" not in echoed.headers
        root = client.get(server.url("test1") + "/")
        assert root.status_code == 404
        assert root.json()["error"]["message"] == "no route GET /"


def test_two_instances_side_by_side_keep_separate_state(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        a, b = server.url("a"), server.url("b")
        made = client.post(a + "/v1/books", json={"title": "Moby-Dick"})
        assert made.status_code == 201
        book = made.json()
        client.post(b + "/v1/books", json={"title": "Ulysses"})
        client.post(b + "/v1/books", json={"title": "Emma"})

        assert [row["title"] for row in client.get(a + "/v1/books").json()] == ["Moby-Dick"]
        assert sorted(row["title"] for row in client.get(b + "/v1/books").json()) == [
            "Emma",
            "Ulysses",
        ]
        assert client.get(a + f"/v1/books/{book['id']}").json() == book
        assert client.get(b + f"/v1/books/{book['id']}").status_code == 404
        # Each instance has a random seed of its own, so their ids differ.
        assert (
            client.get(a + "/v1/test/echo").json()["id"]
            != (client.get(b + "/v1/test/echo").json()["id"])
        )
        assert server.app.instance_ids == ["a", "b"]


def test_requests_to_different_instances_run_in_parallel(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    arrived = {name: threading.Event() for name in ("a", "b")}

    def meeting(ctx: seahaven.Ctx, request: HttpRequest) -> HttpResponse:
        mine = request.path.strip("/")
        other = "b" if mine == "a" else "a"
        arrived[mine].set()
        # Each waits for the other to be inside its own handler: only parallel requests meet.
        return HttpResponse.json({"met": arrived[other].wait(timeout=TIMEOUT)})

    with seahaven.http.running(shelf, meeting) as server, ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(lambda name: client.get(server.url(name) + f"/{name}").json(), ["a", "b"])
        )
    assert answers == [{"met": True}, {"met": True}]


def test_requests_to_one_instance_run_one_at_a_time(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    inside = 0
    most = 0
    lock = threading.Lock()
    many = threading.Barrier(6, timeout=TIMEOUT)

    def counting(ctx: seahaven.Ctx, request: HttpRequest) -> HttpResponse:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        add_row = ctx.db.execute  # the write is part of the request's one transaction
        add_row("INSERT INTO books VALUES (?, 't', ?)", ctx.ids.uuid(), ctx.clock.iso())
        with lock:
            inside -= 1
        return HttpResponse(204)

    def send(_: int) -> int:
        many.wait()  # all six leave together
        return client.post(server.url("same") + "/").status_code

    with seahaven.http.running(shelf, counting) as server, ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(send, range(6)))
    assert statuses == [204] * 6
    assert most == 1


def test_the_servers_instances_are_in_memory_unless_a_put_or_the_process_says_otherwise(
    shelf: seahaven.World, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def where(ctx: seahaven.Ctx, request: HttpRequest) -> HttpResponse:
        # An in-memory database's connection names no file.
        return HttpResponse.json({"file": bool(ctx.db.conn.filename)})

    monkeypatch.delenv("SEAHAVEN_STORAGE", raising=False)
    with seahaven.http.running(shelf, where) as server:
        assert client.get(server.url("a") + "/").json() == {"file": False}
        assert client.put(server.url("b"), json={"storage": "disk"}).status_code == 201
        assert client.get(server.url("b") + "/").json() == {"file": True}
    monkeypatch.setenv("SEAHAVEN_STORAGE", "disk")
    with seahaven.http.running(shelf, where) as server:
        assert client.get(server.url("a") + "/").json() == {"file": True}
        assert client.put(server.url("b"), json={"storage": "memory"}).status_code == 201
        assert client.get(server.url("b") + "/").json() == {"file": False}


def test_put_creates_then_replaces_an_instance_with_the_options_laid_over_the_servers(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    options = {"fixture": "stocked", "clock_mode": "fixed"}
    with seahaven.http.running(shelf, handle, reset_options=options) as server:
        url = server.url("t")
        # The server's fixture, made by the first request.
        assert len(client.get(url + "/v1/books").json()) == 2
        client.post(url + "/v1/books", json={"title": "Persuasion"})
        assert len(client.get(url + "/v1/books").json()) == 3

        replaced = client.put(url, content=b"")
        assert (replaced.status_code, replaced.json()) == (200, {"id": "t"})
        assert len(client.get(url + "/v1/books").json()) == 2

        # null takes the server's fixture away: a blank instance.
        blank = client.put(url, json={"fixture": None, "seed": 7, "clock_mode": "tick"})
        assert blank.status_code == 200
        assert client.get(url + "/v1/books").json() == []

        fresh = client.put(server.url("new"), json={"seed": 7})
        assert (fresh.status_code, fresh.json()) == (201, {"id": "new"})

        # The same seed gives the same ids: a run replays.
        first = client.get(url + "/v1/test/echo").json()["id"]
        client.put(url, json={"fixture": None, "seed": 7, "clock_mode": "tick"})
        assert client.get(url + "/v1/test/echo").json()["id"] == first

        # Either storage holds the same rows.
        for storage in ("disk", "memory"):
            assert client.put(url, json={"storage": storage}).status_code == 200
            assert len(client.get(url + "/v1/books").json()) == 2


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"[1, 2]", "must be a JSON object"),
        (b"{not json", "not JSON"),
        (b'{"colour": "red"}', "does not take"),
        (b'{"control_tools": true}', "control_tools"),
        (b'{"seed": "seven"}', "seed must be a whole number"),
        (b'{"fixture": "no_such_fixture"}', "world.instance() refused"),
        (b'{"clock_mode": "sideways"}', "world.instance() refused"),
        (b'{"storage": "tape"}', "world.instance() refused"),
        (b'{"storage": 1}', "storage must be a string"),
    ],
)
def test_a_put_the_server_cannot_honour_is_a_400_and_keeps_the_instance(
    shelf: seahaven.World, client: httpx.Client, body: bytes, says: str
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        client.post(server.url("t") + "/v1/books", json={"title": "Kept"})

        refused = client.put(server.url("t"), content=body)

        assert refused.status_code == 400
        assert says in error_of(refused)
        assert [row["title"] for row in client.get(server.url("t") + "/v1/books").json()] == [
            "Kept"
        ]
        # A refused PUT of a new id leaves no instance behind.
        assert client.put(server.url("u"), content=body).status_code == 400
        assert server.app.instance_ids == ["t"]


def test_delete_destroys_the_instance_and_a_later_request_makes_a_fresh_one(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        url = server.url("gone")
        client.post(url + "/v1/books", json={"title": "Emma"})
        directory = server.app._slots["gone"].instance.directory  # type: ignore[union-attr]
        assert directory.is_dir()

        deleted = client.delete(url)
        assert (deleted.status_code, deleted.content) == (204, b"")
        assert not directory.exists()
        again = client.delete(url)
        assert again.status_code == 404
        assert "no instance gone" in error_of(again)

        assert client.get(url + "/v1/books").json() == []


def test_paths_the_server_does_not_serve_are_404_and_other_methods_on_an_instance_405(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        for path in ("/", "/v1/books", "/worlds", "/worldsx/a/"):
            answer = client.get(server.base_url + path)
            assert answer.status_code == 404, path
            assert "/worlds/{id}/" in error_of(answer)
        for method in ("GET", "POST", "PATCH"):
            answer = client.request(method, server.url("t"))
            assert answer.status_code == 405
            assert answer.headers["allow"] == "PUT, DELETE"
            assert "PUT" in error_of(answer)
        # None of that made an instance.
        assert server.app.instance_ids == []


@pytest.mark.parametrize("instance_id", ["x" * 65, "a.b", "a%2Fb", "caf%C3%A9", "%20"])
def test_an_instance_id_that_is_not_letters_digits_dash_and_underscore_is_a_400(
    shelf: seahaven.World, client: httpx.Client, instance_id: str
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        for answer in (
            client.get(f"{server.base_url}/worlds/{instance_id}/v1/books"),
            client.put(f"{server.base_url}/worlds/{instance_id}"),
        ):
            assert answer.status_code == 400
            assert "not an instance id" in error_of(answer)
        assert client.get(server.url("x" * 64) + "/v1/books").status_code == 200


def test_a_handler_that_raises_is_a_500_its_writes_roll_back_and_the_traceback_is_logged(
    shelf: seahaven.World, client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="seahaven.http")
    with seahaven.http.running(shelf, handle) as server:
        url = server.url("t")
        raised = client.post(url + "/v1/test/raises")
        assert raised.status_code == 500
        assert "RuntimeError: the shelf fell over" in error_of(raised)
        not_a_response = client.post(url + "/v1/test/not-a-response")
        assert not_a_response.status_code == 500
        assert "not an HttpResponse" in error_of(not_a_response)
        assert client.get(url + "/v1/books").json() == []
    failures = [record for record in caplog.records if record.name == "seahaven.http"]
    assert len(failures) == 2
    assert all(record.exc_info is not None for record in failures)


def test_any_status_the_handler_answers_commits_what_it_wrote(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        url = server.url("t")
        refused = client.post(url + "/v1/test/refuses-after-writing")
        assert refused.status_code == 400
        assert refused.json() == {
            "error": {"type": "invalid_request", "message": "refused, after writing"}
        }
        assert [row["title"] for row in client.get(url + "/v1/books").json()] == [
            "kept, though the answer is 400"
        ]


def test_the_server_sets_the_framing_headers_itself(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        answer = client.get(server.url("t") + "/v1/test/framing")
    assert answer.status_code == 200
    assert answer.content == b"three"
    assert answer.headers["content-length"] == "5"
    assert "transfer-encoding" not in answer.headers


def test_the_instance_limit_is_a_503_and_delete_frees_a_place(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle, max_instances=2) as server:
        assert client.get(server.url("a") + "/v1/books").status_code == 200
        assert client.put(server.url("b")).status_code == 201
        over = client.get(server.url("c") + "/v1/books")
        assert over.status_code == 503
        assert "limit of 2 instances" in error_of(over)
        assert client.put(server.url("c")).status_code == 503
        # Replacing one is not creating one.
        assert client.put(server.url("a")).status_code == 200
        assert client.delete(server.url("b")).status_code == 204
        assert client.get(server.url("c") + "/v1/books").status_code == 200
        assert server.app.instance_ids == ["a", "c"]


def test_a_request_is_not_a_tool_call(shelf: seahaven.World, client: httpx.Client) -> None:
    with seahaven.http.running(shelf, handle) as server:
        url = server.url("t")
        client.post(url + "/v1/books", json={"title": "Emma"})
        echoed = client.get(url + "/v1/test/echo").json()
        inst = server.app._slots["t"].instance
        assert inst is not None
        # No call-log entry; the change log's records carry no call ordinal; ctx.call is None.
        assert inst.call_log() == []
        assert [(record.i, record.table) for record in inst.change_log()] == [(None, "books")]
        assert echoed["call_is_none"] is True
        # Instances run on the wall clock unless told otherwise.
        assert echoed["clock_mode"] == "wall"


def test_under_tick_each_request_moves_the_clock_one_step(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    options = {"now": NOW, "clock_mode": "tick"}
    with seahaven.http.running(shelf, handle, reset_options=options) as server:
        readings = [client.get(server.url("t") + "/v1/test/echo").json()["now"] for _ in range(3)]
    assert readings == [
        "2026-06-01T09:00:01.000Z",
        "2026-06-01T09:00:02.000Z",
        "2026-06-01T09:00:03.000Z",
    ]


def test_stopping_the_server_destroys_every_instance(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        for name in ("a", "b"):
            client.get(server.url(name) + "/v1/books")
        directories = [slot.instance.directory for slot in server.app._slots.values()]  # type: ignore[union-attr]
        assert all(directory.is_dir() for directory in directories)
    assert not any(directory.exists() for directory in directories)
    assert server.app.instance_ids == []


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"colour": "red"}, "does not take"),
        ({"control_tools": True}, "never have them"),
        ({"fixture": "no_such_fixture"}, "reset options are refused"),
        ({"seed": "7"}, "seed must be a whole number"),
    ],
)
def test_server_options_world_instance_would_refuse_are_refused_before_serving(
    shelf: seahaven.World, options: dict[str, Any], says: str
) -> None:
    with pytest.raises(seahaven.WorldBug, match=says):
        seahaven.http.app(shelf, handle, reset_options=options)


def test_the_alias_is_the_plugins_module() -> None:
    import seahaven_openenv.web.http

    assert seahaven.http is seahaven_openenv.web.http
    assert seahaven.http.HttpHandler is seahaven_openenv.web.http.HttpHandler


# --- what the server refuses before the handler runs ---------------------------------------------


def test_a_foreign_host_or_origin_is_refused_with_a_json_403(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle, allowed_origins=["http://localhost:5173"]) as server:
        url = server.url("t") + "/v1/books"
        for headers in ({"host": "evil.example"}, {"origin": "http://evil.example"}):
            refused = client.get(url, headers=headers)
            assert refused.status_code == 403
            assert "--allow-" in error_of(refused)
        assert client.get(url, headers={"origin": "http://localhost:5173"}).status_code == 200
        assert client.get(url, headers={"origin": server.base_url}).status_code == 200
        assert client.get(url).status_code == 200
        # None of the refused requests reached a handler or made an instance.
        assert server.app.instance_ids == ["t"]


def test_a_body_over_the_limit_is_refused_before_it_is_read(
    shelf: seahaven.World, client: httpx.Client
) -> None:
    with seahaven.http.running(shelf, handle, max_body_bytes=1024) as server:
        # 64 MiB announced and never sent: the answer comes without waiting for it.
        with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
            sock.sendall(
                b"PUT /worlds/t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n"
            )
            sock.settimeout(TIMEOUT)
            answer = b""
            while chunk := sock.recv(65536):  # the server closes the connection after it
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 413"), answer
        assert b"connection: close" in answer.lower()
        assert b"--max-body-bytes" in answer

        # A chunked body has no length to read first: it is refused once it passes the limit.
        def chunks() -> Iterator[bytes]:
            for _ in range(64):
                yield b"x" * 512

        refused = client.post(server.url("t") + "/v1/books", content=chunks())
        assert refused.status_code == 413
        assert "limit of 1024 bytes" in error_of(refused)
        assert server.app.instance_ids == []
        assert (
            client.post(server.url("t") + "/v1/books", json={"title": "Small"}).status_code == 201
        )


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000, b'{"a":' * 50_000, b"[" * 1_000_000, b'{"startup": ' + b"[" * 20_000],
)
def test_a_put_body_nested_too_deep_is_a_400_in_json(
    shelf: seahaven.World, client: httpx.Client, body: bytes
) -> None:
    with seahaven.http.running(shelf, handle) as server:
        refused = client.put(server.url("t"), content=body)
        assert refused.status_code == 400
        assert "JSON" in error_of(refused)
        assert client.put(server.url("t")).status_code == 201


def test_no_server_path_reaches_a_client(
    shelf: seahaven.World, client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="seahaven.http")
    fixtures = str(shelf.fixtures_dir)
    with seahaven.http.running(shelf, handle) as server:
        unknown = client.put(server.url("t"), json={"fixture": "no_such_fixture"})
        assert unknown.status_code == 400
        message = error_of(unknown)
        assert "no_such_fixture" in message and "stocked" in message
        assert fixtures not in message and str(Path(fixtures).parent) not in message

        raised = client.post(server.url("t") + "/v1/test/raises-with-a-path")
        assert raised.status_code == 500
        assert "/srv/shelf" not in error_of(raised)
        assert "books.db" in error_of(raised)
    # The operator's log keeps what the client was not told.
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert fixtures in logged
