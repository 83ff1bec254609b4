"""SH205, SH206, SH207, SH210 and SH211: the rules that ask the World's registry and its surface."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from seahaven.check.model import CheckContext, Finding, Rule
from seahaven.declaration.composition import DeclaredAddition, SurfaceEntry
from seahaven.declaration.world import World

__all__ = ["RULES", "declaration_location", "source_location"]


def source_location(fn: Callable[..., Any]) -> tuple[Path, int | None] | None:
    """The file and first line of a function, or ``None`` when Python cannot say."""
    target = inspect.unwrap(fn)
    try:
        filename = inspect.getsourcefile(target)
    except TypeError:
        return None
    if filename is None:
        return None
    code = getattr(target, "__code__", None)
    line = code.co_firstlineno if code is not None else None
    return Path(filename).resolve(), line


def declaration_location(added: DeclaredAddition) -> tuple[Path, int | None]:
    """The file and line of an ``add_world`` call, from its recorded origin."""
    filename, _, line = added.origin.rpartition(":")
    if not filename:
        return Path(added.origin), None
    return Path(filename).resolve(), int(line) if line.isdigit() else None


def _empty_description(ctx: CheckContext) -> Iterator[Finding]:
    world = ctx.world
    if world is None:
        return
    for tool in world.tools.values():
        # A control tool is never listed, so no agent reads its description.
        if tool.control or tool.description.strip():
            continue
        located = source_location(tool.fn)
        path, line = located if located is not None else (_fallback(ctx), None)
        yield EMPTY_DESCRIPTION.finding(
            path, line, f"tool {tool.name!r} has an empty description, so no agent can choose it"
        )


def _undescribed_parameters(ctx: CheckContext) -> Iterator[Finding]:
    world = ctx.world
    if world is None:
        return
    for tool in world.tools.values():
        if tool.control:
            continue
        properties = tool.schema.get("properties", {})
        missing = [
            name
            for name, spec in properties.items()
            if not (isinstance(spec.get("description"), str) and spec["description"].strip())
        ]
        if not missing:
            continue
        located = source_location(tool.fn)
        path, first = located if located is not None else (_fallback(ctx), None)
        lines = _parameter_lines(tool.fn)
        for name in missing:
            yield UNDESCRIBED_PARAMETER.finding(
                path,
                lines.get(name, first),
                f"parameter {name!r} of tool {tool.name!r} has no description, so an agent "
                "guesses what to send and a harness that requires one (Inspect AI) refuses "
                "the tool",
            )


def _parameter_lines(fn: Callable[..., Any]) -> dict[str, int]:
    """The line each parameter of ``fn`` is declared on, where the source can be read."""
    target = inspect.unwrap(fn)
    try:
        lines, first = inspect.getsourcelines(target)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            return {argument.arg: first + argument.lineno - 1 for argument in arguments}
    return {}


def _fallback(ctx: CheckContext) -> Path:
    return ctx.package.location if ctx.package is not None else ctx.project


def _mentions(name: str, text: str) -> bool:
    """Whether ``text`` names the tool ``name`` on a word boundary (tool names hold ``-``)."""
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])", text) is not None


def _unreachable_mentions(ctx: CheckContext) -> Iterator[Finding]:
    composition = ctx.composition
    if composition is None:
        return
    surface = composition.surface
    for entry in surface:
        # Only a renamed tool can name a sibling by a spelling the agent does not see.
        if entry.name == entry.tool.name or not entry.via:
            continue
        description = entry.tool.description
        for sibling in entry.owner.world.tools.values():
            if sibling.name == entry.tool.name or not _mentions(sibling.name, description):
                continue
            published = _published(surface, entry, sibling.name)
            if sibling.name in published:
                continue
            seen_as = (
                f"which the agent can call only as {', '.join(map(repr, published))}"
                if published
                else "which is not on the agent's surface at all"
            )
            origin = source_location(entry.tool.fn)
            written_in = f" (written in {origin[0]})" if origin is not None else ""
            path, line = declaration_location(entry.via[0])
            yield UNREACHABLE_MENTION.finding(
                path,
                line,
                f"the description of {entry.name!r}{written_in} names {sibling.name!r}, {seen_as}",
            )


def _published(surface: tuple[SurfaceEntry, ...], entry: SurfaceEntry, tool: str) -> list[str]:
    """Every surface name under which ``entry``'s node publishes its own tool ``tool``."""
    return [
        other.name for other in surface if other.owner is entry.owner and other.tool.name == tool
    ]


def _contributed_twice(ctx: CheckContext) -> Iterator[Finding]:
    composition = ctx.composition
    if composition is None:
        return
    by_tool: dict[tuple[int, str], list[SurfaceEntry]] = {}
    for entry in composition.surface:
        by_tool.setdefault((entry.owner.index, entry.tool.name), []).append(entry)
    for entries in by_tool.values():
        if len(entries) < 2:
            continue
        # Every entry after the first arrives through an add_world; the root's own come first.
        second = entries[1]
        path, line = declaration_location(second.via[0]) if second.via else (_fallback(ctx), None)
        names = ", ".join(repr(entry.name) for entry in entries)
        yield CONTRIBUTED_TWICE.finding(
            path,
            line,
            f"tool {second.tool.name!r} of the store at {second.owner.path!r} is on the "
            f"surface as {names}, two doors to one account",
        )


def _every_world(root: World) -> list[World]:
    """The root and every world it adds, at any depth, each once."""
    seen: dict[int, World] = {}
    pending = [root]
    while pending:
        world = pending.pop(0)
        if id(world) in seen:
            continue
        seen[id(world)] = world
        pending.extend(added.world for added in world.added_worlds)
    return list(seen.values())


def _parsed(fn: Callable[..., Any]) -> tuple[ast.AST, str, int] | None:
    """A function's syntax tree, the name of its ``call`` parameter, and its first line."""
    target = inspect.unwrap(fn)
    try:
        lines, first = inspect.getsourcelines(target)
        parameters = list(inspect.signature(target).parameters)
    except (OSError, TypeError, ValueError):
        return None
    if len(parameters) < 2:
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    return tree, parameters[1], first


def _named_tools(compare: ast.Compare, call: str, tools: set[str]) -> list[str]:
    """The tool names ``compare`` holds against ``<call>.name``, when it does."""
    operands = [compare.left, *compare.comparators]

    def is_call_name(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "name"
            and isinstance(node.value, ast.Name)
            and node.value.id == call
        )

    if not any(is_call_name(node) for node in operands):
        return []
    named: list[str] = []
    for node in operands:
        values = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
        for value in values:
            if isinstance(value, ast.Constant) and value.value in tools:
                named.append(str(value.value))
    return named


def _surface_name_compared(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.world is None:
        return
    for world in _every_world(ctx.world):
        tools = set(world.tools)
        for middleware in world.middlewares:
            parsed = _parsed(middleware)
            located = source_location(middleware)
            if parsed is None or located is None:
                continue
            tree, call, first = parsed
            for node in ast.walk(tree):
                if not isinstance(node, ast.Compare):
                    continue
                for name in _named_tools(node, call, tools):
                    yield SURFACE_NAME_COMPARED.finding(
                        located[0],
                        first + node.lineno - 1,
                        f"middleware {getattr(middleware, '__qualname__', middleware)!r} of "
                        f"world {world.name!r} compares {call}.name with {name!r}, but "
                        f"{call}.name is the name on the surface, which a host's tool_prefix "
                        "changes, so the test stops matching once the world is added",
                        fix=f"compare {call}.tool.name, the tool's own name, which never changes",
                    )


EMPTY_DESCRIPTION = Rule(
    code="SH205",
    severity="warning",
    title="a tool with an empty description",
    fix=(
        "give the function a docstring, which becomes the whole description, or pass "
        "description= to @world.tool"
    ),
    check=_empty_description,
)
UNREACHABLE_MENTION = Rule(
    code="SH206",
    severity="warning",
    title="a prefixed world's description names a sibling tool the agent cannot call",
    fix=(
        "drop the tool_prefix on that add_world, or accept the mention: check never rewrites "
        "a description"
    ),
    check=_unreachable_mentions,
)
CONTRIBUTED_TWICE = Rule(
    code="SH207",
    severity="warning",
    title="one tool of a shared node contributed under two names",
    fix=(
        "give every route but one tool_allow_list=[] or a tool_block_list naming it, or accept "
        "that the agent sees one account twice"
    ),
    check=_contributed_twice,
)

SURFACE_NAME_COMPARED = Rule(
    code="SH210",
    severity="warning",
    title="middleware comparing call.name with one of its own world's tool names",
    fix="compare call.tool.name, the tool's own name, which a tool_prefix never changes",
    check=_surface_name_compared,
)

UNDESCRIBED_PARAMETER = Rule(
    code="SH211",
    severity="warning",
    title="a tool parameter with no description",
    fix=(
        "describe it in the docstring's Args: section (name: what to send), or annotate it "
        "Annotated[T, Field(description=...)]"
    ),
    check=_undescribed_parameters,
)

RULES: tuple[Rule, ...] = (
    EMPTY_DESCRIPTION,
    UNREACHABLE_MENTION,
    CONTRIBUTED_TWICE,
    SURFACE_NAME_COMPARED,
    UNDESCRIBED_PARAMETER,
)
