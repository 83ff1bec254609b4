"""The fold of a change log: the net difference a whole episode made.

This is the fold exactly as the state document's format defines it, written
against the published record shape (``record.to_dict()``), so it is what a
grader in any language would compute. Seahaven does not ship it; its tests use
it to check the log against SQLite's own cumulative changeset.
"""

from collections.abc import Iterable, Mapping
from typing import Any

Record = dict[str, Any]
GroupKey = tuple[str, str, tuple[tuple[str, Any], ...]]


def fold(log: Iterable[Mapping[str, Any]]) -> list[Record]:
    """Fold ``log`` per (world, table, key), drop what nets to nothing, and sort the rest."""
    groups: dict[GroupKey, Record | None] = {}
    for record in log:
        group = (record["world"], record["table"], tuple(record["key"].items()))
        groups[group] = compose(groups.get(group), record)
    folded = [record for record in groups.values() if record is not None]
    return sorted(folded, key=order)


def compose(folded: Record | None, record: Mapping[str, Any]) -> Record | None:
    """One step of the fold: what ``folded`` (``None`` for untouched) becomes after ``record``."""
    if folded is None:
        return _copy(record)
    pair = (folded["op"], record["op"])
    if pair == ("insert", "update"):
        return {**folded, "after": {**folded["after"], **record["after"]}}
    if pair == ("insert", "delete"):
        return None
    if pair == ("update", "update"):
        before = {**record["before"], **folded["before"]}
        after = {**folded["after"], **record["after"]}
        changed = [column for column in after if after[column] != before[column]]
        if not changed:
            return None
        return {
            **folded,
            "before": {column: before[column] for column in changed},
            "after": {column: after[column] for column in changed},
        }
    if pair == ("update", "delete"):
        return {**_copy(record), "before": {**record["before"], **folded["before"]}}
    if pair == ("delete", "insert"):
        deleted, inserted = folded["before"], record["after"]
        changed = [
            column
            for column in inserted
            if column not in record["key"] and inserted[column] != deleted[column]
        ]
        if not changed:
            return None
        return {
            **folded,
            "op": "update",
            "before": {column: deleted[column] for column in changed},
            "after": {column: inserted[column] for column in changed},
        }
    raise ValueError(f"a log cannot hold {pair[0]} followed by {pair[1]} for one row")


def order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """How records sort within one call: world, table, then key values in key order."""
    return (
        record["world"],
        record["table"],
        tuple(_rank(value) for value in record["key"].values()),
    )


def _rank(value: Any) -> tuple[int, Any]:
    # null, then numbers, then strings (a blob key is already its base64 text).
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    return (2, value)


def _copy(record: Mapping[str, Any]) -> Record:
    before, after = record["before"], record["after"]
    return {
        "world": record["world"],
        "table": record["table"],
        "op": record["op"],
        "key": dict(record["key"]),
        "before": None if before is None else dict(before),
        "after": None if after is None else dict(after),
    }
