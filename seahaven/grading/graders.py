"""The built-in graders, the ways to combine them, and graders written as Python.

A grader reads an ``Episode`` and returns a ``Grade``. Each built-in grader is
also data: ``spec()`` gives the ``{kind: arguments}`` mapping a scenario's YAML
holds, and ``seahaven.grading.spec.grader_from_spec`` builds the grader back
from it, so a scenario's content hash covers exactly what it grades.

This module gathers the families, each in its own module:

- ``seahaven.grading.base``: the ``Grader`` interface and its ``Reference``;
- ``seahaven.grading.rows``: the end state through SQL on the read-only view
  (``exists``, ``absent``, ``count``) and a table's rows by their net change
  (``changed``, ``deleted``, ``unchanged``);
- ``seahaven.grading.net_change``: the whole net change (``nothing_else_changed``,
  ``matches_solution``);
- ``seahaven.grading.answers`` and ``seahaven.grading.calls``: what the agent did
  (``answer``, ``submitted``, ``called``);
- ``seahaven.grading.combinators``: ``all_of`` (every part; the lowest score),
  ``any_of`` (some part; the highest score) and ``weighted`` (partial credit);
- ``seahaven.grading.python_graders``: ``python`` for any callable.
"""

from __future__ import annotations

from seahaven.grading.answers import Answer, Submitted
from seahaven.grading.base import Grader, Reference
from seahaven.grading.calls import Called
from seahaven.grading.combinators import AllOf, AnyOf, Weighted
from seahaven.grading.matching import OPERATORS
from seahaven.grading.net_change import Allowance, MatchesSolution, NothingElseChanged
from seahaven.grading.python_graders import PythonGrader, as_grader
from seahaven.grading.rows import Absent, Changed, Count, Deleted, Exists, Unchanged

__all__ = [
    "OPERATORS",
    "Absent",
    "AllOf",
    "Allowance",
    "Answer",
    "AnyOf",
    "Called",
    "Changed",
    "Count",
    "Deleted",
    "Exists",
    "Grader",
    "MatchesSolution",
    "NothingElseChanged",
    "PythonGrader",
    "Reference",
    "Submitted",
    "Unchanged",
    "Weighted",
    "as_grader",
]
