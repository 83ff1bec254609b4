"""OpenEnv's client and models, without the web stack its packages import.

Importing anything under ``openenv.core`` runs ``openenv/core/__init__.py``,
which imports ``openenv.core.env_server``, whose ``__init__`` imports OpenEnv's
HTTP server (FastAPI), its MCP environment (fastmcp) and its web interface
(gradio): about ten seconds, before the first line of a client has run. The
client and the typed models need none of it: the modules they use
(``client_types``, ``env_client``, ``env_server.types``, ``env_server.mcp_types``,
``env_server.interfaces``) import only pydantic and websockets.

So this module imports those modules alone. Before it does, and only when the
process has not imported them yet, it puts ``openenv.core`` and
``openenv.core.env_server`` in ``sys.modules`` as the real package modules
with their ``__init__`` not yet run (``importlib.util.module_from_spec``, the
first half of what ``import`` does). The first time anyone asks either
package for a name its ``__init__`` defines (``from openenv.core import
GenericEnvClient``, ``openenv.core.env_server.create_app``, a star import),
the ``__init__`` runs then, once, in that same module object, exactly as
``import`` would have run it; every later ``import`` meets a complete package.
Classes are the same objects either way, so ``isinstance`` checks and
OpenEnv's own code see no difference.

Every name is re-exported here, so a module of this plugin imports OpenEnv's
client and models from ``seahaven_openenv.clients.lean_openenv`` and never triggers
the full import by its own import order.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any

__all__ = [
    "CallToolAction",
    "CallToolObservation",
    "EnvClient",
    "Environment",
    "EnvironmentMetadata",
    "ListToolsAction",
    "ListToolsObservation",
    "Observation",
    "State",
    "StepResult",
    "Tool",
    "ToolError",
    "ToolErrorType",
    "defer_package_init",
]

# One package's __init__ runs once, even when two threads ask for a name at the same moment.
_RUNNING = threading.RLock()


def defer_package_init(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` with its ``__init__`` run on first use.

    Nothing is done for a package already imported (or being imported). Its
    parent must be imported, or deferred, first.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        # Not a package this can defer (OpenEnv laid out differently): import it as it is.
        importlib.import_module(name)
        return
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    ran = False

    def __getattr__(attribute: str) -> Any:
        # The first name asked for runs the package's own __init__ in this module; another
        # thread asking meanwhile waits for it, as it would wait on the import lock.
        nonlocal ran
        with _RUNNING:
            if not ran:
                ran = True
                try:
                    loader.exec_module(module)
                finally:
                    if module.__dict__.get("__getattr__") is __getattr__:
                        del module.__dict__["__getattr__"]
        if attribute in module.__dict__:
            return module.__dict__[attribute]
        own = module.__dict__.get("__getattr__")
        if own is not None and own is not __getattr__:
            return own(attribute)
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


importlib.import_module("openenv")  # its own __init__ is light: it defers everything itself
defer_package_init("openenv.core")
defer_package_init("openenv.core.env_server")

# The leaf modules, which import pydantic and websockets and nothing of OpenEnv's server.
from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402
from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.mcp_types import (  # noqa: E402
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import EnvironmentMetadata, Observation, State  # noqa: E402
