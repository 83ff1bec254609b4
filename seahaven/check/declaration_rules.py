"""SH502, SH503 and SH504: the world's declarations against its registrations, and the seal."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from seahaven.check.model import CheckContext, Finding, Rule
from seahaven.check.surface_rules import declaration_location
from seahaven.declaration.composition import SealError

__all__ = ["RULES"]

# Where the framework's container class can be imported from.
_WORLDS = frozenset({"seahaven.Worlds", "seahaven.declaration.context.Worlds"})


@dataclass(frozen=True, slots=True)
class _DeclaredWorlds:
    """A ``seahaven.Worlds`` subclass found in the world's code."""

    name: str
    path: Path
    line: int
    # Each annotated attribute and the line it is annotated on.
    annotations: tuple[tuple[str, int], ...]


def _declared_worlds(ctx: CheckContext) -> list[_DeclaredWorlds]:
    """Every ``Worlds`` subclass in the package, direct or through another one declared there."""
    candidates: list[tuple[str, list[str], _DeclaredWorlds]] = []
    for module in ctx.sources:
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = []
            for base in node.bases:
                resolved = module.resolve(base)
                if resolved is None and isinstance(base, ast.Name):
                    # A base defined in this same module.
                    resolved = f"{module.name}.{base.id}"
                if resolved is not None:
                    bases.append(resolved)
            annotations = tuple(
                (statement.target.id, statement.lineno)
                for statement in node.body
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            )
            declared = _DeclaredWorlds(node.name, module.path, node.lineno, annotations)
            candidates.append((f"{module.name}.{node.name}", bases, declared))
    known = set(_WORLDS)
    found: dict[str, _DeclaredWorlds] = {}
    changed = True
    while changed:
        changed = False
        for qualified, bases, declared in candidates:
            if qualified not in found and any(base in known for base in bases):
                found[qualified] = declared
                known.add(qualified)
                changed = True
    return sorted(found.values(), key=lambda item: (str(item.path), item.line))


def _annotated_unregistered(ctx: CheckContext) -> Iterator[Finding]:
    world = ctx.world
    if world is None:
        return
    registered = {added.name for added in world.added_worlds}
    listing = ", ".join(sorted(registered)) or "none yet"
    for declared in _declared_worlds(ctx):
        for name, line in declared.annotations:
            # No child can be spelled with a leading underscore, so such a name is not a handle.
            if name.startswith("_") or name in registered:
                continue
            yield ANNOTATED_UNREGISTERED.finding(
                declared.path,
                line,
                f"{declared.name} annotates {name!r}, which no add_world on world "
                f"{world.name!r} registers",
                fix=f"annotate one of the names it does add ({listing}), or drop the attribute",
            )


def _registered_unannotated(ctx: CheckContext) -> Iterator[Finding]:
    world = ctx.world
    if world is None:
        return
    declared = _declared_worlds(ctx)
    # A world that declares no class has opted out of the static check, which is allowed.
    if not declared:
        return
    annotated = {name for item in declared for name, _ in item.annotations}
    # The class that already declares the most handles is the one to extend.
    first = max(declared, key=lambda item: len(item.annotations))
    for added in world.added_worlds:
        if added.name in annotated:
            continue
        yield REGISTERED_UNANNOTATED.finding(
            first.path,
            first.line,
            f"{added.describe()} registers {added.name!r}, which no declared Worlds subclass "
            "annotates",
            fix=f"add `{added.name}: seahaven.WorldHandle` to {first.name}",
        )


def _does_not_seal(ctx: CheckContext) -> Iterator[Finding]:
    error = ctx.seal_error
    if error is None:
        return
    declaration = error.declaration if isinstance(error, SealError) else None
    if declaration is not None:
        path, line = declaration_location(declaration)
    elif ctx.world is not None and ctx.world.added_worlds:
        path, line = declaration_location(ctx.world.added_worlds[-1])
    else:
        path, line = (ctx.package.location if ctx.package is not None else ctx.project), None
    yield DOES_NOT_SEAL.finding(path, line, f"the composition does not seal: {error}")


ANNOTATED_UNREGISTERED = Rule(
    code="SH502",
    severity="error",
    title="a Worlds subclass annotates a name no add_world registered",
    fix="annotate one of the names it does add, or drop the attribute",
    check=_annotated_unregistered,
)
REGISTERED_UNANNOTATED = Rule(
    code="SH503",
    severity="warning",
    title="a registered child name no declared Worlds subclass annotates",
    fix="add `<name>: seahaven.WorldHandle` to the Worlds subclass",
    check=_registered_unannotated,
)
DOES_NOT_SEAL = Rule(
    code="SH504",
    severity="error",
    title="the world's composition does not seal",
    fix="correct the add_world the message names; nothing can use this world until it seals",
    check=_does_not_seal,
)

RULES: tuple[Rule, ...] = (ANNOTATED_UNREGISTERED, REGISTERED_UNANNOTATED, DOES_NOT_SEAL)
