"""The declaration of worlds: a ``World``, its tools, and what world code is given.

``world`` (``World`` and its registration verbs), ``tool`` (a function's
argument model and schema), ``context`` (``Ctx``, ``Worlds``, ``WorldHandle``),
``composition`` (the ``add_world`` tree sealed into nodes and a flat surface),
``state_formats`` (the built-in formats a world may pin) and
``instance_options`` (the options a world's instances are made with). It sits
on the stores and beneath the call path: nothing here imports an instance, and
the layers above read a world through the ``DeclaredWorld`` protocol.

This package's face re-exports what the other layers and plugins use; the
framework's own modules import each module by its path.
"""

from seahaven.declaration.composition import Composition, Node, SurfaceEntry, seal
from seahaven.declaration.context import Ctx, InstanceInfo, WorldHandle, Worlds
from seahaven.declaration.instance_options import InstanceOptions
from seahaven.declaration.state_formats import BUILTIN_FORMATS

__all__ = [
    "BUILTIN_FORMATS",
    "Composition",
    "Ctx",
    "InstanceInfo",
    "InstanceOptions",
    "Node",
    "SurfaceEntry",
    "WorldHandle",
    "Worlds",
    "seal",
]
