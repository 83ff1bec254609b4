"""The corpus: recorded episodes held to their change logs and state documents, byte for byte.

Each episode of ``tests/corpus/episodes.py`` is run again and compared with
what ``tests/corpus/regenerate.py`` wrote for it: the result of every step and
the ``seahaven.state+last_step/1`` text after it, the change log, the call log,
and ``state_json()`` and ``state()`` in every format. The corpus was recorded
before the call path was rebuilt, so any change to how a call is recorded or a
document is written shows here as a difference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"
sys.path.insert(0, str(CORPUS))

from episodes import episodes, record  # noqa: E402

EPISODES = episodes()


def test_every_episode_has_a_recording_and_every_recording_an_episode() -> None:
    recorded = {path.stem for path in CORPUS.glob("*.json")}
    assert recorded == {episode.name for episode in EPISODES}


@pytest.mark.parametrize("episode", EPISODES, ids=lambda episode: episode.name)
def test_an_episode_records_what_the_corpus_holds(episode: Any, tmp_path: Path) -> None:
    expected = json.loads((CORPUS / f"{episode.name}.json").read_text(encoding="utf-8"))
    actual = record(episode, tmp_path)
    assert actual["change_log"] == expected["change_log"]
    assert actual["call_log"] == expected["call_log"]
    for position, (step, wanted) in enumerate(zip(actual["steps"], expected["steps"], strict=True)):
        assert step == wanted, f"step {position}"
    for name, wanted in expected["documents"].items():
        # Compared as text: the bytes a server sends are what is held.
        assert actual["documents"][name] == wanted, name
    assert actual == expected


@pytest.mark.parametrize("episode", EPISODES, ids=lambda episode: episode.name)
def test_an_episode_records_the_same_in_memory_and_on_disk(
    episode: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded: dict[str, Any] = {}
    for storage in ("memory", "disk"):
        # The episodes name no storage, so the process default decides, as a run's would.
        monkeypatch.setenv("SEAHAVEN_STORAGE", storage)
        (tmp_path / storage).mkdir()
        recorded[storage] = record(episode, tmp_path / storage)
    memory, disk = recorded["memory"], recorded["disk"]
    assert memory["change_log"] == disk["change_log"]
    assert memory["documents"] == disk["documents"]
    assert memory == disk


def test_the_corpus_covers_what_the_change_log_must_get_right() -> None:
    texts = {path.stem: path.read_text(encoding="utf-8") for path in CORPUS.glob("*.json")}
    kinds = json.loads(texts["kinds"])["change_log"]
    assert {record["op"] for record in kinds} == {"insert", "update", "delete"}
    assert any(record["i"] is None for record in kinds), "bulk() records"
    assert any(record["table"] == "pairs" for record in kinds), "WITHOUT ROWID"
    assert any(record["table"] == "audit" for record in kinds), "trigger writes"
    composite = json.loads(texts["composite"])["change_log"]
    assert {record["world"] for record in composite} == {"main", "till", "ledger"}
    fts = json.loads(texts["fts"])["change_log"]
    assert {record["table"] for record in fts} == {"notes"}, "no FTS5 table, no shadow"
