"""``seahaven worlds list`` and ``seahaven worlds show``: what is installed, and its shape.

``list`` loads every registered world to count its tools and fixtures; an
entry that cannot be loaded is reported on its own line on stderr and the
others are still listed. ``show`` prints one world's composition tree (paths,
scopes, aliases) and its flat tool surface with the node that owns each tool;
``--tool NAME`` prints what one tool takes instead, and ``--json`` gives every
tool's description and input schema as well.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seahaven.cli.support import (
    WorldArgument,
    WorldOption,
    fail,
    failures,
    one_line,
    one_world,
    session,
)
from seahaven.declaration.composition import ROOT_PATH
from seahaven.errors import SeahavenError
from seahaven.registry.hookspecs import hookimpl

if TYPE_CHECKING:
    from seahaven.declaration.composition import Composition, Node, SurfaceEntry
    from seahaven.declaration.world import World
    from seahaven.registry.worlds import WorldSpec

__all__ = ["added_worlds", "seahaven_cli"]

worlds_app = typer.Typer(
    name="worlds",
    help="The installed worlds: list them, or show one's composition and tools.",
    no_args_is_help=True,
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@dataclass(frozen=True, slots=True)
class _Listing:
    """One row of ``worlds list``: a registry entry, and what loading it told us."""

    spec: WorldSpec
    world: World | None
    tools: int | None
    fixtures: int | None
    problems: tuple[str, ...]

    def adds(self) -> list[str]:
        if self.world is None:
            return []
        return [_added_label(added.name, added.world.name) for added in self.world.added_worlds]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "value": self.spec.value,
            "version": self.world.version if self.world is not None else None,
            "distribution": self.spec.distribution,
            "distribution_version": self.spec.version,
            "provider": self.spec.provider,
            "tools": self.tools,
            "fixtures": self.fixtures,
            "adds": [] if self.world is None else added_worlds(self.world),
            "problems": list(self.problems),
        }


def added_worlds(world: World) -> list[dict[str, str]]:
    """What ``world`` adds, as data: each ``add_world``'s name, and the world and version added."""
    return [
        {"name": added.name, "world": added.world.name, "version": added.world.version}
        for added in world.added_worlds
    ]


def _added_label(name: str, world_name: str) -> str:
    return name if name == world_name else f"{name} ({world_name})"


def _inspect(spec: WorldSpec) -> _Listing:
    """Load one entry and count what it has, keeping each failure as a problem."""
    problems = []
    version_problem = spec.version_problem()
    if version_problem is not None:
        problems.append(version_problem)
    # Anything one world raises is its own problem: it must never hide the other rows.
    try:
        world = spec.load()
    except Exception as error:
        # spec.load() names the entry in its own WorldBug; anything else is named here.
        if isinstance(error, SeahavenError):
            text = str(error)
        else:
            text = f"{spec.describe()} cannot be loaded: {_error_text(error)}"
        return _Listing(spec, None, None, None, (*problems, text))
    tools: int | None = None
    fixtures: int | None = None
    try:
        tools = len(world.composition().surface)
    except Exception as error:
        problems.append(f"{spec.describe()} does not seal: {_error_text(error)}")
    try:
        fixtures = len(world.fixtures())
    except Exception as error:
        problems.append(
            f"{spec.describe()} has a fixture that cannot be read: {_error_text(error)}"
        )
    return _Listing(spec, world, tools, fixtures, tuple(problems))


def _error_text(error: Exception) -> str:
    if isinstance(error, SeahavenError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def _table(rows: list[list[str]]) -> list[str]:
    """Columns padded to line up, two spaces apart, no trailing blanks."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


@worlds_app.command("list")
def list_worlds(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every installed world: name, version, distribution, tools, fixtures, and what it adds."""
    with failures():
        registry = session(ctx).registry()
        listings = [_inspect(spec) for spec in registry.specs()]
        if as_json:
            rendered = [listing.to_json() for listing in listings]
            for name, claimants in registry.conflicts().items():
                rendered.extend(
                    _Listing(spec, None, None, None, (registry.conflict_message(name),)).to_json()
                    for spec in claimants
                )
            rendered.sort(key=lambda item: str(item["name"]))
            typer.echo(json.dumps(rendered, indent=2))
        elif not listings and not registry.problems:
            # Said on stderr, so stdout stays the (empty) table a script reads.
            typer.echo(
                "no worlds are installed: install a world distribution into this environment, "
                "such as one of seahaven's own (pip install -e worlds/payments from its "
                "checkout), or scaffold one with seahaven new NAME",
                err=True,
            )
        elif listings:
            rows = [["NAME", "VERSION", "DISTRIBUTION", "TOOLS", "FIXTURES", "ADDS"]]
            for listing in listings:
                spec = listing.spec
                rows.append(
                    [
                        spec.name,
                        listing.world.version if listing.world is not None else "?",
                        f"{spec.distribution} {spec.version}"
                        if spec.distribution
                        else spec.provider,
                        "?" if listing.tools is None else str(listing.tools),
                        "?" if listing.fixtures is None else str(listing.fixtures),
                        ", ".join(listing.adds()) or "-",
                    ]
                )
            for line in _table(rows):
                typer.echo(line)
        # Conflicts, version mismatches and failed plugin hooks, then what loading found;
        # a version mismatch is in both, and is printed once.
        problems = [*registry.problems, *(p for listing in listings for p in listing.problems)]
        for problem in dict.fromkeys(problems):
            typer.echo(f"error: {one_line(problem)}", err=True)
        if problems:
            raise typer.Exit(1)


def _tree_lines(composition: Composition) -> list[str]:
    """The composition as an indented tree: each node once, every other route as an alias."""
    lines: list[str] = []

    def describe(node: Node) -> str:
        scope = node.scope if node.scope is not None else "-"
        aliases = ", ".join(node.aliases) or "-"
        return (
            f"{node.path}  world {node.world.name} {node.world.version}  scope {scope}  "
            f"aliases {aliases}  file {node.file_name}"
        )

    def visit(node: Node, depth: int) -> None:
        for name, _added, child in node.edges:
            route = name if node.path == ROOT_PATH else f"{node.path}/{name}"
            if route == child.path:
                lines.append("  " * depth + describe(child))
                visit(child, depth + 1)
            else:
                lines.append("  " * depth + f"{route}  alias of {child.path}")

    root = composition.nodes[0]
    lines.append(describe(root))
    visit(root, 1)
    return lines


def _show_json(world: World, composition: Composition) -> dict[str, Any]:
    return {
        "name": world.name,
        "version": world.version,
        "nodes": [
            {
                "path": node.path,
                "world": node.world.name,
                "version": node.world.version,
                "scope": node.scope,
                "aliases": list(node.aliases),
                "file": node.file_name,
                "adds": {name: child.path for name, _, child in node.edges},
            }
            for node in composition.nodes
        ],
        "tools": [_tool_json(entry) for entry in composition.surface],
    }


def _tool_json(entry: SurfaceEntry) -> dict[str, Any]:
    """One tool of the surface as data: where it comes from, and what the agent reads of it."""
    listing = entry.tool.listing()
    return {
        "name": entry.name,
        "tool": entry.tool.name,
        "owner": entry.owner.path,
        "world": entry.owner.world.name,
        "description": listing["description"],
        "input_schema": listing["input_schema"],
    }


def _argument_lines(entry: SurfaceEntry) -> list[str]:
    """What one tool takes: per argument, its name and type, then its description indented."""
    schema = entry.tool.schema
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    lines = [f"arguments ({len(properties)}):"]
    for name, spec in properties.items():
        needed = "required" if name in required else f"default {json.dumps(spec.get('default'))}"
        lines.append(f"  {name}: {_type_text(spec)} ({needed})")
        description = spec.get("description")
        lines.append(f"      {one_line(description) if description else '(no description)'}")
    return lines


def _type_text(spec: dict[str, Any]) -> str:
    """A short reading of a JSON schema's type: ``string``, ``integer | null``, ``"a" | "b"``."""
    if "enum" in spec:
        return " | ".join(json.dumps(value) for value in spec["enum"])
    if "const" in spec:
        return json.dumps(spec["const"])
    if "$ref" in spec:
        return str(spec["$ref"]).rpartition("/")[2]
    for key in ("anyOf", "oneOf"):
        if isinstance(spec.get(key), list):
            return " | ".join(_type_text(branch) for branch in spec[key])
    kind = spec.get("type")
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"array of {_type_text(spec['items'])}"
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    return str(kind) if kind is not None else "any"


@worlds_app.command("show")
def show_world(
    ctx: typer.Context,
    world_argument: WorldArgument = None,
    world_option: WorldOption = None,
    tool: Annotated[
        str | None,
        typer.Option(
            "--tool",
            metavar="NAME",
            help="Show what one tool takes (its arguments, types and descriptions) instead.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """One world's composition tree (paths, scopes, aliases) and its flat tool surface."""
    name = one_world(world_argument, world_option)
    with failures():
        cli_session = session(ctx)
        found = cli_session.find_world(name)
        world = found.world
        composition = world.composition()
        if tool is not None:
            _show_tool(composition, tool, as_json=as_json)
            return
        if as_json:
            typer.echo(json.dumps(_show_json(world, composition), indent=2))
            return
        spec = cli_session.registry().get(name) if name is not None and ":" not in name else None
        source = spec.describe() if spec is not None else f"{found.module}:{found.attribute}"
        typer.echo(f"{world.name} {world.version}  from {source}")
        if world.description:
            typer.echo(one_line(world.description))
        typer.echo("")
        typer.echo(f"stores ({len(composition.nodes)}):")
        for line in _tree_lines(composition):
            typer.echo(f"  {line}")
        typer.echo("")
        typer.echo(f"tools ({len(composition.surface)}):")
        rows = [["NAME", "OWNER", "WORLD", "TOOL"]]
        for entry in composition.surface:
            rows.append([entry.name, entry.owner.path, entry.owner.world.name, entry.tool.name])
        if composition.surface:
            for line in _table(rows):
                typer.echo(f"  {line}")


def _show_tool(composition: Composition, name: str, *, as_json: bool) -> None:
    """Print one tool of the surface: its description and its arguments (or all of it as JSON)."""
    entry = next((entry for entry in composition.surface if entry.name == name), None)
    if entry is None:
        names = [entry.name for entry in composition.surface]
        close = [candidate for candidate in names if name.lower() in candidate.lower()]
        hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
        fail(
            f"world {composition.nodes[0].world.name!r} has no tool {name!r} on its surface"
            f"{hint} (seahaven worlds show lists them all)"
        )
    if as_json:
        typer.echo(json.dumps(_tool_json(entry), indent=2))
        return
    origin = "" if entry.owner.path == ROOT_PATH else f"  (from {entry.owner.path})"
    typer.echo(f"{entry.name}{origin}")
    typer.echo("")
    for line in (entry.tool.description or "(no description)").splitlines():
        typer.echo(f"  {line}".rstrip())
    typer.echo("")
    for line in _argument_lines(entry):
        typer.echo(line)


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven worlds list`` and ``seahaven worlds show``."""
    app.add_typer(worlds_app, name="worlds")
