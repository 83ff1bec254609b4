"""The process-wide call gate under the path the reference documents.

``default_concurrency``, ``concurrency`` and ``set_concurrency``, the same
functions as ``seahaven.calls.concurrency``, which holds the gate.
"""

from seahaven.calls.concurrency import concurrency, default_concurrency, set_concurrency

__all__ = ["concurrency", "default_concurrency", "set_concurrency"]
