"""SH201, SH203, SH208, SH209 and SH301: the rules read from the world's Python.

SH201, SH203 and SH208 read the source alone, so they run even when the world
does not import. SH209 also needs the names the world's ``add_world`` calls
registered, and SH301 needs the package imported.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator

from seahaven.check.model import CheckContext, Finding, Rule

__all__ = ["RULES"]

# The two directories the layout gives a meaning to: importing them is what registers.
REGISTERING = ("tools", "middleware")

_WALL_CLOCK_CALLS = frozenset(
    {
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.date.today",
        "time.time",
        "time.monotonic",
        "time.perf_counter",
    }
)
_UUID_CALLS = frozenset({"uuid.uuid1", "uuid.uuid4"})


def _wall_clock_calls(ctx: CheckContext) -> Iterator[Finding]:
    for module in ctx.sources:
        # Middleware timing a real call with a real clock is what middleware is for.
        if module.area == "middleware":
            continue
        for call, name in module.calls():
            if name in _WALL_CLOCK_CALLS:
                yield WALL_CLOCK_CALL.finding(
                    module.path,
                    call.lineno,
                    f"{name}() reads the wall clock, not the instance's",
                )


def _entropy(ctx: CheckContext) -> Iterator[Finding]:
    for module in ctx.sources:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "random" or alias.name.startswith("random."):
                        yield ENTROPY.finding(
                            module.path,
                            node.lineno,
                            "the standard library's random is imported; it draws from the "
                            "process's entropy, not the instance's seed",
                        )
            elif isinstance(node, ast.ImportFrom) and _is_random(node):
                yield ENTROPY.finding(
                    module.path,
                    node.lineno,
                    f"{', '.join(alias.name for alias in node.names)} is imported from "
                    "the standard library's random, which is not the instance's seed",
                )
        for call, name in module.calls():
            if name is None:
                continue
            if name.startswith("random."):
                yield ENTROPY.finding(
                    module.path,
                    call.lineno,
                    f"{name}() draws from the process's random state, not the instance's seed",
                )
            elif name in _UUID_CALLS:
                yield ENTROPY.finding(
                    module.path,
                    call.lineno,
                    f"{name}() is a fresh identifier on every run, so the run does not replay",
                )


def _is_random(node: ast.ImportFrom) -> bool:
    module = node.module or ""
    return node.level == 0 and (module == "random" or module.startswith("random."))


def _instance_in_call(ctx: CheckContext) -> Iterator[Finding]:
    for module in ctx.sources:
        if module.area not in REGISTERING:
            continue
        for call, _ in module.calls():
            if isinstance(call.func, ast.Attribute) and call.func.attr == "instance":
                yield INSTANCE_IN_CALL.finding(
                    module.path,
                    call.lineno,
                    f"{ast.unparse(call.func)}(...) makes an instance inside a module under "
                    f"{module.area}/, where the world runs inside a call",
                )


def _unregistered_child(ctx: CheckContext) -> Iterator[Finding]:
    world = ctx.world
    if world is None:
        return
    registered = {added.name for added in world.added_worlds}
    listing = ", ".join(sorted(registered)) or "none yet"
    for module in ctx.sources:
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Attribute | ast.Subscript):
                continue
            named = _literal_child(node)
            if named is None or named in registered:
                continue
            yield UNREGISTERED_CHILD.finding(
                module.path,
                node.lineno,
                f"ctx.worlds names {named!r}, which no add_world on world {world.name!r} registers",
                fix=f"name one of the worlds it adds ({listing}), or add the one it means",
            )


def _literal_child(node: ast.Attribute | ast.Subscript) -> str | None:
    """``x`` in ``ctx.worlds.x`` or ``ctx.worlds["x"]``; a handle's own ``.worlds`` is skipped.

    Only a plain name in front of ``.worlds`` counts, so ``ctx.worlds.a.worlds.b``
    (a child's registrations, not this world's) is left alone.
    """
    if isinstance(node, ast.Attribute):
        holder, named = node.value, node.attr
    elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        holder, named = node.value, node.slice.value
    else:
        return None
    if not (
        isinstance(holder, ast.Attribute)
        and holder.attr == "worlds"
        and isinstance(holder.value, ast.Name)
    ):
        return None
    # An underscore name is the container's own attribute, never a child.
    return None if named.startswith("_") else named


def _never_imported(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.world is None or ctx.package is None or ctx.package.directory is None:
        return
    for path in ctx.package.python_files():
        if ctx.package.subdirectory(path) not in REGISTERING:
            continue
        name = ctx.package.module_name(path)
        if name in sys.modules:
            continue
        parent = name.rpartition(".")[0]
        init = f"{ctx.package.name.replace('.', '/')}/__init__.py"
        fix = f"import it from {init}"
        if parent != ctx.package.name:
            fix += f", or from {parent}"
        yield NEVER_IMPORTED.finding(
            path, None, f"module {name!r} is never imported, so it registers nothing", fix=fix
        )


WALL_CLOCK_CALL = Rule(
    code="SH201",
    severity="warning",
    title="a wall-clock call in world code, outside middleware/",
    fix="take the instance's time from ctx.clock.iso() or ctx.clock.now()",
    check=_wall_clock_calls,
)
ENTROPY = Rule(
    code="SH203",
    severity="warning",
    title="random or uuid.uuid4() in world code",
    fix="draw from ctx.ids: ctx.ids.uuid() for an identifier, ctx.ids.random for anything else",
    check=_entropy,
)
INSTANCE_IN_CALL = Rule(
    code="SH208",
    severity="error",
    title=".instance( in a module under tools/ or middleware/",
    fix=(
        "reach an added world with ctx.worlds.<name>.call(...); world.instance(...) belongs in "
        "an eval or a test, never in a call"
    ),
    check=_instance_in_call,
)
UNREGISTERED_CHILD = Rule(
    code="SH209",
    severity="error",
    title="ctx.worlds naming something that is not a registered child",
    fix="name one of the worlds it adds, or add the one it means",
    check=_unregistered_child,
)
NEVER_IMPORTED = Rule(
    code="SH301",
    severity="error",
    title="a module under tools/ or middleware/ that is never imported",
    fix="import it from the package's __init__.py, or from its tools package",
    check=_never_imported,
)

RULES: tuple[Rule, ...] = (
    WALL_CLOCK_CALL,
    ENTROPY,
    INSTANCE_IN_CALL,
    UNREGISTERED_CHILD,
    NEVER_IMPORTED,
)
