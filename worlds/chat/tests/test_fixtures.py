"""The committed fixtures: rebuilt byte for byte by the generator, and what they promise."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest
import seahaven
import yaml

from fixtures_src.generate import FIXTURES, NOW, build


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sidecar(fixture: seahaven.Fixture) -> dict[str, object]:
    fields = yaml.safe_load((fixture.directory / "fixture.yaml").read_text(encoding="utf-8"))
    assert isinstance(fields, dict)
    return fields


def test_the_generator_builds_exactly_the_committed_fixtures(world: seahaven.World) -> None:
    assert sorted(fixture.id for fixture in world.fixtures()) == sorted(FIXTURES)


@pytest.mark.parametrize("fixture_id", sorted(FIXTURES))
def test_every_fixture_is_rebuilt_byte_for_byte(
    world: seahaven.World, tmp_path: Path, fixture_id: str
) -> None:
    committed = next(fixture for fixture in world.fixtures() if fixture.id == fixture_id)
    elsewhere = copy.copy(world)
    elsewhere.fixtures_dir = tmp_path
    rebuilt = build(fixture_id, world=elsewhere)
    assert rebuilt.directory == tmp_path / fixture_id
    committed_files = committed.files()
    rebuilt_files = rebuilt.files()
    assert sorted(committed_files) == sorted(rebuilt_files)
    for node, (committed_file, recorded) in committed_files.items():
        rebuilt_file, rebuilt_recorded = rebuilt_files[node]
        assert _sha256(committed_file) == recorded == rebuilt_recorded == _sha256(rebuilt_file)
    committed_sidecar = _sidecar(committed)
    rebuilt_sidecar = _sidecar(rebuilt)
    # created_at is the wall-clock moment of freezing, by design the one field a rebuild changes.
    committed_sidecar.pop("created_at")
    rebuilt_sidecar.pop("created_at")
    assert rebuilt_sidecar == committed_sidecar
    assert committed.now == NOW
    assert committed.parent_id is None


def test_the_same_seed_mints_the_same_ids(world: seahaven.World) -> None:
    def minted(seed: int) -> tuple[str, str, str]:
        with world.instance("team_workspace", seed=seed) as inst:
            general = inst.call("lookup_channel_by_name", name="general")
            posted = inst.call("post_message", channel_id=general.id, text="hello")
            channel = inst.call("create_channel", name="new-room")
            user = inst.call("create_user", handle="newbie", display_name="New Person")
            return posted.id, channel.id, user.id

    assert minted(3) == minted(3)
    assert minted(3) != minted(4)


@pytest.mark.seahaven(fixture="empty")
def test_the_empty_fixture_has_no_rows(instance: seahaven.Instance, world: seahaven.World) -> None:
    for name, table in world.schema_info.tables.items():
        if table.kind == "table":
            assert instance.inspect().one(f'SELECT count(*) AS n FROM "{name}"') == {"n": 0}


@pytest.mark.seahaven(fixture="team_workspace")
def test_the_team_workspace_keeps_its_description(instance: seahaven.Instance) -> None:
    db = instance.inspect()
    people = db.rows("SELECT handle, role, deactivated FROM users ORDER BY handle")
    active = [row["handle"] for row in people if not row["deactivated"]]
    assert len(active) == 10
    assert [row["handle"] for row in people if row["deactivated"]] == ["nina"]
    assert [row["handle"] for row in people if row["role"] == "owner"] == ["maya"]
    general = db.rows(
        "SELECT u.handle FROM memberships AS m JOIN users AS u ON u.id = m.user_id "
        "JOIN channels AS c ON c.id = m.channel_id WHERE c.is_general = 1 ORDER BY u.handle"
    )
    # Everyone joined #general on arrival; nina's membership outlived her account.
    assert [row["handle"] for row in general] == sorted([*active, "nina"])
    channels = db.rows("SELECT name, is_private, is_archived FROM channels ORDER BY name")
    assert {row["name"] for row in channels if row["is_private"]} == {
        "hiring-backend",
        "leadership",
    }
    assert [row["name"] for row in channels if row["is_archived"]] == ["offsite-2026"]
    assert len(channels) == 9
    replies = db.one("SELECT count(*) AS n FROM messages WHERE thread_root_id IS NOT NULL")
    reactions = db.one("SELECT count(*) AS n FROM reactions")
    assert replies is not None and replies["n"] > 40
    assert reactions is not None and reactions["n"] > 50


@pytest.mark.seahaven(fixture="team_workspace")
def test_the_team_workspace_is_internally_consistent(instance: seahaven.Instance) -> None:
    db = instance.inspect()
    wrong_counts = db.rows(
        "SELECT p.id FROM messages AS p WHERE p.reply_count != "
        "(SELECT count(*) FROM messages AS r WHERE r.thread_root_id = p.id "
        "AND r.deleted_at IS NULL) OR p.last_reply_at IS NOT "
        "(SELECT max(r.created_at) FROM messages AS r WHERE r.thread_root_id = p.id "
        "AND r.deleted_at IS NULL)"
    )
    assert wrong_counts == []
    # Within a channel, ts order is time order, and nothing is dated after the fixture's now.
    out_of_order = db.rows(
        "SELECT a.id FROM messages AS a JOIN messages AS b ON a.channel_id = b.channel_id "
        "AND a.ts < b.ts AND a.created_at > b.created_at"
    )
    assert out_of_order == []
    latest = db.one("SELECT max(created_at) AS at FROM messages")
    assert latest == {"at": NOW}
    replies_elsewhere = db.rows(
        "SELECT r.id FROM messages AS r JOIN messages AS p ON p.id = r.thread_root_id "
        "WHERE r.channel_id != p.channel_id OR p.thread_root_id IS NOT NULL"
    )
    assert replies_elsewhere == []


@pytest.mark.seahaven(fixture="team_workspace")
def test_the_team_workspace_search_index_matches_its_messages(
    instance: seahaven.Instance,
) -> None:
    # FTS5 compares its index with the messages table and raises if they disagree.
    with instance.bulk() as ctx:
        ctx.db.execute(
            "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"
        )
    assert instance.change_log() == []
