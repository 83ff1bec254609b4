"""The state document: the framework's envelope around a format's ``state``.

The envelope is the same under every format; the built-in formats are
``seahaven.state_formats``'. The instance is read through its public methods
and the interface ``Instance`` documents for the framework (``lock``,
``runtimes``, ``formatting``, ...). A world's own formatter runs fenced off
from writing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import apsw

from seahaven.declaration.state_formats import BUILTIN_FORMATS, BUILTIN_JSON, encode_json
from seahaven.errors import WorldBug
from seahaven.sandbox import first_keyword
from seahaven.version import VERSION

if TYPE_CHECKING:
    from seahaven.declaration.composition import DeclaredWorld
    from seahaven.instance.view import InstanceView

__all__ = [
    "BUILTIN_FORMATS",
    "build_document",
    "document_json",
    "document_without_instance",
]


def build_document(instance: InstanceView, format: str | None) -> dict[str, Any]:
    """``inst.state(format)``: the whole document, in ``format`` or the instance's own."""
    instance.calls.check_usable()
    instance.calls.refuse_inside("state cannot run inside a transaction; read it between calls")
    with instance.calls.lock:
        instance.calls.check_usable()
        name = instance.state_format if format is None else format
        formatter = instance.world.resolve_state_format(name)
        document = _envelope(instance, name)
        document["state"] = run_formatter(instance, name, formatter)
        return document


def document_json(
    instance: InstanceView, format: str | None = None, *, fields: Mapping[str, Any] | None = None
) -> str:
    """``inst.state_json(format)``: the document as compact JSON text, never built as dicts.

    The text is what ``json.dumps(document, separators=(",", ":"),
    ensure_ascii=False, allow_nan=False)`` writes for the document
    ``inst.state(format)`` returns, after ``document[key] = value`` for each of
    ``fields``: a key the document has keeps its place, and a new one follows
    ``state``. A server that adds fields of its own (an episode id the client
    chose, a step count) sends the document this way without re-encoding the
    change log on every frame. A value JSON cannot carry raises ``ValueError``,
    as ``json.dumps`` would.
    """
    instance.calls.check_usable()
    instance.calls.refuse_inside("state cannot run inside a transaction; read it between calls")
    with instance.calls.lock:
        instance.calls.check_usable()
        name = instance.state_format if format is None else format
        formatter = instance.world.resolve_state_format(name)
        envelope = _envelope(instance, name)
        encoded = BUILTIN_JSON.get(formatter)
        if encoded is not None:
            state_text = encoded(instance)
        else:
            state_text = encode_json(run_formatter(instance, name, formatter))
    following: list[str] = []
    for key, value in (fields or {}).items():
        if key == "state":
            state_text = encode_json(value)
        elif key in envelope:
            envelope[key] = value
        else:
            following.append("," + encode_json(key) + ":" + encode_json(value))
    head = encode_json(envelope)
    return head[:-1] + ',"state":' + state_text + "".join(following) + "}"


def _envelope(instance: InstanceView, name: str) -> dict[str, Any]:
    """Every field of the document but ``state``, in the document's order."""
    fixture_files = instance.fixture_files
    return {
        "format": name,
        "seahaven_version": VERSION,
        "world": {"name": instance.world.name, "version": instance.world.version},
        "composition": {report.path: report.to_dict() for report in instance.composition()},
        "fixture": None
        if fixture_files is None
        else {
            "id": instance.fixture,
            "nodes": {path: {"file_sha256": digest} for path, digest in fixture_files.items()},
        },
        "episode_id": instance.id,
        "seed": instance.caller_seed,
        "now": instance.clock.iso(),
        "clock_mode": instance.clock.mode,
        "startup": instance.startup,
        "setup_sql": instance.setup_sql,
        "call_count": instance.call_count,
    }


def document_without_instance(world: DeclaredWorld, format: str | None = None) -> dict[str, Any]:
    """The document a server answers before its session has an instance.

    Every field an instance would fill is ``None``, ``call_count`` is 0, and
    ``state`` is what the format (the world's pin by default) renders with no
    instance, so a grader reads one shape whether or not an episode began.
    """
    name = world.pinned_state_format if format is None else format
    formatter = world.resolve_state_format(name)
    try:
        state = formatter(world, None)
    except WorldBug:
        raise
    except Exception as error:
        raise WorldBug(
            f"state format {name!r} raised {type(error).__name__} with no instance: {error}; "
            "a formatter is also called before the first reset, with instance=None"
        ) from error
    if not isinstance(state, dict):
        raise WorldBug(
            f"state format {name!r} returned {type(state).__name__} with no instance; it must "
            "return a dict"
        )
    return {
        "format": name,
        "seahaven_version": VERSION,
        "world": {"name": world.name, "version": world.version},
        "composition": None,
        "fixture": None,
        "episode_id": None,
        "seed": None,
        "now": None,
        "clock_mode": None,
        "startup": None,
        "setup_sql": None,
        "call_count": 0,
        "state": state,
    }


def run_formatter(
    instance: InstanceView, name: str, formatter: Callable[[Any, Any], dict[str, Any]]
) -> dict[str, Any]:
    """Run a formatter, refusing one that writes or returns something that is not JSON."""
    if formatter in BUILTIN_FORMATS.values():
        # A built-in only copies records: it neither writes nor calls into the instance, so
        # it runs unfenced, and what it returns is JSON already.
        try:
            state = formatter(instance.world, instance)
        except WorldBug:
            raise
        except Exception as error:
            raise WorldBug(
                f"state format {name!r} raised {type(error).__name__}: {error}"
            ) from error
        return state
    wrote = f"state format {name!r} wrote to the instance; a formatter only reads"
    changes = [runtime.total_changes() for runtime in instance.calls.runtimes]
    # Only a world's own formatter is fenced off from writing; the fence refuses the
    # write rather than finding it later.
    guard = _ReadOnlyGuard(instance)
    try:
        with instance.calls.formatting():
            try:
                guard.install()
                state = formatter(instance.world, instance)
            finally:
                guard.remove()
    except WorldBug:
        raise
    except Exception as error:
        if guard.refused:
            raise WorldBug(wrote) from error
        raise WorldBug(f"state format {name!r} raised {type(error).__name__}: {error}") from error
    if guard.refused:
        raise WorldBug(wrote)
    if [runtime.total_changes() for runtime in instance.calls.runtimes] != changes:
        raise WorldBug(wrote)
    if not isinstance(state, dict):
        raise WorldBug(
            f"state format {name!r} returned {type(state).__name__}; it must return a dict, "
            "the value of the document's state"
        )
    try:
        json.dumps(state)
    except (TypeError, ValueError) as error:
        raise WorldBug(
            f"state format {name!r} returned something JSON cannot carry: {error}"
        ) from None
    return state


class _ReadOnlyGuard:
    """A check of every statement on every node's connection for the length of one formatter run.

    An exec tracer, not an authorizer: SQLite hands it each statement prepared and not
    yet run, and it stops one that would change a database (a row, the schema: what
    SQLite does not call read-only) or attach one, as ``WRITE_ACTIONS`` names them; a
    pragma runs, as it did under the authorizer (opening a reader on a store on disk
    switches its journal). Setting an authorizer would make SQLite prepare every
    statement of the connection again, which a kept connection exists to avoid.
    """

    __slots__ = ("_conns", "_previous", "refused")

    def __init__(self, instance: InstanceView) -> None:
        self._conns = [runtime.conn for runtime in instance.calls.runtimes]
        self._previous: list[Any] = []
        self.refused = False

    def __call__(self, cursor: apsw.Cursor, statement: str, bindings: Any) -> bool:
        keyword = first_keyword(statement)
        if keyword == "PRAGMA" or (cursor.is_readonly and keyword not in _ATTACHING):
            return True
        self.refused = True
        return False

    def install(self) -> None:
        for conn in self._conns:
            self._previous.append(conn.exec_trace)
            conn.exec_trace = self

    def remove(self) -> None:
        for conn, previous in zip(self._conns, self._previous, strict=False):
            conn.exec_trace = previous


_ATTACHING = frozenset({"ATTACH", "DETACH"})
