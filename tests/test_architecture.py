"""The shape of the package: which way its imports go, read from the source.

Every import is read, at module level and inside functions, except those under
``if TYPE_CHECKING:`` (types only, never run). The layers below are the ones
``docs/architecture.md`` draws; an import may reach its own layer or one
beneath it, and the only imports that reach up are the six public facades,
each a one-line delegation. The same reading checks that no module imports a
private name of another, and that only ``seahaven.instance`` reaches into an
instance's private attributes: the rest of the framework uses the interface
``Instance`` documents for it.

The first-party plugins are read the same way: ``PLUGIN_LAYOUTS`` gives each
its own layers and the core modules it may import, and ``docs/architecture.md``
shows both in its section on the plugins. A plugin's imports form no cycle even
counting those under ``if TYPE_CHECKING:`` and those inside functions.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import seahaven

PACKAGE = Path(seahaven.__file__).resolve().parent
ROOT = PACKAGE.parent

# Bottom first. A module may import from its own layer and the layers before it. A member is a
# module or a package; a package's modules sit in its layer unless a module is placed on its own.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "foundations",
        frozenset({"seahaven.errors", "seahaven.fixtures.location", "seahaven.version"}),
    ),
    ("stores", frozenset({"seahaven.stores"})),
    ("sandbox", frozenset({"seahaven.sandbox"})),
    (
        "fixture files",
        frozenset(
            {
                "seahaven.fixtures.sidecar",
                "seahaven.fixtures.verification",
                "seahaven.fixtures.writing",
            }
        ),
    ),
    ("declaration", frozenset({"seahaven.declaration", "seahaven.world"})),
    ("registry", frozenset({"seahaven.registry"})),
    (
        "fixture storage",
        frozenset({"seahaven.fixtures.listing", "seahaven.fixtures.preparation"}),
    ),
    ("calls", frozenset({"seahaven.calls", "seahaven.instances"})),
    ("instance", frozenset({"seahaven.instance"})),
    (
        "above the instance",
        frozenset(
            {
                "seahaven.fixtures",
                "seahaven.fixtures.freezing",
                "seahaven.helpers",
                "seahaven.sql_tools",
                "seahaven.toolkit",
            }
        ),
    ),
    ("grading", frozenset({"seahaven.grading"})),
    ("scenarios", frozenset({"seahaven.scenarios"})),
    ("episodes", frozenset({"seahaven.episodes"})),
    ("evaluation", frozenset({"seahaven.evaluation"})),
    ("cli", frozenset({"seahaven.cli"})),
    ("check", frozenset({"seahaven.check"})),
    (
        "facades",
        frozenset(
            {
                "seahaven",
                "seahaven.agents",
                "seahaven.http",
                "seahaven.inspect",
                "seahaven.mcp",
                "seahaven.openenv",
                "seahaven.pytest_plugin",
                "seahaven.ray",
                "seahaven.verifiers",
            }
        ),
    ),
)

# (importer, the function holding the import, imported): the imports that reach upward.
FACADES = frozenset(
    {
        ("seahaven.declaration.world", "World.instance", "seahaven.instance.creation"),
        ("seahaven.declaration.world", "World.fixtures", "seahaven.fixtures.listing"),
        ("seahaven.instance.instance", "Instance.freeze", "seahaven.fixtures.freezing"),
    }
)


@dataclass(frozen=True, slots=True)
class Import:
    """One ``import`` or ``from ... import`` statement, as the package's source holds it."""

    module: str
    # The dotted name of the enclosing function or class, or "" at module level.
    scope: str
    line: int
    # The modules it reads from, and each name it takes from them (for ``from`` imports).
    source: str
    names: tuple[str, ...]
    type_checking: bool


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).with_suffix("")
        if "docs" in relative.parts or "__pycache__" in relative.parts:
            continue
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_names()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path) -> Iterator[Import]:
    """Every import in ``module``, with where it sits and whether only a type checker runs it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"

    def walk(node: ast.AST, scope: list[str], type_checking: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk_one(statement, scope, True)
                for statement in child.orelse:
                    yield from walk_one(statement, scope, type_checking)
            else:
                yield from walk_one(child, scope, type_checking)

    def walk_one(node: ast.AST, scope: list[str], type_checking: bool) -> Iterator[Import]:
        where = ".".join(scope)
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, where, node.lineno, alias.name, (), type_checking)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node)
            names = tuple(alias.name for alias in node.names)
            yield Import(module, where, node.lineno, source, names, type_checking)
        inner = [*scope, node.name] if isinstance(node, ast.FunctionDef | ast.ClassDef) else scope
        yield from walk(node, inner, type_checking)

    yield from walk(tree, [], False)


IMPORTS = [found for module, path in MODULES.items() for found in imports_of(module, path)]


def targets(found: Import) -> set[str]:
    """The package's modules an import runs: a submodule named in a ``from``, else the source."""
    if not found.names:
        return {found.source} if found.source in MODULES else set()
    hit = set()
    for name in found.names:
        submodule = f"{found.source}.{name}"
        if submodule in MODULES:
            hit.add(submodule)
        elif found.source in MODULES:
            hit.add(found.source)
    return hit


def edges(*, facades: bool, type_checking: bool = False) -> dict[str, set[str]]:
    """Who imports whom; with ``facades=False`` the facades are left out.

    Imports for type checking only are counted with ``type_checking=True``.
    """
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in IMPORTS:
        if found.type_checking and not type_checking:
            continue
        for target in targets(found):
            if target == found.module:
                continue
            if not facades and (found.module, found.scope, target) in FACADES:
                continue
            graph[found.module].add(target)
    return graph


def layer_of(module: str) -> int:
    for position, (_, members) in enumerate(LAYERS):
        if module in members:
            return position
    # A package's modules (seahaven.stores.*, seahaven.cli.*) live in the package's layer.
    parent = module.rpartition(".")[0]
    if parent not in ("", "seahaven") and parent in MODULES:
        return layer_of(parent)
    raise AssertionError(
        f"{module} is in no layer; place it in LAYERS here and in docs/architecture.md"
    )


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or ``None``."""
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        trail.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*trail[trail.index(target) :], target]
            if target not in state:
                cycle = visit(target)
                if cycle is not None:
                    return cycle
        trail.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle is not None:
                return cycle
    return None


# --- the tests ----------------------------------------------------------------------------------


def test_the_reading_finds_the_package() -> None:
    assert {"seahaven.world", "seahaven.instance.instance", "seahaven.cli.support"} <= set(MODULES)
    assert any(found.scope == "World.instance" for found in IMPORTS)
    assert any(found.type_checking for found in IMPORTS)


def test_no_imports_form_a_cycle_but_the_facades() -> None:
    cycle = find_cycle(edges(facades=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_imports_form_a_cycle_even_through_the_facades() -> None:
    # A facade reaches up, but what it reaches never imports its way back at run time: the
    # instance, its creation and its snapshots share what they need from the layer beneath.
    cycle = find_cycle(edges(facades=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# The one loop left, through a type-checking import only: ``Instance.snapshot()`` returns a
# ``Snapshot`` and ``Snapshot.restore()`` an ``Instance``, both public types. Cutting it makes
# ``Snapshot`` generic over the instance class, which changes the annotation of every user of
# ``Snapshot`` (the serving plugin's among them); docs/architecture.md says so.
TYPE_LOOPS_LEFT = frozenset({("seahaven.instance.snapshots", "seahaven.instance.instance")})


def test_no_imports_form_a_cycle_even_counting_those_for_type_checking() -> None:
    # Every import counts: at module level, inside functions and under TYPE_CHECKING. Where two
    # modules need each other's types, the type is a protocol in the lower one.
    graph = edges(facades=True, type_checking=True)
    for importer, imported in TYPE_LOOPS_LEFT:
        graph[importer].discard(imported)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_each_loop_left_is_a_type_checking_import_still_in_the_code() -> None:
    # So the exception cannot outlive the loop, nor hide an import that runs.
    for importer, imported in TYPE_LOOPS_LEFT:
        found = [f for f in IMPORTS if f.module == importer and imported in targets(f)]
        assert found and all(f.type_checking for f in found)
        assert find_cycle(edges(facades=True, type_checking=True)) is not None


MAX_MODULE_LINES = 600


def test_no_module_of_the_core_is_over_600_lines() -> None:
    # Split by what a piece holds, a module per concern, not at the line count.
    long = {
        module: count
        for module, path in MODULES.items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_every_module_sits_in_one_layer() -> None:
    for module in MODULES:
        placed = [name for name, members in LAYERS if module in members]
        assert len(placed) <= 1, f"{module} is in {placed}"
        layer_of(module)


def test_imports_reach_only_their_own_layer_or_below_but_the_facades() -> None:
    upward = []
    for found in IMPORTS:
        if found.type_checking:
            continue
        for target in targets(found):
            if (found.module, found.scope, target) in FACADES:
                continue
            if layer_of(target) > layer_of(found.module):
                upward.append(
                    f"{found.module}:{found.line} ({LAYERS[layer_of(found.module)][0]}) imports "
                    f"{target} ({LAYERS[layer_of(target)][0]})"
                )
    assert upward == []


@pytest.mark.parametrize(("module", "scope", "target"), sorted(FACADES))
def test_each_facade_is_a_one_line_delegation(module: str, scope: str, target: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    class_name, method_name = scope.split(".")
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    [method] = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method_name]
    body = method.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    assert len(body) == 2, f"{scope}: an import and a return, nothing else"
    imported, returned = body
    assert isinstance(imported, ast.ImportFrom) and imported.module == target
    assert isinstance(returned, ast.Return) and isinstance(returned.value, ast.Call)
    called = returned.value.func
    assert isinstance(called, ast.Name)
    assert called.id in {alias.asname or alias.name for alias in imported.names}


def test_every_facade_named_is_in_the_code() -> None:
    # So the list of exceptions cannot outlive the code it excuses.
    present = {
        (found.module, found.scope, target) for found in IMPORTS for target in targets(found)
    }
    assert present >= FACADES


def test_no_module_imports_a_private_name() -> None:
    private = [
        f"{found.module}:{found.line} imports {name} from {found.source}"
        for found in IMPORTS
        for name in found.names
        if name.startswith("_") and found.source != "__future__"
    ] + [
        f"{found.module}:{found.line} imports {found.source}"
        for found in IMPORTS
        if not found.names and any(part.startswith("_") for part in found.source.split("."))
    ]
    assert private == []


INSTANCE_MODULE = "seahaven.instance.instance"


def _instance_private_names() -> frozenset[str]:
    """Every private attribute the instance module's classes define or assign."""
    return _private_names_of(INSTANCE_MODULE, on_any_object=True)


def _private_names_of(module: str, *, on_any_object: bool) -> frozenset[str]:
    """The private attributes ``module``'s classes define, and those it assigns.

    Assignments count on ``self`` and ``cls``, or on any object with ``on_any_object``.
    """
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AnnAssign):
                    name = item.name if isinstance(item, ast.FunctionDef) else None
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        name = item.target.id
                    if name is not None:
                        names.add(name)
                if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets
                ):
                    names.update(
                        element.value
                        for element in ast.walk(item.value)
                        if isinstance(element, ast.Constant) and isinstance(element.value, str)
                    )
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and (
                on_any_object
                or (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            )
        ):
            names.add(node.attr)
    return frozenset(name for name in names if name.startswith("_") and not name.endswith("__"))


def _private_reaches(path: Path, private: frozenset[str]) -> Iterator[str]:
    """Each place in ``path`` that reads or writes one of ``private`` on another object."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in private
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            yield f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in private
        ):
            call = f"{node.func.id}(..., {node.args[1].value!r})"
            yield f"{path.relative_to(ROOT)}:{node.lineno} {call}"


def test_only_the_instance_module_reaches_into_an_instances_private_attributes() -> None:
    private = _instance_private_names()
    assert {"_parts", "_connections", "_inspect_db", "_close_connections"} <= private
    reaches = [
        reach
        for module, path in MODULES.items()
        if module != INSTANCE_MODULE
        for reach in _private_reaches(path, private)
    ]
    assert reaches == []


def test_no_module_reaches_into_private_attributes_only_another_module_defines() -> None:
    defined = {module: _private_names_of(module, on_any_object=False) for module in MODULES}
    reaches = []
    for module, path in MODULES.items():
        others = (
            frozenset().union(*(names for other, names in defined.items() if other != module))
            - defined[module]
        )
        reaches.extend(_private_reaches(path, others))
    assert reaches == []


PLUGINS = sorted((ROOT / "plugins").glob("*/src/*/**/*.py"))


@pytest.mark.skipif(not PLUGINS, reason="the first-party plugins are not in this checkout")
def test_the_first_party_plugins_use_no_private_name_of_the_framework() -> None:
    private = _instance_private_names()
    problems = []
    for path in PLUGINS:
        for found in imports_of(path.stem, path):
            if not found.source.startswith("seahaven"):
                continue
            problems.extend(
                f"{path.relative_to(ROOT)}:{found.line} imports {name} from {found.source}"
                for name in found.names
                if name.startswith("_")
            )
        problems.extend(_private_reaches(path, private))
    assert problems == []


def _table_rows(heading: str) -> list[tuple[str, list[str]]]:
    """The rows of the first table under ``heading`` in docs/architecture.md: (layer, names).

    A row with an empty first cell continues the layer above it; names are the second
    cell's backticked entries, a package spelled ``stores/``.
    """
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    rows: list[tuple[str, list[str]]] = []
    layer = ""
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[1].startswith("`"):
            continue
        layer = cells[0] or layer
        rows.append((layer, re.findall(r"`([^`]+)`", cells[1])))
    return rows


def _documented_name(module: str) -> str:
    """A module as the docs name it: its path under ``seahaven/`` without ``.py``."""
    return "__init__" if module == "seahaven" else "/".join(module.split(".")[1:])


def test_docs_architecture_first_table_is_the_layers_in_order() -> None:
    rows = _table_rows("The layers")
    assert [layer for layer, _ in rows] == [name for name, _ in LAYERS]
    documented = {name.rstrip("/") for _, names in rows for name in names}
    packages = {
        _documented_name(member)
        for _, members in LAYERS
        for member in members
        if member.count(".") == 1 and (PACKAGE / member.split(".")[1] / "__init__.py").is_file()
    }
    # Every layer package is in the table (the facades are listed above it, by name).
    assert packages - {"fixtures"} <= documented


def test_docs_architecture_places_every_module_in_its_layer() -> None:
    documented: dict[str, str] = {}
    for layer, names in _table_rows("What each module holds"):
        for name in names:
            documented[name] = layer
    problems = []
    for module in MODULES:
        name = _documented_name(module)
        parts = name.split("/")
        # The most specific row: the module itself, else its package as ``pkg/``.
        candidates = [name] + ["/".join(parts[:cut]) + "/" for cut in range(len(parts), 0, -1)]
        found = next((candidate for candidate in candidates if candidate in documented), None)
        if found is None:
            problems.append(f"{module} is in no row of docs/architecture.md's module table")
        elif documented[found] != LAYERS[layer_of(module)][0]:
            problems.append(
                f"{module}: the docs say {documented[found]!r}, "
                f"LAYERS {LAYERS[layer_of(module)][0]!r}"
            )
    stale = [
        name
        for name in documented
        if not any(
            _documented_name(module) == name or _documented_name(module).startswith(name)
            for module in MODULES
        )
    ]
    assert problems == []
    assert stale == [], "rows for modules that are gone"


# --- the first-party plugins ----------------------------------------------------------------


@dataclass(frozen=True)
class PluginLayout:
    """A first-party plugin's layers (bottom first) and the core modules it may import."""

    package: str
    # (layer, its modules), bottom first; a module is named without the package ("card"),
    # the package itself as "__init__". A module may import its own layer and those before it.
    layers: tuple[tuple[str, frozenset[str]], ...]
    # Every core module the plugin's source imports, and none it does not.
    core: frozenset[str]


PLUGIN_LAYOUTS: dict[str, PluginLayout] = {
    "openenv": PluginLayout(
        "seahaven_openenv",
        (
            ("the wire", frozenset({"wire"})),
            ("the session and its pool", frozenset({"sessions"})),
            ("the connection and the front", frozenset({"front"})),
            ("the console", frozenset({"console"})),
            ("the routes and the app", frozenset({"web"})),
            ("the OpenEnv side", frozenset({"clients"})),
            ("the hub", frozenset({"hub"})),
            ("commands", frozenset({"__init__", "plugin", "serve"})),
        ),
        frozenset(
            {
                "seahaven",
                "seahaven.cli.support",
                "seahaven.stores.clock",
                "seahaven.calls.concurrency",
                "seahaven.declaration.context",
                "seahaven.registry.discovery",
                "seahaven.errors",
                "seahaven.evaluation",
                "seahaven.fixtures",
                "seahaven.registry.hookspecs",
                "seahaven.declaration.instance_options",
                "seahaven.stores.names",
                "seahaven.sandbox",
                "seahaven.scenarios",
                "seahaven.instance.state",
                "seahaven.declaration.state_formats",
                "seahaven.stores.storage",
                "seahaven.calls.tool_results",
                "seahaven.world",
            }
        ),
    ),
    "mcp": PluginLayout(
        "seahaven_mcp",
        (
            ("foundations", frozenset({"calls", "jsonrpc", "options"})),
            ("transport", frozenset({"stdio"})),
            ("the server", frozenset({"bound", "server"})),
            ("commands", frozenset({"__init__", "plugin"})),
        ),
        frozenset(
            {
                "seahaven",
                "seahaven.cli.support",
                "seahaven.errors",
                "seahaven.registry.hookspecs",
                "seahaven.declaration.instance_options",
                "seahaven.scenarios",
                "seahaven.stores.storage",
                "seahaven.calls.tool_results",
            }
        ),
    ),
    "ray": PluginLayout(
        "seahaven_ray",
        (
            ("foundations", frozenset({"connection", "trial_worker"})),
            ("the pool", frozenset({"cluster"})),
            ("runners", frozenset({"plugin", "trials"})),
            ("the package", frozenset({"__init__"})),
        ),
        frozenset(
            {
                "seahaven",
                "seahaven.episodes.files",
                "seahaven.episodes",
                "seahaven.evaluation",
                "seahaven.registry.hookspecs",
                "seahaven.scenarios",
                "seahaven.stores.storage",
            }
        ),
    ),
    "inspect": PluginLayout(
        "seahaven_inspect",
        (
            ("foundations", frozenset({"samples", "tools"})),
            ("the episode", frozenset({"episodes"})),
            ("solver, scorer and scripted model", frozenset({"agent", "scorer", "testing"})),
            ("the task", frozenset({"task"})),
            ("the package", frozenset({"__init__", "registry"})),
        ),
        frozenset(
            {
                "seahaven.errors",
                "seahaven.evaluation",
                "seahaven.grading",
                "seahaven.scenarios",
                "seahaven.stores.storage",
            }
        ),
    ),
    "verifiers": PluginLayout(
        "seahaven_verifiers",
        (
            ("foundations", frozenset({"env", "tasks"})),
            ("the harness", frozenset({"harness"})),
            ("the package", frozenset({"__init__"})),
        ),
        frozenset({"seahaven.errors", "seahaven.evaluation", "seahaven.scenarios"}),
    ),
    "agents": PluginLayout(
        "seahaven_agents",
        (
            ("foundations", frozenset({"retries", "schemas", "testing.replies"})),
            ("the model client", frozenset({"client"})),
            ("the loop", frozenset({"loop"})),
            ("the agent", frozenset({"agent"})),
            ("the user", frozenset({"user"})),
            (
                "the scripted server",
                frozenset(
                    {
                        "testing",
                        "testing.__main__",
                        "testing.scripts",
                        "testing.server",
                        "testing.users",
                    }
                ),
            ),
            ("the package", frozenset({"__init__"})),
        ),
        frozenset({"seahaven", "seahaven.evaluation", "seahaven.scenarios"}),
    ),
}
"""Each first-party plugin's layout, by its directory under ``plugins/``."""

FIRST_PARTY_PACKAGES = frozenset(layout.package for layout in PLUGIN_LAYOUTS.values())


def plugin_modules(plugin: str) -> dict[str, Path]:
    """Every module of a plugin's package by dotted name (the package by its own name)."""
    layout = PLUGIN_LAYOUTS[plugin]
    source = ROOT / "plugins" / plugin / "src"
    found = {}
    for path in sorted((source / layout.package).rglob("*.py")):
        parts = list(path.relative_to(source).with_suffix("").parts)
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _short(package: str, module: str) -> str:
    """A plugin module as its layout names it: without the package, the package as __init__."""
    return "__init__" if module == package else module.removeprefix(f"{package}.")


def plugin_layer(plugin: str, module: str) -> int:
    """The position of a plugin module's layer; a subpackage's modules live in its layer."""
    layout = PLUGIN_LAYOUTS[plugin]
    name = _short(layout.package, module)
    for candidate in (name, name.split(".")[0]):
        for position, (_, members) in enumerate(layout.layers):
            if candidate in members:
                return position
    raise AssertionError(
        f"{module} is in no layer of PLUGIN_LAYOUTS[{plugin!r}]; place it in one, here and in "
        "docs/architecture.md"
    )


def _plugin_targets(found: Import, modules: dict[str, Path]) -> set[str]:
    """The plugin's own modules an import runs, as ``targets`` finds the core's."""
    if not found.names:
        return {found.source} if found.source in modules else set()
    hit = set()
    for name in found.names:
        submodule = f"{found.source}.{name}"
        if submodule in modules:
            hit.add(submodule)
        elif found.source in modules:
            hit.add(found.source)
    return hit


def plugin_imports(plugin: str) -> Iterator[tuple[Import, Path]]:
    """Every import in the plugin's source, read as the core's are, with the file it is in."""
    for module, path in plugin_modules(plugin).items():
        for found in imports_of(module, path):
            yield found, path


PLUGIN_NAMES = sorted(PLUGIN_LAYOUTS)
HAS_PLUGINS = all((ROOT / "plugins" / plugin / "src").is_dir() for plugin in PLUGIN_NAMES)
needs_plugins = pytest.mark.skipif(
    not HAS_PLUGINS, reason="the first-party plugins are not in this checkout"
)


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGIN_NAMES)
def test_every_plugin_module_sits_in_exactly_one_layer(plugin: str) -> None:
    layout = PLUGIN_LAYOUTS[plugin]
    placed = [name for _, members in layout.layers for name in members]
    assert len(placed) == len(set(placed)), f"{plugin}: a module is in two layers"
    names = {_short(layout.package, module) for module in plugin_modules(plugin)}
    tops = {name.split(".")[0] for name in names}
    assert set(placed) <= names | tops, f"{plugin}: placed but not in the code"
    for module in plugin_modules(plugin):
        plugin_layer(plugin, module)


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGIN_NAMES)
def test_plugin_imports_reach_only_their_own_layer_or_below(plugin: str) -> None:
    modules = plugin_modules(plugin)
    problems = []
    for found, path in plugin_imports(plugin):
        if found.type_checking:
            continue
        for target in _plugin_targets(found, modules):
            if plugin_layer(plugin, target) > plugin_layer(plugin, found.module):
                problems.append(
                    f"{path.relative_to(ROOT)}:{found.line} {found.module} imports {target}, "
                    "a layer above it"
                )
    assert problems == []


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGIN_NAMES)
def test_a_plugin_imports_exactly_the_core_modules_its_layout_lists(plugin: str) -> None:
    layout = PLUGIN_LAYOUTS[plugin]
    used: set[str] = set()
    problems = []
    for found, path in plugin_imports(plugin):
        root = found.source.split(".")[0]
        if root in FIRST_PARTY_PACKAGES and root != layout.package:
            problems.append(
                f"{path.relative_to(ROOT)}:{found.line} imports {found.source}, another plugin"
            )
        if root != "seahaven":
            continue
        reached = targets(found) or {found.source}
        used |= reached
        problems.extend(
            f"{path.relative_to(ROOT)}:{found.line} imports {target}, which PLUGIN_LAYOUTS"
            f"[{plugin!r}] does not list among the core modules it may import"
            for target in sorted(reached - layout.core)
        )
    assert problems == []
    assert layout.core - used == set(), f"{plugin}: listed, but no longer imported"


def _documented_plugins() -> dict[str, dict[str, str]]:
    """Plugin to module-to-layer, ``(core)`` for its core modules, from docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## The plugins", 1)[1].split("\n## ", 1)[0]
    documented: dict[str, dict[str, str]] = {}
    for part in section.split("\n### ")[1:]:
        heading, _, body = part.partition("\n")
        plugin = heading.strip().strip("`").removeprefix("plugins/")
        rows = documented.setdefault(plugin, {})
        for line in body.splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) < 2 or not cells[1].startswith("`"):
                continue
            for name in cells[1].replace("`", "").split(","):
                rows[name.strip().rstrip("/")] = cells[0]
    return documented


@needs_plugins
def test_docs_architecture_shows_each_plugins_layout() -> None:
    documented = _documented_plugins()
    expected = {
        plugin: {
            **{name: layer for layer, members in layout.layers for name in members},
            **dict.fromkeys(layout.core, "(core)"),
        }
        for plugin, layout in PLUGIN_LAYOUTS.items()
    }
    assert documented == expected


def plugin_graph(plugin: str) -> dict[str, set[str]]:
    """Who imports whom in a plugin's source: every import, type-checking and function-level too."""
    modules = plugin_modules(plugin)
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for found, _ in plugin_imports(plugin):
        graph[found.module] |= _plugin_targets(found, modules) - {found.module}
    return graph


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGIN_NAMES)
def test_no_plugin_imports_form_a_cycle_counting_type_checking_and_function_imports(
    plugin: str,
) -> None:
    # Where two modules need each other's types, the type belongs in the lower one.
    cycle = find_cycle(plugin_graph(plugin))
    assert cycle is None, f"{plugin}: import cycle: " + " -> ".join(cycle or [])


def test_the_plugin_cycle_reading_counts_type_checking_and_function_imports() -> None:
    # What the test above relies on, on a graph made up here: two modules that need each
    # other only for types, or only inside a function, are still a cycle.
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    if HAS_PLUGINS:
        graph = plugin_graph("openenv")
        # ``models`` reads the reset schema inside a function: that edge is counted.
        assert "seahaven_openenv.sessions.reset_data" in graph["seahaven_openenv.clients.models"]


MAX_MODULE_LINES = 600
"""No module of the framework or of a first-party plugin is longer: split it by what it holds."""

SOURCE_SUFFIXES = (".py", ".js")


def modules_over_the_limit(directory: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Each module (Python, or a script of the console) under ``directory`` over ``limit`` lines.

    The same reading serves the core (``seahaven/``) and each plugin's ``src``.
    """
    found = []
    for path in sorted(directory.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or "__pycache__" in path.parts:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            found.append(f"{shown}: {lines} lines")
    return found


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGIN_NAMES)
def test_no_plugin_module_is_over_the_line_limit(plugin: str) -> None:
    assert modules_over_the_limit(ROOT / "plugins" / plugin / "src") == []


def test_the_line_limit_reading_counts_python_and_scripts(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "long.js").write_text("let x;\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (tmp_path / "long.css").write_text("a {}\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    found = modules_over_the_limit(tmp_path)
    assert [entry.split(":")[0].rsplit("/", 1)[-1] for entry in found] == ["long.js", "long.py"]
