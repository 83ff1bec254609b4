"""``seahaven.toolkit``: what every world would otherwise write for itself, written once.

Four pieces, each optional, each leaving the product's own words to the world:

* ``error_handler(...)`` makes the outermost middleware most worlds want: the
  framework's argument errors restated in the world's own error shape, the
  world's errors and every ``WorldBug`` passed through untouched, and anything
  else (SQL the engine refused included) logged with its traceback and
  replaced by the world's internal error, so an agent never reads a defect.
* ``from_row(Model, row, **values)`` builds a result model from a row, column
  by field name, so a model and its table are not spelled out twice.
* ``encode_cursor``/``decode_cursor`` make opaque cursors tied to one listing
  and its filters, and ``keyset_page``/``split_page`` read one page of rows in a
  total order, so a listing never skips or repeats a row between pages.
* ``rebuild_fixtures(...)`` is the body of a fixture generator's ``main``: it
  rebuilds the fixtures a world ships inside its own package, parents first.

A world whose product does something else (a Stripe-style ``starting_after``,
say) keeps its own, and may still use the pieces that fit.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from seahaven.errors import ArgumentError, DbError, ToolError, WorldBug
from seahaven.fixtures.freezing import rebuild

if TYPE_CHECKING:
    from seahaven.declaration.context import Ctx
    from seahaven.declaration.tool import Call
    from seahaven.declaration.world import Handler, Middleware, World
    from seahaven.fixtures.sidecar import Fixture
    from seahaven.stores.db import Db

__all__ = [
    "CursorError",
    "decode_cursor",
    "encode_cursor",
    "error_handler",
    "from_row",
    "keyset_page",
    "rebuild_fixtures",
    "split_page",
]

Model = TypeVar("Model", bound=BaseModel)
Row = TypeVar("Row")


# --- the error handler ----------------------------------------------------------------------------


def error_handler(
    *,
    logger: logging.Logger,
    invalid_arguments: Callable[[ArgumentError, Call], ToolError],
    internal: Callable[[], ToolError],
) -> Middleware:
    """A middleware that decides every error the agent can read; register it first.

    ``invalid_arguments(error, call)`` restates the framework's refusal of a
    call's arguments in the world's shape (``error.violations`` lists each
    one). ``internal()`` is what the agent reads in place of a defect, which is
    logged on ``logger`` with its traceback: a ``DbError`` with SQLite's own
    message, which never reaches the agent, and any other exception by its
    type. The world's own tool errors and every ``WorldBug`` pass unchanged,
    and a replacement is raised ``from`` what it replaces::

        error_handler = world.middleware(
            seahaven.toolkit.error_handler(
                logger=logging.getLogger("notes_world"),
                invalid_arguments=lambda error, call: InvalidInput(error.violations),
                internal=Internal,
            )
        )
    """

    def handle(ctx: Ctx[Any], call: Call, next_: Handler) -> Any:
        try:
            return next_(ctx, call)
        except ArgumentError as refused:
            raise invalid_arguments(refused, call) from refused
        except DbError as refused:
            # SQL the world wrote was refused: nothing the agent sends fixes that,
            # and the engine's words name the world's tables, so they go to the log.
            logger.error(
                "%s: database error under %s (node=%s): %s",
                ctx.instance.id,
                call.name,
                call.node,
                refused.sqlite_message,
                exc_info=refused,
            )
            raise internal() from refused
        except (ToolError, WorldBug):
            raise
        except Exception as raised:
            # Nothing outside this layer logs a failure it turns into the internal error.
            logger.error(
                "%s: unexpected error under %s (node=%s): %s",
                ctx.instance.id,
                call.name,
                call.node,
                type(raised).__name__,
                exc_info=raised,
            )
            raise internal() from raised

    handle.__name__ = handle.__qualname__ = "error_handler"
    return handle


# --- rows to models -------------------------------------------------------------------------------


@functools.cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """Each field of ``model``, and whether it is a plain ``bool`` (SQLite stores 0 or 1)."""
    return tuple((name, field.annotation is bool) for name, field in model.model_fields.items())


def from_row(model: type[Model], row: Mapping[str, Any], /, **values: Any) -> Model:
    """``model`` built from ``row``: each field from the column of its name, ``values`` first.

    A field annotated ``bool`` gets ``bool(column)``, since SQLite has no
    booleans; a field worked out rather than stored is passed in ``values``.
    A field with neither a column nor a value is a ``WorldBug`` naming both.
    """
    given = dict(values)
    for name, is_bool in _fields(model):
        if name in given:
            continue
        try:
            value = row[name]
        except KeyError:
            raise WorldBug(
                f"from_row({model.__name__}): the row has no column {name!r}; select it, "
                f"or pass {name}=..."
            ) from None
        given[name] = bool(value) if is_bool else value
    return model(**given)


# --- pages and cursors ----------------------------------------------------------------------------


class CursorError(ValueError):
    """A cursor a listing cannot continue from, and why.

    ``reason`` is ``"malformed"`` for text no listing issued, ``"position"``
    for a cursor whose position is not the shape of this listing's key, and
    ``"listing"`` for a cursor another listing (or this one with other
    filters) issued. A world turns it into its own invalid-input error.
    """

    def __init__(self, reason: Literal["malformed", "position", "listing"]) -> None:
        super().__init__(f"the cursor cannot be used here ({reason})")
        self.reason = reason


def _fingerprint(listing: Sequence[object]) -> str:
    text = json.dumps(list(listing), separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def encode_cursor(listing: Sequence[object], position: Sequence[str | int]) -> str:
    """An opaque cursor for the page after ``position`` in the listing ``listing`` names.

    ``listing`` is the tool's name and every filter it was called with, so the
    cursor continues only that listing; ``position`` is the last row's sort key
    and id (or an offset, for a ranked list).
    """
    payload = json.dumps({"l": _fingerprint(listing), "a": list(position)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, listing: Sequence[object], shape: Sequence[type]) -> list[Any]:
    """The position a cursor carries, or ``CursorError`` saying why it does not fit.

    ``shape`` is the type of each part of the position, such as ``(str, str)``
    for a sort key and an id.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise CursorError("malformed") from None
    position = payload.get("a") if isinstance(payload, dict) else None
    if not isinstance(position, list):
        raise CursorError("malformed")
    if len(position) != len(shape) or not all(
        type(value) is kind for value, kind in zip(position, shape, strict=True)
    ):
        raise CursorError("position")
    if payload.get("l") != _fingerprint(listing):
        raise CursorError("listing")
    return position


def split_page(rows: list[Row], limit: int) -> tuple[list[Row], bool]:
    """The first ``limit`` rows, and whether more followed (so fetch ``limit + 1``)."""
    return rows[:limit], len(rows) > limit


def keyset_page(
    db: Db,
    *,
    table: str,
    where: Sequence[str],
    params: Sequence[Any],
    order_by: str,
    descending: bool,
    limit: int,
    after: Sequence[Any] | None,
) -> tuple[list[dict[str, Any]], bool]:
    """One page of ``table`` ordered by ``order_by`` then ``id``, and whether more follow.

    ``where`` holds SQL conditions joined with AND and ``params`` their bound
    values; ``after`` is the previous page's last ``(order_by, id)``, or
    ``None`` for the first page. The id, which is unique, makes the order total
    even when many rows share a sort key. ``table``, ``order_by`` and the SQL
    in ``where`` come from the tool, never from an argument.
    """
    conditions = list(where)
    bound = list(params)
    if after is not None:
        conditions.append(f"({order_by}, id) {'<' if descending else '>'} (?, ?)")
        bound.extend(after)
    direction = "DESC" if descending else "ASC"
    sql = f"SELECT * FROM {table}"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    sql += f" ORDER BY {order_by} {direction}, id {direction} LIMIT ?"
    return split_page(db.rows(sql, *bound, limit + 1), limit)


# --- rebuilding shipped fixtures ------------------------------------------------------------------


def rebuild_fixtures(
    world: World,
    build: Callable[[str], Fixture],
    known: Sequence[str],
    requested: Sequence[str] = (),
    *,
    into: Path,
    parents: Mapping[str, str] | None = None,
) -> int:
    """Rebuild fixtures a world ships in ``into``, and return the exit status for ``main``.

    ``build(fixture_id)`` freezes one fixture into ``world.fixtures_dir``;
    ``known`` names every fixture the generator builds and ``requested`` the
    ones to rebuild now (every one when empty). ``parents`` maps a fixture to
    the one it is forked from, so a parent being rebuilt is rebuilt first.
    Each requested fixture is built again in place of its folder, and a line
    naming it and its file hash is printed; one whose rebuild is the same in
    every byte but the sidecar's ``created_at`` keeps its folder as it was
    (``seahaven.fixtures.freezing.rebuild``), so unchanged fixtures never churn. An
    unknown name returns 2, and a world whose fixtures resolve somewhere else
    than ``into`` (installed rather than editable, say) returns 1; each says
    why on standard error and changes nothing.
    """
    unknown = [name for name in requested if name not in known]
    if unknown:
        print(f"unknown fixture {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    # The folder must exist before the world first resolves its fixtures directory,
    # so that the package's own folder (which travels in the wheel) is the one found.
    target = into.resolve()
    made = not target.exists()
    target.mkdir(exist_ok=True)
    if world.fixtures_dir.resolve() != target:
        if made:
            target.rmdir()
        print(
            f"world {world.name!r} resolves its fixtures to {world.fixtures_dir}, not {target}; "
            "install the world from this checkout (pip install -e .)",
            file=sys.stderr,
        )
        return 1
    for fixture_id in _parents_first(list(requested or known), parents or {}):
        fixture, changed = rebuild(target, fixture_id, functools.partial(build, fixture_id))
        kept = "" if changed else " (unchanged: the existing fixture and its created_at are kept)"
        print(f"built {fixture.id}: {fixture.file_sha256}{kept}")
    return 0


def _parents_first(fixture_ids: list[str], parents: Mapping[str, str]) -> list[str]:
    ordered: list[str] = []

    def visit(fixture_id: str) -> None:
        parent = parents.get(fixture_id)
        if parent is not None and parent in fixture_ids:
            visit(parent)
        if fixture_id not in ordered:
            ordered.append(fixture_id)

    for fixture_id in fixture_ids:
        visit(fixture_id)
    return ordered
