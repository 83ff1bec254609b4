"""The web console: one page at ``/console`` that drives a served world by hand.

The page is a client of the world's own ``/ws`` protocol and nothing else: it
opens a session of its own, resets it, lists and calls tools, and reads the
state document with ``state`` frames. Besides the socket it reads three routes
the server already has, all read-only: ``GET /fixtures`` (the fixtures a reset
can name, with their descriptions), ``GET /scenarios`` (the scenarios it can
name, with their instructions), ``GET /metadata`` (the world's name and
version) and ``GET /schema`` (whose ``reset``, the schema of a reset's data, its
episode form is made from). It finds them all relative to its own address, so the same files
work for a world served at the root and for each world under ``/worlds/<name>/``.

The assets are files in the package's ``console/`` folder, of three kinds: the
HTML page, its CSS, and its script as ES modules (``console.js``, the page,
imports ``app.js``, ``dom.js``, ``socket.js``, ``schema_form.js``,
``reset_fields.js``, ``state_view.js`` and ``scenario_view.js``), served as they
are: no build step, nothing fetched from another origin, and a content security
policy that says so. Every response of the console carries that policy and
``nosniff``, its 404s and redirects too, and so does the index of worlds a
server of several shows at ``/``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

__all__ = [
    "ASSETS",
    "CONTENT_SECURITY_POLICY",
    "HEADERS",
    "SCRIPTS",
    "console_redirect",
    "console_router",
    "worlds_index_page",
]

# The page's script, as the ES modules it is split into: console.js (the page) imports the rest.
SCRIPTS: tuple[str, ...] = (
    "console.js",
    "app.js",
    "dom.js",
    "socket.js",
    "schema_form.js",
    "reset_fields.js",
    "state_view.js",
    "scenario_view.js",
)
# The files the page loads beside itself, and the media type each is served with: the only
# names /console/{name} answers, so no other path (and no traversal) reaches a file.
ASSETS: Mapping[str, str] = {
    "console.css": "text/css; charset=utf-8",
    **dict.fromkeys(SCRIPTS, "text/javascript; charset=utf-8"),
}
# Everything comes from the server itself; the socket is the only connection the page opens.
# 'self' in connect-src covers the page's own host over ws: and wss: too (CSP level 3), so
# the page can open no socket to any other host.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS: Mapping[str, str] = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _read(name: str) -> bytes:
    return (resources.files("seahaven_openenv") / "console" / name).read_bytes()


def console_router() -> APIRouter:
    """The console's routes: the page at ``/console`` and its assets under ``/console/``."""
    router = APIRouter()

    @router.get("/console", include_in_schema=False)
    async def page() -> Response:
        return Response(
            _read("index.html"), media_type="text/html; charset=utf-8", headers=dict(HEADERS)
        )

    @router.get("/console/", include_in_schema=False)
    async def page_with_slash() -> Response:
        # The page finds its assets and its socket relative to ``.../console``; send a
        # trailing slash back there (a relative Location keeps any path prefix a proxy adds).
        return console_redirect("../console")

    @router.get("/console/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            return Response(
                f"the console has no file {name!r}\n",
                status_code=404,
                media_type="text/plain; charset=utf-8",
                headers=dict(HEADERS),
            )
        return Response(_read(name), media_type=media_type, headers=dict(HEADERS))

    return router


def console_redirect(location: str) -> Response:
    """A permanent redirect to ``location`` (relative, so a proxy's path prefix is kept)."""
    return RedirectResponse(location, status_code=308, headers=dict(HEADERS))


def worlds_index_page(worlds: Sequence[Mapping[str, Any]]) -> Response:
    """The page at ``/`` of a server of several worlds: each world, its console and its socket.

    ``worlds`` is ``GET /worlds``'s listing. The links are relative, as the console's are.
    """
    items = []
    for world in worlds:
        base = str(world["base_path"]).lstrip("/")
        items.append(
            "<li>"
            f'<a href="{html.escape(base)}/console">{html.escape(str(world["name"]))}</a> '
            f"{html.escape(str(world['version']))}: {html.escape(str(world['description']))}"
            f"<br>sessions at <code>{html.escape(str(world['base_path']))}/ws</code>"
            "</li>"
        )
    page = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<title>Seahaven worlds</title>\n<link rel="icon" href="data:,">\n</head>\n<body>\n'
        "<h1>Seahaven worlds</h1>\n"
        f"<p>This server serves {len(worlds)} worlds. Each has its own web console, its own "
        "sessions (a WebSocket to its <code>ws</code>) and its own routes under "
        "<code>/worlds/&lt;name&gt;/</code>.</p>\n"
        f'<ul id="worlds">\n{chr(10).join(items)}\n</ul>\n'
        '<p><a href="worlds">GET /worlds</a> lists them as JSON.</p>\n</body>\n</html>\n'
    )
    return Response(page, media_type="text/html; charset=utf-8", headers=dict(HEADERS))
