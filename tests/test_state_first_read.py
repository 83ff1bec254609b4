"""The first state read hands out dicts built as records were logged: the same document, owned.

An instance whose own format carries the whole change log builds each record's
published dict when the record is appended, and its first ``state()`` hands
those out instead of copying every record. These tests hold that path to the
one it replaced (``published`` of the change log, read at any point of the
corpus's realistic episodes) and check that a document handed out is the
caller's alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven.stores.changelog import published

CORPUS = Path(__file__).resolve().parent / "corpus"
sys.path.insert(0, str(CORPUS))

from episodes import _outcome, episodes  # noqa: E402

EPISODES = episodes()
WHOLE = ("seahaven.state/1", "seahaven.state+calls/1")
# A fixed clock, so two reads of one document carry the same instant in its envelope.
FIXED: dict[str, Any] = {"now": "2031-03-14T08:30:00.000Z", "clock_mode": "fixed"}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _expected_log(inst: seahaven.Instance) -> list[dict[str, Any]]:
    # The path the first read used to take: every record copied when the document is read.
    return published(inst.change_log())


@pytest.mark.parametrize("episode", EPISODES, ids=lambda episode: episode.name)
@pytest.mark.parametrize("reads", ["once at the end", "between steps"])
def test_every_state_read_of_an_episode_is_the_records_copied(
    episode: Any, reads: str, tmp_path: Path
) -> None:
    inst = episode.make(tmp_path)
    try:
        for position, step in enumerate(episode.steps):
            _outcome(step, inst)
            # Reads between steps meet records an earlier read handed out beside new ones.
            if reads == "between steps" and position % 3 == 1:
                for name in WHOLE:
                    document = inst.state(name)
                    assert document["state"]["db"]["log"] == _expected_log(inst)
                    assert _compact(document) == inst.state_json(name)
        if inst.state_format in WHOLE:
            # The episode's first read of its own document, as a harness makes it.
            document = inst.state()
            assert _compact(document["state"]["db"]["log"]) == _compact(_expected_log(inst))
            assert _compact(document) == inst.state_json()
        for name in (*WHOLE, "seahaven.state+last_step/1"):
            assert _compact(inst.state(name)) == inst.state_json(name)
    finally:
        inst.destroy()


def _memo_world(tmp_path: Path, state_format: str) -> seahaven.World:
    world = seahaven.World(
        name="memos",
        version="1.0.0",
        schema="CREATE TABLE memos (id INTEGER PRIMARY KEY, gist TEXT NOT NULL) STRICT;",
        state_format=state_format,
        work_dir=tmp_path,
    )

    @world.tool
    def file_memo(ctx: seahaven.Ctx, memo_id: int, gist: str) -> dict[str, int]:
        """File one memo."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", memo_id, gist)
        return {"id": memo_id}

    @world.tool
    def edit_memo(ctx: seahaven.Ctx, memo_id: int, gist: str) -> dict[str, int]:
        """Change one memo's gist."""
        ctx.db.execute("UPDATE memos SET gist = ? WHERE id = ?", gist, memo_id)
        return {"id": memo_id}

    return world


def _scribble(document: dict[str, Any]) -> None:
    log = document["state"]["db"]["log"]
    for entry in log:
        entry["key"]["id"] = -1
        if entry["after"] is not None:
            entry["after"]["gist"] = "scribbled"
        entry["op"] = "scribbled"
    log.append({"scribbled": True})


def test_a_document_handed_out_is_the_callers_alone(tmp_path: Path) -> None:
    with _memo_world(tmp_path, "seahaven.state/1").instance(**FIXED) as inst:
        inst.call("file_memo", memo_id=1, gist="one")
        inst.call("file_memo", memo_id=2, gist="two")
        first = inst.state()
        expected = _expected_log(inst)
        _scribble(first)
        inst.call("edit_memo", memo_id=1, gist="uno")
        second = inst.state()
        assert second["state"]["db"]["log"] == _expected_log(inst)
        assert second["state"]["db"]["log"][:2] == expected
        _scribble(second)
        third = inst.state("seahaven.state+calls/1")
        assert third["state"]["db"]["log"] == _expected_log(inst)
        assert [record.to_dict() for record in inst.change_log()][:2] == expected
        assert _compact(inst.state()) == inst.state_json()


def test_an_instance_of_the_last_step_format_builds_nothing_ahead(tmp_path: Path) -> None:
    world = _memo_world(tmp_path, "seahaven.state+last_step/1")
    with world.instance(**FIXED) as inst:
        assert not inst.calls.log.prepare
        inst.call("file_memo", memo_id=1, gist="one")
        assert inst.state("seahaven.state/1")["state"]["db"]["log"] == _expected_log(inst)
    with world.instance(state_format="seahaven.state/1", **FIXED) as inst:
        assert inst.calls.log.prepare
        inst.call("file_memo", memo_id=1, gist="one")
        assert inst.state()["state"]["db"]["log"] == _expected_log(inst)


def test_a_restored_snapshot_reads_the_same_document(tmp_path: Path) -> None:
    with _memo_world(tmp_path, "seahaven.state/1").instance(**FIXED) as inst:
        inst.call("file_memo", memo_id=1, gist="one")
        snapshot = inst.snapshot()
        inst.call("file_memo", memo_id=2, gist="two")
        with snapshot.restore() as untouched:
            assert untouched.state()["state"]["db"]["log"] == _expected_log(untouched)
        with snapshot.restore() as restored:
            assert restored.calls.log.prepare
            restored.call("edit_memo", memo_id=1, gist="uno")
            assert restored.state()["state"]["db"]["log"] == _expected_log(restored)
            assert _compact(restored.state()) == restored.state_json()
