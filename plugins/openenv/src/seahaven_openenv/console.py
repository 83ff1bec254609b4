"""The web console: one page at ``/console`` that drives a served world by hand.

The page is a client of the world's own ``/ws`` protocol and nothing else: it
opens a session of its own, resets it, lists and calls tools, and reads the
state document with ``state`` frames. Besides the socket it reads two routes
the server already has, both read-only: ``GET /fixtures`` (the fixtures a reset
can name, with their descriptions) and ``GET /metadata`` (the world's name and
version). It finds all three relative to its own address, so the same files
work for a world served at the root and for each world under ``/worlds/<name>/``.

The assets are three files in the package's ``console/`` folder (HTML, CSS and
one JavaScript module), served as they are: no build step, nothing fetched
from another origin, and a content security policy that says so.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

__all__ = ["ASSETS", "CONTENT_SECURITY_POLICY", "console_router"]

# The files the page loads beside itself, and the media type each is served with.
ASSETS = {
    "console.css": "text/css; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
}
# Everything comes from the server itself; the socket is the only connection the page opens.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _read(name: str) -> bytes:
    return (resources.files("seahaven_openenv") / "console" / name).read_bytes()


def console_router() -> APIRouter:
    """The console's routes: the page at ``/console`` and its two assets under ``/console/``."""
    router = APIRouter()

    @router.get("/console", include_in_schema=False)
    async def page() -> Response:
        return Response(
            _read("index.html"), media_type="text/html; charset=utf-8", headers=_HEADERS
        )

    @router.get("/console/", include_in_schema=False)
    async def page_with_slash() -> Response:
        # The page finds its assets and its socket relative to ``.../console``; send a
        # trailing slash back there (a relative Location keeps any path prefix a proxy adds).
        return RedirectResponse("../console", status_code=308)

    @router.get("/console/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            return Response(
                f"the console has no file {name!r}\n", status_code=404, media_type="text/plain"
            )
        return Response(_read(name), media_type=media_type, headers=_HEADERS)

    return router
