"""What importing the client and the server loads (issue 38): never OpenEnv's web stack.

Importing anything under ``openenv.core`` the usual way imports OpenEnv's HTTP
server, fastmcp and gradio (about ten seconds). The client and the models take
OpenEnv's client modules alone (``seahaven_openenv.clients.lean_openenv``), and the
server imports no OpenEnv at all. Each check runs in a fresh interpreter and
reads ``sys.modules``: a behaviour, not a timing (benchmarks/startup.py times it).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("gradio", "fastmcp", "fastapi", "uvicorn", "openenv.core.env_server.http_server")


def loaded_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after running ``code``."""
    report = f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    script = f"{code}\nimport json, sys\n{report}"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "code",
    [
        "import seahaven.openenv",
        "from seahaven.openenv import SeahavenClient",
        "from seahaven.openenv import SeahavenClient, SeahavenState, SeahavenObservation",
        "from seahaven.openenv import trial_runner, RemoteSession",
        "from seahaven_openenv.clients import client, models, remote",
    ],
    ids=["package", "client", "models", "remote-eval", "modules"],
)
def test_the_client_loads_no_web_stack(code: str) -> None:
    assert loaded_after(code) == []


def test_the_server_loads_no_openenv_web_interface() -> None:
    loaded = loaded_after("from seahaven.openenv import app, serve")
    assert "gradio" not in loaded and "fastmcp" not in loaded
    assert "fastapi" in loaded  # the server's own


def test_openenv_in_full_still_imports_after_the_client() -> None:
    # The packages the client imported lean run their own __init__ when a name is asked for,
    # and every class is the one object either way.
    code = """
from seahaven.openenv import SeahavenClient, SeahavenObservation
from seahaven_openenv.clients import lean_openenv
import openenv.core, openenv.core.env_server as env_server
from openenv.core import GenericEnvClient, EnvClient
from openenv.core.env_server import CallToolAction, create_app, WSErrorResponse
from openenv.core.env_server.mcp_types import CallToolObservation
from openenv import AutoEnv
assert EnvClient is lean_openenv.EnvClient and issubclass(SeahavenClient, EnvClient)
assert CallToolAction is lean_openenv.CallToolAction
assert issubclass(SeahavenObservation, CallToolObservation)
assert "GenericEnvClient" in openenv.core.__all__ and callable(create_app)
assert env_server.Observation is lean_openenv.Observation
"""
    assert "gradio" in loaded_after(code)


def test_two_threads_asking_for_a_deferred_name_both_get_it() -> None:
    code = """
import threading
from seahaven_openenv.clients import lean_openenv
import openenv.core, openenv.core.env_server as env_server
found = {}
def ask(package, name):
    found[name] = getattr(package, name)
threads = [
    threading.Thread(target=ask, args=(openenv.core, "GenericEnvClient")),
    threading.Thread(target=ask, args=(env_server, "create_app")),
    threading.Thread(target=ask, args=(env_server, "HTTPEnvServer")),
]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert set(found) == {"GenericEnvClient", "create_app", "HTTPEnvServer"}, found
try:
    openenv.core.no_such_name
except AttributeError:
    pass
else:
    raise AssertionError("a name the package does not define must be an AttributeError")
"""
    assert "gradio" in loaded_after(code)
