"""The console's files: its script as ES modules, each served as JavaScript, nothing else served.

The page loads ``console.js`` with ``<script type="module">``, and every module
it imports, directly or through another, is one of the assets ``/console/{name}``
answers; a name outside the list (a path that climbs out included) is a 404.
"""

from __future__ import annotations

import re
from importlib import resources

from fastapi import FastAPI
from fastapi.testclient import TestClient
from seahaven_openenv.console import ASSETS, CONTENT_SECURITY_POLICY, SCRIPTS, console_router

IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w]+\.js)";$', re.MULTILINE)


def _client() -> TestClient:
    application = FastAPI()
    application.include_router(console_router())
    return TestClient(application)


def _source(name: str) -> str:
    return (resources.files("seahaven_openenv") / "console" / name).read_text("utf-8")


def test_every_module_the_page_imports_is_an_asset_served_as_javascript() -> None:
    page = _source("index.html")
    assert '<script type="module" src="console/console.js"></script>' in page
    seen: set[str] = set()
    waiting = ["console.js"]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        waiting.extend(IMPORT.findall(_source(name)))
    assert seen == set(SCRIPTS)
    folder = resources.files("seahaven_openenv") / "console"
    # The package's own module (the routes) sits beside the files it serves, and is not one.
    files = {entry.name for entry in folder.iterdir()} - {"__init__.py", "__pycache__"}
    assert files == {"index.html", *ASSETS}
    with _client() as client:
        for name in SCRIPTS:
            answer = client.get(f"/console/{name}")
            assert answer.status_code == 200, name
            assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
            assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert answer.headers["x-content-type-options"] == "nosniff"


def test_no_other_file_is_served() -> None:
    with _client() as client:
        for name in ("server.py", "index.html", "console.mjs", "schema.json", "%2e%2e"):
            answer = client.get(f"/console/{name}")
            assert answer.status_code == 404, name
            assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        for path in ("/console/..%2Fserver.py", "/console/../schema.json"):
            assert client.get(path).status_code == 404, path
