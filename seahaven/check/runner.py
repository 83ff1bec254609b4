"""``seahaven.check.run``: find the world, seal it, run every rule, and hand back sorted findings.

The order matters in one place. Sealing comes first, so a tree that does not
seal is SH504 and every rule that needs no tree still runs over the rest.
The rules themselves come from the plugin manager's ``seahaven_lint_rules``
hook, the built-in ones included, so an organisation's rules run beside them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from seahaven.check.locate import locate
from seahaven.check.model import CheckContext, Finding, Rule
from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.registry.worlds import Registry

__all__ = ["collect_rules", "exit_code", "render", "run"]


def run(
    explicit_world: str | None,
    start: Path,
    *,
    manager: pluggy.PluginManager | None = None,
    registry: Registry | None = None,
) -> list[Finding]:
    """Every finding for the world found from ``start``, sorted, with paths relative to the project.

    ``explicit_world`` is what ``--world`` takes: a registered name or
    ``module:attr``; ``None`` for the project's own world. ``manager`` supplies
    the rules (the process's plugin manager by default) and ``registry`` is
    where a registered name is looked up.
    """
    if manager is None:
        from seahaven.registry.plugins import plugin_manager

        manager = plugin_manager()
    rules = collect_rules(manager)
    located = locate(explicit_world, start, registry)
    ctx = CheckContext(
        project=located.project,
        package=located.package,
        world=located.world,
        schema_failure=located.schema_failure,
    )
    if ctx.world is not None:
        try:
            ctx.composition = ctx.world.composition()
        except WorldBug as error:
            ctx.seal_error = error
    findings = [] if located.failure is None else [located.failure]
    for rule, origin in rules:
        findings.extend(_apply(rule, origin, ctx))
    return sorted((_presented(finding, ctx) for finding in findings), key=Finding.sort_key)


def collect_rules(manager: pluggy.PluginManager) -> list[tuple[Rule, str]]:
    """Every rule the plugins provide, with the plugin it came from; a code claimed twice fails."""
    claimed: dict[str, str] = {}
    rules: list[tuple[Rule, str]] = []
    for implementation in manager.hook.seahaven_lint_rules.get_hookimpls():
        origin = _describe_plugin(manager, implementation.plugin_name)
        try:
            result = implementation.function()
            if not isinstance(result, Iterable):
                raise WorldBug(f"seahaven_lint_rules returned a {type(result).__name__}")
            provided = list(result)
        except WorldBug as error:
            raise WorldBug(f"{origin} provides a lint rule that is refused: {error}") from None
        except Exception as error:
            raise WorldBug(
                f"{origin} failed while listing its lint rules ({type(error).__name__}: "
                f"{error}); fix or uninstall it"
            ) from None
        for rule in provided:
            if not isinstance(rule, Rule):
                raise WorldBug(
                    f"{origin} returned a {type(rule).__name__} from seahaven_lint_rules; "
                    "return seahaven.check.Rule objects"
                )
            earlier = claimed.get(rule.code)
            if earlier is not None:
                raise WorldBug(
                    f"lint code {rule.code} is claimed by {earlier} and by {origin}; a code "
                    "names one rule, so give one of them another code"
                )
            claimed[rule.code] = origin
            rules.append((rule, origin))
    return rules


def _describe_plugin(manager: pluggy.PluginManager, name: str) -> str:
    origin = getattr(manager, "origin", None)
    if callable(origin):
        described = origin(name).describe()
        if isinstance(described, str):
            return described
    return f"plugin {name!r}"


def _apply(rule: Rule, origin: str, ctx: CheckContext) -> list[Finding]:
    """Run one rule; a rule that raises is the rule's bug, reported as one line naming it."""
    try:
        produced = list(rule.check(ctx))
    except Exception as error:
        raise WorldBug(
            f"lint rule {rule.code} from {origin} raised {type(error).__name__}: {error}; "
            "fix the rule, or uninstall the plugin that provides it"
        ) from error
    for finding in produced:
        if not isinstance(finding, Finding):
            raise WorldBug(
                f"lint rule {rule.code} from {origin} yielded a {type(finding).__name__}; "
                "a rule yields seahaven.check.Finding objects, such as rule.finding(...)"
            )
    return produced


def _presented(finding: Finding, ctx: CheckContext) -> Finding:
    """The finding as it is printed: its path relative to the project, its text on one line."""
    path = finding.path if finding.path.is_absolute() else ctx.project / finding.path
    return Finding(
        code=finding.code,
        severity=finding.severity,
        path=ctx.relative(path),
        line=finding.line,
        message=_relative_text(finding.message, ctx.project),
        fix=_relative_text(finding.fix, ctx.project),
    )


def _relative_text(text: str, project: Path) -> str:
    """``text`` on one line, with the project's own directory dropped from any path in it."""
    for prefix in {str(project) + os.sep, str(project.resolve()) + os.sep}:
        text = text.replace(prefix, "")
    return " ".join(text.split())


def render(findings: Iterable[Finding]) -> str:
    """The printed report: one line per finding, no trailing newline; empty when clean."""
    return "\n".join(
        f"{finding.code} {finding.severity} {finding.location}  {finding.message}  "
        f"fix: {finding.fix}"
        for finding in findings
    )


def exit_code(findings: Iterable[Finding]) -> int:
    """1 when any finding is an error, else 0: warnings alone never fail a run."""
    return 1 if any(finding.severity == "error" for finding in findings) else 0
