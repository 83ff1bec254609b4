"""A world for the ``seahaven.http`` tests: a bookshelf with a small REST API and two tools.

``make_shelf(fixtures_dir)`` builds a fresh world, so each test (and each
server script a test starts) has its own. ``handle`` is its API; the routes
under ``/v1/test/`` exist to make the server's own answers happen: a handler
that raises, one that returns something other than a response, one that writes
and answers 400, one that sets the framing headers itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import seahaven
from seahaven.http import HttpRequest, HttpResponse

NOW = "2026-06-01T09:00:00.000Z"
SCHEMA = """
CREATE TABLE books (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    added_at TEXT NOT NULL
) STRICT;
"""


def problem(status: int, kind: str, message: str) -> HttpResponse:
    """The API's own error shape."""
    return HttpResponse.json({"error": {"type": kind, "message": message}}, status=status)


def add(ctx: seahaven.Ctx, title: str) -> dict[str, Any]:
    book = {"id": ctx.ids.uuid(), "title": title, "added_at": ctx.clock.iso()}
    ctx.db.execute(
        "INSERT INTO books (id, title, added_at) VALUES (?, ?, ?)",
        book["id"],
        book["title"],
        book["added_at"],
    )
    return book


def handle(ctx: seahaven.Ctx, request: HttpRequest) -> HttpResponse:
    """The shelf's REST API."""
    match request.method, request.path.split("/")[1:]:
        case "POST", ["v1", "books"]:
            title = request.json().get("title")
            if not isinstance(title, str) or not title:
                return problem(400, "invalid_request", "title is required")
            return HttpResponse.json(add(ctx, title), status=201)
        case "GET", ["v1", "books"]:
            return HttpResponse.json(ctx.db.rows("SELECT * FROM books ORDER BY added_at, id"))
        case "GET", ["v1", "books", book_id]:
            row = ctx.db.one("SELECT * FROM books WHERE id = ?", book_id)
            if row is None:
                return problem(404, "not_found", f"no book {book_id}")
            return HttpResponse.json(row)
        case _, ["v1", "test", "echo", *_]:
            return HttpResponse.json(
                {
                    "method": request.method,
                    "path": request.path,
                    "query": request.query,
                    "headers": [list(pair) for pair in request.headers],
                    "body": request.body.decode(),
                    "call_is_none": ctx.call is None,
                    "now": ctx.clock.iso(),
                    "clock_mode": ctx.clock.mode,
                    "id": ctx.ids.uuid(),
                },
                headers=[("x-shelf", "echo"), ("set-cookie", "a=1"), ("set-cookie", "b=2")],
            )
        case "POST", ["v1", "test", "raises"]:
            add(ctx, "written, then rolled back")
            raise RuntimeError("the shelf fell over")
        case "POST", ["v1", "test", "raises-with-a-path"]:
            raise FileNotFoundError(2, "No such file or directory", "/srv/shelf/private/books.db")
        case "POST", ["v1", "test", "not-a-response"]:
            add(ctx, "written, then rolled back")
            return {"status": 200}  # type: ignore[return-value]
        case "POST", ["v1", "test", "refuses-after-writing"]:
            add(ctx, "kept, though the answer is 400")
            return problem(400, "invalid_request", "refused, after writing")
        case "GET", ["v1", "test", "framing"]:
            return HttpResponse(
                200,
                [("content-length", "999"), ("transfer-encoding", "chunked")],
                "three",
            )
        case _:
            return problem(404, "no_route", f"no route {request.method} {request.path}")


class ShelfError(seahaven.ToolError):
    """A refusal from the shelf's API, restated for the tool that asked."""

    def __init__(self, response: HttpResponse) -> None:
        problem = json.loads(response.body_bytes)["error"]
        super().__init__(problem["type"], problem["message"])


def make_shelf(fixtures_dir: Path | None = None) -> seahaven.World:
    """A new shelf world, its fixtures in ``fixtures_dir``."""
    world = seahaven.World(
        name="shelf",
        version="1.0.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        fixtures_dir=fixtures_dir,
    )

    def call_api(ctx: seahaven.Ctx, request: HttpRequest) -> Any:
        response = handle(ctx, request)
        if response.status >= 400:
            raise ShelfError(response)
        return json.loads(response.body_bytes)

    @world.tool
    def add_book(ctx: seahaven.Ctx, title: str) -> dict[str, Any]:
        """Put a book on the shelf."""
        body = json.dumps({"title": title}).encode()
        result: dict[str, Any] = call_api(ctx, HttpRequest("POST", "/v1/books", body=body))
        return result

    @world.tool
    def get_book(ctx: seahaven.Ctx, book_id: str) -> dict[str, Any]:
        """Fetch one book by id."""
        result: dict[str, Any] = call_api(ctx, HttpRequest("GET", f"/v1/books/{book_id}"))
        return result

    return world


def freeze_stocked(world: seahaven.World) -> None:
    """Freeze the fixture ``stocked``: two books, on a fixed clock at ``NOW``."""
    with world.instance(now=NOW, clock_mode="fixed", seed=1) as inst:
        inst.call("add_book", title="Moby-Dick")
        inst.call("add_book", title="Middlemarch")
        inst.freeze("stocked", "Two books on the shelf.")
