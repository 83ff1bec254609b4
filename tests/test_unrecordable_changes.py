"""A write the change log cannot record is taken back out, so state and document always agree.

SQLite's session extension hands text back as UTF-8; a TEXT value that is not
valid UTF-8 (a cast blob, say) cannot be rendered into a log record. The call
that wrote it fails with a ``WorldBug`` naming the fix, and every row it wrote,
in every store, is gone, as if it had raised.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

import seahaven

SCHEMA = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT) STRICT;"
BAD_TEXT = "INSERT INTO notes (body) VALUES (CAST(X'FF' AS TEXT))"


def _store(name: str) -> seahaven.World:
    world = seahaven.World(
        name=name, version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1"
    )

    @world.tool
    def write(ctx: seahaven.Ctx, body: str | None = None, bad: bool = False) -> None:
        """Write a note with ``body``, or one whose text is not UTF-8."""
        if bad:
            ctx.db.execute(BAD_TEXT)
        else:
            ctx.db.execute("INSERT INTO notes (body) VALUES (?)", body)

    @world.tool
    def count(ctx: seahaven.Ctx) -> int:
        """How many notes there are."""
        row = ctx.db.one("SELECT count(*) AS n FROM notes")
        return int(row["n"]) if row else 0

    return world


notes = _store("notes")

desk = _store("desk")
desk.add_world(_store("drawer"), name="drawer", tool_prefix="drawer_")


@desk.tool
def file_both(ctx: seahaven.Ctx, drawer_bad: bool) -> None:
    """Write a good note here, and one in the drawer (bad when ``drawer_bad``)."""
    ctx.db.execute("INSERT INTO notes (body) VALUES ('on the desk')")
    ctx.worlds.drawer.call("write", body="in the drawer", bad=drawer_bad)


def _rows(inst: seahaven.Instance) -> list[dict[str, Any]]:
    return [
        {"world": record.world, "table": record.table, "op": record.op}
        for record in inst.change_log()
    ]


def test_a_call_writing_text_that_is_not_utf8_fails_and_leaves_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with notes.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
        inst.call("write", body="kept")
        with caplog.at_level(logging.ERROR), pytest.raises(seahaven.WorldBug) as refused:
            inst.call("write", bad=True)
        assert "cannot record what was written to main" in str(refused.value)
        assert "so it was undone" in str(refused.value)
        assert "valid UTF-8" in str(refused.value)
        assert inst.call("count") == 1
        assert _rows(inst) == [{"world": "main", "table": "notes", "op": "insert"}]
        [good, bad, counted] = inst.state(format="seahaven.state+calls/1")["state"]["calls"]
        assert (good["error"], bad["error"], counted["error"]) == (None, "internal error", None)
        # The instance goes on as before.
        inst.call("write", body="after")
        assert inst.call("count") == 2
        assert len(inst.change_log()) == 2


def test_every_store_a_call_wrote_is_put_back() -> None:
    with desk.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
        with pytest.raises(seahaven.WorldBug, match="written to main, drawer"):
            inst.call("file_both", drawer_bad=True)
        assert (inst.call("count"), inst.call("drawer_count")) == (0, 0)
        assert inst.change_log() == []
        inst.call("file_both", drawer_bad=False)
        assert (inst.call("count"), inst.call("drawer_count")) == (1, 1)
        assert sorted(record.world for record in inst.change_log()) == ["drawer", "main"]


def test_a_bulk_block_that_wrote_such_text_keeps_none_of_what_it_wrote() -> None:
    with notes.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
        with pytest.raises(seahaven.WorldBug, match="cannot record"), inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (body) VALUES ('loaded')")
            ctx.db.execute(BAD_TEXT)
        assert inst.call("count") == 0
        assert inst.change_log() == []
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (body) VALUES ('loaded')")
        assert inst.call("count") == 1


def test_a_call_inside_bulk_that_fails_so_leaves_the_block_recording() -> None:
    with notes.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
        with inst.bulk() as ctx:
            with pytest.raises(seahaven.WorldBug, match="cannot record"):
                inst.call("write", bad=True)
            ctx.db.execute("INSERT INTO notes (body) VALUES ('after the refusal')")
        assert inst.call("count") == 1
        assert [(record.i, record.op) for record in inst.change_log()] == [(None, "insert")]
        [refused, counted] = inst.state(format="seahaven.state+calls/1")["state"]["calls"]
        assert (refused["tool"], refused["error"], counted["error"]) == (
            "write",
            "internal error",
            None,
        )
