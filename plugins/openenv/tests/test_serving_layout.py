"""The serving plugin laid out by concern: each module imports first, and none in a cycle."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import seahaven_openenv
from seahaven_openenv.sessions import session
from seahaven_openenv.web.http import messages
from seahaven_openenv.web.http import server as http_app
from seahaven_openenv.wire import frames

PACKAGE = Path(seahaven_openenv.__file__).parent

# The modules the split made, each of which must import first in a fresh interpreter.
NEW_MODULES = [
    "seahaven_openenv.wire.frames",
    "seahaven_openenv.wire.close_codes",
    "seahaven_openenv.wire.inbox",
    "seahaven_openenv.sessions.accept_failures",
    "seahaven_openenv.sessions.session_pool",
    "seahaven_openenv.sessions.work",
    "seahaven_openenv.sessions.fork",
    "seahaven_openenv.front.connection",
    "seahaven_openenv.web.routes",
    "seahaven_openenv.web.server",
    "seahaven_openenv.web.http",
    "seahaven_openenv.web.http.messages",
    "seahaven_openenv.web.http.server",
    "seahaven_openenv.web.http.launch",
    "seahaven_openenv.sessions.reset_data",
    "seahaven_openenv.sessions.outcomes",
    "seahaven_openenv.sessions.resume",
    "seahaven_openenv.front.routing",
    "seahaven_openenv.front.handoff",
    "seahaven_openenv.front.workers",
    "seahaven_openenv.clients.errors",
    "seahaven_openenv.hub",
]


def test_the_app_factory_imports_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from seahaven_openenv.web.server import app, app_for_worlds, capacity_for

    assert app is seahaven_openenv.app and app_for_worlds is seahaven_openenv.app_for_worlds
    assert callable(capacity_for)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("seahaven_openenv.web.server", "Hub"),
        ("seahaven_openenv.web.server", "serve_connection"),
        ("seahaven_openenv.web.server", "FrameError"),
        ("seahaven_openenv.sessions.session_pool", "Hub"),
    ],
)
def test_the_old_names_kept_for_one_release_are_gone(module: str, name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), name)


def test_the_old_http_server_path_is_gone() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("seahaven_openenv.http_server")


def test_frame_error_lives_in_frames_and_session_gives_the_same_class() -> None:
    assert session.FrameError is frames.FrameError


def test_read_frame_reads_a_typed_frame_and_the_old_readers_agree() -> None:
    frame = frames.read_frame('{"type": "step", "data": {"type": "list_tools"}, "id": 7}')
    assert frame == frames.Frame("step", {"type": "list_tools"}, 7)
    assert frames.parse_frame('{"type": "close"}') == ("close", {}, None)
    assert frames.parse('{"type": "state"}') == ("state", {})
    with pytest.raises(frames.FrameError) as refused:
        frames.read_frame('{"type": "nope", "id": "a"}')
    assert refused.value.code == "UNKNOWN_TYPE" and refused.value.request_id == "a"


def test_the_http_package_keeps_its_public_face() -> None:
    import seahaven_openenv.web.http as package

    import seahaven.http

    assert seahaven.http is package
    assert package.HttpRequest is messages.HttpRequest
    assert package.HttpResponse is messages.HttpResponse
    assert package.HttpWorldApp is http_app.HttpWorldApp  # type: ignore[attr-defined]
    assert sorted(package.__all__) == [
        "DEFAULT_MAX_BODY_BYTES",
        "DEFAULT_MAX_INSTANCES",
        "HttpHandler",
        "HttpRequest",
        "HttpResponse",
        "app",
        "main",
        "running",
        "serve",
    ]


@pytest.mark.parametrize("module", NEW_MODULES)
def test_each_new_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # Imported first, a module caught in a cycle finds a half-made module and fails.
    subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", f"import {module}"],
        check=True,
        timeout=120,
    )


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (types only, never run)."""
    nodes: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        nodes.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return nodes


def _imports(path: Path) -> set[str]:
    """The ``seahaven_openenv`` modules ``path`` imports when it runs, at any level of the file."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("seahaven_openenv.")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_of_the_plugin_imports_itself_back_through_others() -> None:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {
        name: {n for n in _imports(path) if n in modules} - {name} for name, path in modules.items()
    }

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            name, trail = stack.pop()
            for target in graph[name]:
                if target == start:
                    return [*trail, start]
                if target not in seen:
                    seen.add(target)
                    stack.append((target, [*trail, target]))
        return None

    cycles = {name: cycle_from(name) for name in modules}
    assert {name: found for name, found in cycles.items() if found} == {}
