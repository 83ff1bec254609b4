"""What travels to a worker process, made in the parent: the policy, the packs, the users.

Only the standard library's ``pickle`` carries them. Each is pickled before any
worker starts, so what cannot travel is refused with a ``WorldBug`` naming what
to give instead, and no trial runs. A pack's worlds travel by the name they are
registered under (``registered_name``), and are found again by it there
(``registered_world``); Ray's runner sends packs the same way.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from typing import Any

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.policies import Policy
from seahaven.evaluation.users import UserSource
from seahaven.scenarios.pack import ScenarioSet

__all__ = [
    "PackShipment",
    "one_line",
    "pack_shipment",
    "policy_shipment",
    "registered_name",
    "registered_world",
    "user_shipment",
]


@dataclass(frozen=True, slots=True)
class PackShipment:
    """How one pack reaches a worker: by ``source`` (loaded there), or ``pickled`` whole."""

    name: str
    version: str
    hash: str
    source: str | None
    pickled: bytes | None


def one_line(error: BaseException, limit: int = 500) -> str:
    """``error``'s text on one line, cut at ``limit`` characters."""
    return " ".join(str(error).split())[:limit]


def policy_shipment(policy: Policy, name: str) -> bytes:
    """``policy`` pickled for a worker; a ``WorldBug`` saying what to give when it cannot be."""
    return _pickled(
        policy,
        f"the policy {name}",
        "a function defined at the top of a module, an object of a class a module defines, or "
        "'module:function'",
    )


def _pickled(value: Any, what: str, give: str) -> bytes:
    """``value`` pickled; a ``WorldBug`` naming ``what`` and what to ``give`` when it cannot be."""
    try:
        return pickle.dumps(value)
    except Exception as error:
        raise WorldBug(
            f"{what} cannot be sent to worker processes: it does not pickle "
            f"({type(error).__name__}: {one_line(error)}); give {give}, or run the trials in "
            "this process only (workers=1, the default)"
        ) from None


def pack_shipment(pack: ScenarioSet) -> PackShipment:
    """How ``pack`` reaches the workers: pickled, else by its source (loaded there).

    Pickled first, as loading a pack again costs a worker far more (the company
    pack: 0.9 s of YAML and hashing, against 11 ms to unpickle).
    """
    try:
        pickled = _dump_pack(pack)
    except Exception as error:
        if pack.source is not None:
            return PackShipment(pack.name, pack.version, pack.hash, pack.source, None)
        if isinstance(error, WorldBug):
            raise
        raise WorldBug(
            f"pack {pack.name!r} was built in Python and cannot be sent to worker processes: it "
            f"does not pickle ({type(error).__name__}: {one_line(error)}); publish it under the "
            "seahaven.scenarios entry points, or load it with "
            "seahaven.scenarios.load_pack('module:attr'), so that each worker loads it itself, "
            "or run the trials in this process only (workers=1)"
        ) from None
    return PackShipment(pack.name, pack.version, pack.hash, None, pickled)


def _dump_pack(pack: ScenarioSet) -> bytes:
    """The pack pickled, each ``World`` in it by its registered name."""

    class PackPickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, World):
                return (registered_world, (registered_name(pack, obj),))
            return NotImplemented

    buffer = io.BytesIO()
    PackPickler(buffer).dump(pack)
    return buffer.getvalue()


def registered_name(
    pack: ScenarioSet,
    world: World,
    *,
    where: str = "worker processes",
    otherwise: str = "run the trials in this process only (workers=1)",
) -> str:
    """The name a ``World`` held by ``pack`` travels by to ``where``: its registered name.

    A world does not pickle; it travels as the name the registry loads it by on the
    other side (``registered_world``), so it must be the world registered under its
    name. Raises ``WorldBug`` naming the fixes otherwise, ``otherwise`` among them.
    """
    from seahaven.registry.worlds import registry

    try:
        registered: World | None = registry().load(world.name)
    except Exception:
        registered = None
    if registered is not world:
        raise WorldBug(
            f"pack {pack.name!r} holds the World {world.name!r} itself, which cannot be sent to "
            f"{where} (a world does not pickle) and is not the world registered under that "
            f"name; give its scenarios world={world.name!r} for an installed world, or "
            f"world='module:attr', or {otherwise}"
        )
    return world.name


def registered_world(name: str) -> World:
    """The world registered as ``name`` here: how a pickled pack's worlds are found again."""
    from seahaven.registry.worlds import registry

    return registry().load(name)


def user_shipment(user: UserSource, name: str) -> bytes:
    """``user`` pickled for a worker; a ``WorldBug`` saying what to give when it cannot be."""
    return _pickled(user, f"the users' source {name}", "an object of a class a module defines")
