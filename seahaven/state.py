"""The state document: the framework's envelope around a format's ``state``.

The envelope is the same under every format. The built-in formats copy the
change log the instance already rendered when each call committed, so a
document costs serialisation and no database work.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.instance import Instance
    from seahaven.world import World

__all__ = ["BUILTIN_FORMATS", "build_document"]


def _whole_log(world: World, instance: Instance | None) -> dict[str, Any]:
    """``seahaven.state/1``: every record of the change log."""
    if instance is None:
        return {"db": {"log": []}}
    return {"db": {"log": [record.to_dict() for record in instance._change_log]}}


def _last_step(world: World, instance: Instance | None) -> dict[str, Any]:
    """``seahaven.state+last_step/1``: the records of the most recent call only."""
    if instance is None or instance.call_count == 0:
        return {"db": {"log": []}}
    last = instance.call_count - 1
    return {"db": {"log": [r.to_dict() for r in instance._change_log if r.i == last]}}


def _with_calls(world: World, instance: Instance | None) -> dict[str, Any]:
    """``seahaven.state+calls/1``: the whole log, plus the call log."""
    state = _whole_log(world, instance)
    state["calls"] = [] if instance is None else [r.to_dict() for r in instance._call_log]
    return state


BUILTIN_FORMATS: dict[str, Callable[[Any, Any], dict[str, Any]]] = {
    "seahaven.state/1": _whole_log,
    "seahaven.state+last_step/1": _last_step,
    "seahaven.state+calls/1": _with_calls,
}


def build_document(instance: Instance, format: str | None) -> dict[str, Any]:
    """The whole document for ``instance``, in ``format`` or the instance's own."""
    from seahaven import __version__

    name = instance.state_format if format is None else format
    formatter = instance.world.resolve_state_format(name)
    fixture_files = instance._fixture_files
    document: dict[str, Any] = {
        "format": name,
        "seahaven_version": __version__,
        "world": {"name": instance.world.name, "version": instance.world.version},
        "composition": {report.path: report.to_dict() for report in instance._reports},
        "fixture": None
        if fixture_files is None
        else {
            "id": instance.fixture,
            "nodes": {path: {"file_sha256": digest} for path, digest in fixture_files.items()},
        },
        "episode_id": instance.id,
        "seed": instance._caller_seed,
        "now": instance.clock.iso(),
        "clock_mode": instance.clock.mode,
        "startup": copy.deepcopy(instance._startup_rendered),
        "setup_sql": instance.setup_sql,
        "call_count": instance.call_count,
    }
    document["state"] = run_formatter(instance, name, formatter)
    return document


def run_formatter(
    instance: Instance, name: str, formatter: Callable[[Any, Any], dict[str, Any]]
) -> dict[str, Any]:
    """Run a formatter, refusing one that writes or returns something that is not JSON."""
    previous = instance._formatting
    changes = [runtime.conn.total_changes() for runtime in instance._nodes]
    instance._formatting = True
    try:
        state = formatter(instance.world, instance)
    except WorldBug:
        raise
    except Exception as error:
        raise WorldBug(f"state format {name!r} raised {type(error).__name__}: {error}") from error
    finally:
        instance._formatting = previous
    if [runtime.conn.total_changes() for runtime in instance._nodes] != changes:
        raise WorldBug(f"state format {name!r} wrote to the instance; a formatter only reads")
    if not isinstance(state, dict):
        raise WorldBug(
            f"state format {name!r} returned {type(state).__name__}; it must return a dict, "
            "the value of the document's state"
        )
    if formatter not in BUILTIN_FORMATS.values():
        try:
            json.dumps(state)
        except (TypeError, ValueError) as error:
            raise WorldBug(
                f"state format {name!r} returned something JSON cannot carry: {error}"
            ) from None
    return state
