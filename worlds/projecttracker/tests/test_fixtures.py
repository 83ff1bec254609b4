"""The committed fixtures: rebuilt byte for byte by the generator, and what they promise."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest
import yaml
from fixtures_src.generate import FIXTURES, NOW, build, main

import seahaven

TABLES = (
    "users",
    "teams",
    "team_members",
    "projects",
    "issues",
    "labels",
    "issue_labels",
    "comments",
    "issue_events",
)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sidecar(fixture: seahaven.Fixture) -> dict[str, object]:
    fields = yaml.safe_load((fixture.directory / "fixture.yaml").read_text(encoding="utf-8"))
    assert isinstance(fields, dict)
    return fields


def _count(db: seahaven.Db, sql: str, *params: object) -> int:
    row = db.one(sql, *params)
    assert row is not None
    return int(next(iter(row.values())))


def test_the_generator_builds_exactly_the_committed_fixtures(world: seahaven.World) -> None:
    assert sorted(fixture.id for fixture in world.fixtures()) == sorted(FIXTURES)
    assert sorted(FIXTURES) == ["agency", "empty", "small_startup"]


@pytest.mark.parametrize("fixture_id", sorted(FIXTURES))
def test_every_fixture_is_rebuilt_byte_for_byte(
    world: seahaven.World, tmp_path: Path, fixture_id: str
) -> None:
    committed = next(fixture for fixture in world.fixtures() if fixture.id == fixture_id)
    elsewhere = copy.copy(world)
    elsewhere.fixtures_dir = tmp_path
    rebuilt = build(fixture_id, world=elsewhere)
    assert rebuilt.directory == tmp_path / fixture_id
    committed_files, rebuilt_files = committed.files(), rebuilt.files()
    assert sorted(committed_files) == sorted(rebuilt_files) == ["main"]
    for node, (committed_file, recorded) in committed_files.items():
        rebuilt_file, rebuilt_recorded = rebuilt_files[node]
        assert _sha256(committed_file) == recorded == rebuilt_recorded == _sha256(rebuilt_file)
    committed_sidecar, rebuilt_sidecar = _sidecar(committed), _sidecar(rebuilt)
    # created_at is the wall-clock moment of freezing: by design, the one field a rebuild moves.
    committed_sidecar.pop("created_at")
    rebuilt_sidecar.pop("created_at")
    assert rebuilt_sidecar == committed_sidecar
    assert committed.now == NOW
    assert committed.parent_id is None


def test_the_generator_refuses_a_name_it_does_not_know() -> None:
    assert main(["no_such_fixture"]) == 2


@pytest.mark.seahaven(fixture="empty")
def test_empty_has_the_schema_and_no_rows(instance: seahaven.Instance) -> None:
    for table in TABLES:
        assert _count(instance.inspect(), f'SELECT count(*) FROM "{table}"') == 0


@pytest.mark.seahaven(fixture="small_startup")
def test_small_startup_holds_what_its_description_says(instance: seahaven.Instance) -> None:
    db = instance.inspect()
    assert db.rows("SELECT key, name FROM teams") == [{"key": "ENG", "name": "Engineering"}]
    assert db.rows("SELECT id, role FROM users ORDER BY id") == [
        {"id": "u_1", "role": "admin"},
        {"id": "u_2", "role": "member"},
        {"id": "u_3", "role": "member"},
    ]
    assert db.rows("SELECT name, state FROM projects ORDER BY name") == [
        {"name": "Public beta", "state": "active"},
        {"name": "Recurring invoices", "state": "active"},
    ]
    assert _count(db, "SELECT count(*) FROM issues") == 40
    assert _count(db, "SELECT count(*) FROM comments") == 60
    assert _count(db, "SELECT count(*) FROM labels") == 6
    keys = [row["key"] for row in db.rows("SELECT key FROM issues ORDER BY created_at")]
    assert keys == [f"ENG-{n}" for n in range(1, 41)]
    created = db.one("SELECT min(created_at) AS first, max(created_at) AS last FROM issues")
    assert created is not None
    assert created["first"] >= "2026-04-01" and created["last"] < "2026-06-01"


@pytest.mark.seahaven(fixture="small_startup")
def test_small_startup_keeps_the_issues_the_documentation_uses(
    instance: seahaven.Instance,
) -> None:
    rows = instance.inspect().rows(
        "SELECT key, title, status, assignee_id FROM issues WHERE key IN ('ENG-3', 'ENG-4', "
        "'ENG-12') ORDER BY key"
    )
    by_key = {row["key"]: row for row in rows}
    assert by_key["ENG-12"]["title"] == "The session cookie leaks a stack trace"
    # The examples close ENG-3 and ENG-4, and expect closing ENG-3 to drop an assignee.
    for key in ("ENG-3", "ENG-4", "ENG-12"):
        assert by_key[key]["status"] in ("backlog", "todo", "in_progress")
        assert by_key[key]["assignee_id"] is not None


@pytest.mark.seahaven(fixture="agency")
def test_agency_holds_what_its_description_says(instance: seahaven.Instance) -> None:
    db = instance.inspect()
    assert [row["key"] for row in db.rows("SELECT key FROM teams ORDER BY key")] == [
        "CS",
        "DES",
        "ENG",
    ]
    assert _count(db, "SELECT count(*) FROM users") == 12
    assert _count(db, "SELECT count(*) FROM users WHERE id = 'u_12' AND role = 'viewer'") == 1
    assert _count(db, "SELECT count(*) FROM projects") == 9
    assert [row["name"] for row in db.rows("SELECT name FROM projects WHERE state = 'done'")] == [
        "Kestrel Air brand guidelines"
    ]
    assert _count(db, "SELECT count(*) FROM issues") == 600
    assert _count(db, "SELECT count(*) FROM comments") == 1500
    assert _count(db, "SELECT count(*) FROM labels") == 30
    span = db.one("SELECT min(created_at) AS first, max(created_at) AS last FROM issues")
    assert span is not None
    assert span["first"] < "2026-01-01" and span["last"] > "2026-05-01"
    # An audit trail worth grading on: people handed work over, and issues moved back and forth.
    reassigned = _count(
        db,
        "SELECT count(*) FROM issue_events WHERE kind = 'assignee' "
        "AND json_extract(payload, '$.from') IS NOT NULL AND json_extract(payload, '$.to') "
        "IS NOT NULL",
    )
    reopened = _count(
        db,
        "SELECT count(*) FROM issue_events WHERE kind = 'status' "
        "AND json_extract(payload, '$.from') IN ('done', 'canceled')",
    )
    assert reassigned > 20 and reopened > 5
    assert _count(db, "SELECT count(*) FROM issues WHERE archived_at IS NOT NULL") > 20
    assert _count(db, "SELECT count(*) FROM issues WHERE status = 'todo'") > 2
    # Every issue of the finished project is closed.
    assert (
        _count(
            db,
            "SELECT count(*) FROM issues AS i JOIN projects AS p ON p.id = i.project_id "
            "WHERE p.state = 'done' AND i.status NOT IN ('done', 'canceled')",
        )
        == 0
    )
    eng_12 = db.one("SELECT status, archived_at FROM issues WHERE key = 'ENG-12'")
    assert eng_12 == {"status": "in_progress", "archived_at": None}


@pytest.mark.parametrize("fixture_id", ["small_startup", "agency"])
def test_the_fixtures_keep_the_rules_the_tools_keep(world: seahaven.World, fixture_id: str) -> None:
    with world.instance(fixture_id) as inst:
        db = inst.inspect()
        # No closed issue has an assignee, and completed_at is set exactly on closed ones.
        assert (
            _count(
                db,
                "SELECT count(*) FROM issues WHERE (status IN ('done', 'canceled')) != "
                "(completed_at IS NOT NULL) OR (status IN ('done', 'canceled') AND "
                "assignee_id IS NOT NULL)",
            )
            == 0
        )
        # Each team's counter stands where the tools would have left it.
        for team in db.rows("SELECT id, key, issue_counter FROM teams"):
            keys = [
                str(row["key"])
                for row in db.rows("SELECT key FROM issues WHERE team_id = ?", team["id"])
            ]
            assert all(key.startswith(f"{team['key']}-") for key in keys)
            numbers = sorted(int(key.split("-")[1]) for key in keys)
            assert numbers == list(range(1, team["issue_counter"] + 1))
        # Assignees are members of the issue's team.
        assert (
            _count(
                db,
                "SELECT count(*) FROM issues AS i WHERE i.assignee_id IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM team_members AS m WHERE m.team_id = i.team_id "
                "AND m.user_id = i.assignee_id)",
            )
            == 0
        )
        # Labels belong to the issue's team.
        assert (
            _count(
                db,
                "SELECT count(*) FROM issue_labels AS il JOIN issues AS i ON i.id = il.issue_id "
                "JOIN labels AS l ON l.id = il.label_id WHERE l.team_id != i.team_id",
            )
            == 0
        )
        # The trail agrees with the rows: every issue was created once, and its last status
        # and assignee events end where the issue is.
        assert _count(db, "SELECT count(*) FROM issue_events WHERE kind = 'created'") == _count(
            db, "SELECT count(*) FROM issues"
        )
        for issue in db.rows("SELECT id, status, assignee_id FROM issues"):
            trail = db.rows(
                "SELECT kind, json_extract(payload, '$.to') AS becomes, "
                "json_extract(payload, '$.status') AS first_status, "
                "json_extract(payload, '$.assignee_id') AS first_assignee "
                "FROM issue_events WHERE issue_id = ? ORDER BY created_at, rowid",
                issue["id"],
            )
            assert trail[0]["kind"] == "created"
            status, assignee = trail[0]["first_status"], trail[0]["first_assignee"]
            for event in trail[1:]:
                if event["kind"] == "status":
                    status = event["becomes"]
                elif event["kind"] == "assignee":
                    assignee = event["becomes"]
            assert (status, assignee) == (issue["status"], issue["assignee_id"])
        # The past is past: nothing is dated at or after the fixture's now.
        for table, column in (
            ("issues", "updated_at"),
            ("issue_events", "created_at"),
            ("comments", "created_at"),
        ):
            assert _count(db, f"SELECT count(*) FROM {table} WHERE {column} >= ?", NOW) == 0
        # Comments come after the issue they are on.
        assert (
            _count(
                db,
                "SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id "
                "WHERE c.created_at < i.created_at",
            )
            == 0
        )


@pytest.mark.parametrize("fixture_id", ["small_startup", "agency"])
def test_the_search_index_matches_the_issues(world: seahaven.World, fixture_id: str) -> None:
    with world.instance(fixture_id) as inst:
        # FTS5 compares its index with the issues table and raises if the two disagree.
        with inst.bulk() as ctx:
            ctx.db.execute(
                "INSERT INTO issues_fts (issues_fts, rank) VALUES ('integrity-check', 1)"
            )
        assert inst.change_log() == []


def test_the_same_seed_mints_the_same_ids(world: seahaven.World) -> None:
    def minted(seed: int) -> tuple[str, str, str]:
        with world.instance("small_startup", seed=seed) as inst:
            project = inst.inspect().one("SELECT id FROM projects ORDER BY name LIMIT 1")
            assert project is not None
            issue = inst.call("create_issue", project_id=str(project["id"]), title="A")
            comment = inst.call("add_comment", issue_id=issue["id"], body="first")
            team = inst.call("create_team", key="OPS", name="Operations")
            return str(issue["id"]), str(comment["id"]), str(team["id"])

    assert minted(3) == minted(3)
    assert minted(3) != minted(4)
