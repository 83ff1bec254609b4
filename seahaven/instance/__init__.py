"""The instance: a world made into a private copy, and what is read or kept of one.

``instance`` (``Instance``, the public face, delegating to its ``Calls``),
``creation`` (``create_instance``: what ``world.instance(...)`` does),
``snapshots`` (an instance's whole state in memory, restored into new or idle
instances) and ``state`` (the state document). It sits on the call path; the
fixtures' freezing, grading and everything that drives instances sit above.

This package's face re-exports what the other layers and plugins use; the
framework's own modules import each module by its path.
"""

from seahaven.instance.instance import Instance, InstanceParts, live_instances

__all__ = ["Instance", "InstanceParts", "live_instances"]
