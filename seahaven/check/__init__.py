"""``seahaven check``: every lint, each finding naming the edit that removes it.

``run(explicit_world, start)`` finds the world as every command does, seals
it, and runs every rule the plugins provide (the built-in SH codes are the
framework's own plugin, ``seahaven.check.plugin``). ``render`` prints the
findings and ``exit_code`` says whether they fail a run. A plugin adds rules
by implementing ``seahaven_lint_rules`` and returning ``Rule`` objects.
"""

from __future__ import annotations

from seahaven.check.model import CheckContext, Finding, Rule, Severity, WorldPackage
from seahaven.check.runner import collect_rules, exit_code, render, run

__all__ = [
    "CheckContext",
    "Finding",
    "Rule",
    "Severity",
    "WorldPackage",
    "collect_rules",
    "exit_code",
    "render",
    "run",
]
