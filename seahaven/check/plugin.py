"""The framework's own ``seahaven check`` plugin: the built-in rules, and the ``check`` command.

Registered through ``seahaven.plugins.DEFAULT_PLUGINS`` exactly as an external
plugin is, so the built-in rules reach ``run`` by the same hook an
organisation's rules do.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import typer

from seahaven.check.code_rules import RULES as CODE_RULES
from seahaven.check.declaration_rules import RULES as DECLARATION_RULES
from seahaven.check.fixture_rules import RULES as FIXTURE_RULES
from seahaven.check.model import Rule
from seahaven.check.runner import exit_code, render, run
from seahaven.check.schema_rules import RULES as SCHEMA_RULES
from seahaven.check.surface_rules import RULES as SURFACE_RULES
from seahaven.cli.support import WorldArgument, WorldOption, failures, one_world, session
from seahaven.registry.hookspecs import hookimpl

__all__ = ["BUILTIN_RULES", "check_command", "seahaven_cli", "seahaven_lint_rules"]

BUILTIN_RULES: tuple[Rule, ...] = (
    *SCHEMA_RULES,
    *CODE_RULES,
    *SURFACE_RULES,
    *FIXTURE_RULES,
    *DECLARATION_RULES,
)
"""Every built-in rule, SH101 to SH504; SH501 is discovery's own and has no rule."""


@hookimpl
def seahaven_lint_rules() -> Iterable[Rule]:
    """The built-in rules."""
    return BUILTIN_RULES


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven check``."""
    app.command("check")(check_command)


def check_command(
    ctx: typer.Context, world_argument: WorldArgument = None, world_option: WorldOption = None
) -> None:
    """Run every lint over the world and print each finding; exit 1 if any is an error."""
    world = one_world(world_argument, world_option)
    cli = session(ctx)
    named = world is not None and ":" not in world
    with failures():
        findings = run(
            world,
            Path.cwd(),
            manager=cli.manager,
            registry=cli.registry() if named else None,
        )
    report = render(findings)
    # A clean run says so, so an empty terminal is never mistaken for a check that did not run.
    typer.echo(report if report else "no findings: every lint passed")
    raise typer.Exit(exit_code(findings))
