"""The change log finds each call's records by its ordinal, wherever a ``bulk()`` block put them.

``seahaven.state+last_step/1`` reads the last call's records straight from
``inst.calls.log``; these tests hold that lookup to a scan of the whole log,
for calls made alone, calls made inside ``bulk()`` between the block's own
writes, calls that wrote nothing, and calls that failed.
"""

from __future__ import annotations

from typing import Any

import pytest
from sample_worlds import add_jot, memo_world

import seahaven
from seahaven.stores.changelog import ChangeLog, LogRecord


def scanned(inst: seahaven.Instance, ordinal: int) -> list[LogRecord]:
    """Call ``ordinal``'s records, found the slow way."""
    return [record for record in inst.change_log() if record.i == ordinal]


def test_each_calls_records_are_found_by_ordinal_around_bulk_blocks() -> None:
    world = memo_world("log_calls")
    add_jot(world)

    @world.tool
    def refuse(ctx: seahaven.Ctx, id: str) -> None:
        """Write, then refuse."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, 'no')", id)
        raise seahaven.ToolError("refused", "no")

    @world.tool
    def read(ctx: seahaven.Ctx) -> int:
        """Write nothing."""
        row = ctx.db.one("SELECT count(*) AS n FROM memos")
        return int(row["n"]) if row else 0

    with world.instance() as inst:
        inst.call("jot", id="a", gist="one")
        inst.call("read")
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('b1', 'bulk')")
            inst.call("jot", id="b2", gist="inside")
            ctx.db.execute("UPDATE memos SET gist = 'again' WHERE id = 'a'")
            inst.call("jot", id="b3", gist="inside too")
        with pytest.raises(seahaven.ToolError):
            inst.call("refuse", id="c")
        inst.call("jot", id="d", gist="last")
        log = inst.calls.log
        assert len(log) == len(inst.change_log()) == 6
        for ordinal in range(inst.call_count):
            records, texts = log.of_call(ordinal)
            assert records == scanned(inst, ordinal)
            assert texts == [log.texts[log.records.index(record)] for record in records]
        last: dict[str, Any] = inst.state("seahaven.state+last_step/1")["state"]
        assert [record["key"]["id"] for record in last["db"]["log"]] == ["d"]


def test_a_log_built_by_hand_answers_each_ordinal() -> None:
    log = ChangeLog()
    record = LogRecord(0, "main", "t", "insert", {"id": 1}, None, {"id": 1})
    log.extend_call(0, [record], ["0"])
    log.extend(
        [record._replace(i=None), record._replace(i=2), record._replace(i=None)], list("abc")
    )
    assert log.of_call(0) == ([record], ["0"])
    assert log.of_call(1) == ([], [])
    assert log.of_call(2) == ([record._replace(i=2)], ["b"])
