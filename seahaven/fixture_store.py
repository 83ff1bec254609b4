"""Split into the modules of ``seahaven.fixtures``; this path warns and gives their names.

Its names now live in ``sidecar``, ``listing``, ``verification``,
``preparation`` and ``writing``.
"""

from seahaven.moved import gather_module

gather_module(__name__)
