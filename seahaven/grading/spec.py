"""Graders as data: what a scenario's YAML says, turned into grader objects.

A grader is written as a mapping of one kind to its arguments::

    all_of:
      - changed: {table: invoices, where: {number: INV-0011}, to: {status: paid}}
      - nothing_else_changed: {allow: [invoices, payments.charges]}
      - answer: {number: 2750, tolerance: 0.01}

A list is read as ``all_of``, and a kind without arguments may be written as its
name alone (``submitted``). Every mistake is a ``WorldBug`` naming where in the
data it is and what that kind takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import seahaven.grading.conversation as conversation
import seahaven.grading.graders as g
from seahaven.errors import WorldBug
from seahaven.grading.refusal import Refused

__all__ = ["KINDS", "as_grader", "grader_from_spec"]


def _table_args(*extra: str) -> tuple[str, ...]:
    return ("table", "where", "store", *extra)


# Each kind: the arguments it takes (the first ones required), and how it is built.
_TABLE_KINDS: dict[str, Callable[..., g.Grader]] = {
    "exists": g.Exists,
    "absent": g.Absent,
    "deleted": g.Deleted,
    "unchanged": g.Unchanged,
}
# The kinds that count only some actors' changes when given ``by`` or ``not_by``.
_BY = ("by", "not_by")

KINDS: tuple[str, ...] = (
    "exists",
    "absent",
    "count",
    "changed",
    "deleted",
    "unchanged",
    "nothing_else_changed",
    "matches_solution",
    "refused",
    "answer",
    "submitted",
    "called",
    "told_user",
    "user_ended",
    "python",
    "all_of",
    "any_of",
    "weighted",
)


def _arguments(
    kind: str, value: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...]
) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise WorldBug(f"{where}: {kind} takes a mapping of {', '.join(allowed)}")
    stray = sorted(str(key) for key in value if key not in allowed)
    if stray:
        raise WorldBug(
            f"{where}: {kind} does not take {', '.join(stray)}; it takes {', '.join(allowed)}"
        )
    missing = [name for name in required if value.get(name) is None]
    if missing:
        raise WorldBug(f"{where}: {kind} needs {', '.join(missing)}")
    return dict(value)


def _table_kind(kind: str) -> Callable[[Any, str], g.Grader]:
    by = kind in ("deleted", "unchanged")

    def build(value: Any, where: str) -> g.Grader:
        args = _arguments(kind, value, where, _table_args(*(_BY if by else ())), ("table",))
        extra = {name: args.get(name) for name in _BY} if by else {}
        return _TABLE_KINDS[kind](
            args["table"], args.get("where"), store=args.get("store", "main"), **extra
        )

    return build


def _count(value: Any, where: str) -> g.Grader:
    args = _arguments(
        "count", value, where, _table_args("equals", "at_least", "at_most"), ("table",)
    )
    return g.Count(
        args["table"],
        args.get("where"),
        store=args.get("store", "main"),
        equals=args.get("equals"),
        at_least=args.get("at_least"),
        at_most=args.get("at_most"),
    )


def _changed(value: Any, where: str) -> g.Grader:
    args = _arguments("changed", value, where, _table_args("to", "op", *_BY), ("table",))
    return g.Changed(
        args["table"],
        args.get("where"),
        to=args.get("to"),
        store=args.get("store", "main"),
        op=args.get("op"),
        by=args.get("by"),
        not_by=args.get("not_by"),
    )


def _nothing_else(value: Any, where: str) -> g.Grader:
    args = _arguments("nothing_else_changed", value, where, ("allow", *_BY), ())
    allow = args.get("allow", [])
    if not isinstance(allow, list):
        raise WorldBug(f"{where}: nothing_else_changed's allow is a list of tables")
    return g.NothingElseChanged(allow, by=args.get("by"), not_by=args.get("not_by"))


def _matches_solution(value: Any, where: str) -> g.Grader:
    args = _arguments("matches_solution", value, where, ("ignore",), ())
    ignore = args.get("ignore", [])
    if not isinstance(ignore, list):
        raise WorldBug(f"{where}: matches_solution's ignore is a list of columns")
    return g.MatchesSolution(ignore)


def _answer(value: Any, where: str) -> g.Grader:
    allowed = ("equals", "number", "tolerance", "pattern", "contains", "case_sensitive")
    return g.Answer(**_arguments("answer", value, where, allowed, ()))


def _refused(value: Any, where: str) -> g.Grader:
    allowed = ("pattern", "reason_contains", "markers", "allow")
    args = _arguments("refused", value, where, allowed, ())
    if not isinstance(args.get("allow", []), list):
        raise WorldBug(f"{where}: refused's allow is a list of tables, as nothing_else_changed's")
    return Refused(**args)


def _submitted(value: Any, where: str) -> g.Grader:
    _arguments("submitted", value, where, (), ())
    return g.Submitted()


def _called(value: Any, where: str) -> g.Grader:
    allowed = ("tool", "arguments", "times", "at_least", "at_most", "ok", *_BY)
    args = _arguments("called", value, where, allowed, ("tool",))
    tool = args.pop("tool")
    return g.Called(tool, **args)


def _told_user(value: Any, where: str) -> g.Grader:
    args = _arguments("told_user", value, where, ("contains", "pattern", "before"), ())
    return conversation.ToldUser(
        args.get("contains"), pattern=args.get("pattern"), before=args.get("before")
    )


def _user_ended(value: Any, where: str) -> g.Grader:
    _arguments("user_ended", value, where, (), ())
    return conversation.UserEnded()


def _python(value: Any, where: str) -> g.Grader:
    if not isinstance(value, str):
        raise WorldBug(f"{where}: python names a function as module:function")
    return g.PythonGrader.named(value, where)


def _parts(kind: str, value: Any, where: str) -> list[g.Grader]:
    if not isinstance(value, list) or not value:
        raise WorldBug(f"{where}: {kind} takes a list of graders")
    return [grader_from_spec(item, f"{where}.{kind}[{index}]") for index, item in enumerate(value)]


def _weighted(value: Any, where: str) -> g.Grader:
    args = _arguments("weighted", value, where, ("parts", "pass_at"), ("parts",))
    parts = args["parts"]
    if not isinstance(parts, list) or not parts:
        raise WorldBug(f"{where}: weighted's parts is a list of {{weight, grader}}")
    built: list[tuple[Any, float]] = []
    for index, part in enumerate(parts):
        inner = f"{where}.weighted.parts[{index}]"
        part_args = _arguments("a weighted part", part, inner, ("weight", "grader"), ("grader",))
        built.append((grader_from_spec(part_args["grader"], inner), part_args.get("weight", 1.0)))
    return g.Weighted(built, pass_at=args.get("pass_at", 1.0))


_BUILDERS: dict[str, Callable[[Any, str], g.Grader]] = {
    **{kind: _table_kind(kind) for kind in _TABLE_KINDS},
    "count": _count,
    "changed": _changed,
    "nothing_else_changed": _nothing_else,
    "matches_solution": _matches_solution,
    "refused": _refused,
    "answer": _answer,
    "submitted": _submitted,
    "called": _called,
    "told_user": _told_user,
    "user_ended": _user_ended,
    "python": _python,
    "all_of": lambda value, where: g.AllOf(_parts("all_of", value, where)),
    "any_of": lambda value, where: g.AnyOf(_parts("any_of", value, where)),
    "weighted": _weighted,
}
assert set(_BUILDERS) == set(KINDS)


def grader_from_spec(spec: Any, where: str = "grader") -> g.Grader:
    """The grader ``spec`` describes; ``where`` is how errors name its place in a file."""
    if isinstance(spec, g.Grader):
        return spec
    if isinstance(spec, list):
        return g.AllOf(
            [grader_from_spec(item, f"{where}[{index}]") for index, item in enumerate(spec)]
        )
    if isinstance(spec, str):
        if spec in _BUILDERS:
            return _BUILDERS[spec](None, where)
        raise WorldBug(
            f"{where}: {spec!r} is not a kind of grader; the kinds are {', '.join(KINDS)}"
        )
    if not isinstance(spec, Mapping) or not spec:
        raise WorldBug(f"{where}: a grader is a mapping of one kind to its arguments")
    kinds = [key for key in spec if key != "source_sha256"]
    if len(kinds) != 1:
        raise WorldBug(
            f"{where}: a grader names one kind, not {', '.join(map(str, kinds)) or 'none'}; "
            "combine several with all_of"
        )
    kind = kinds[0]
    builder = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        raise WorldBug(
            f"{where}: {kind!r} is not a kind of grader; the kinds are {', '.join(KINDS)}"
        )
    if "source_sha256" in spec and kind != "python":
        raise WorldBug(f"{where}: only a python grader carries source_sha256")
    try:
        return builder(spec[kind], where)
    except WorldBug as error:
        if str(error).startswith(where):
            raise
        raise WorldBug(f"{where}: {error}") from None


def as_grader(value: Any, what: str = "grader") -> g.Grader:
    """A grader from a grader object, its data form, or a plain callable."""
    if isinstance(value, Mapping | list | str):
        return grader_from_spec(value, what)
    return g.as_grader(value, what)
