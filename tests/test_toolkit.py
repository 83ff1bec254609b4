"""``seahaven.toolkit``: the error handler, rows to models, cursors and keyset pages."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import seahaven
from seahaven import toolkit


class Internal(seahaven.ToolError):
    def __init__(self) -> None:
        super().__init__("INTERNAL", "something broke on our side")


class Refused(seahaven.ToolError):
    def __init__(self, message: str) -> None:
        super().__init__("REFUSED", message)


class Restated(seahaven.ToolError):
    def __init__(self, tool: str, count: int) -> None:
        super().__init__("BAD_ARGUMENTS", f"{count} bad argument(s) to {tool}")


def handled_world() -> seahaven.World:
    world = seahaven.World(
        name="handled",
        version="1.0.0",
        schema="CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    world.middleware(
        toolkit.error_handler(
            logger=logging.getLogger("handled"),
            invalid_arguments=lambda error, call: Restated(call.name, len(error.violations)),
            internal=Internal,
        )
    )
    bug = seahaven.WorldBug("the author's mistake")

    @world.tool
    def add(ctx: seahaven.Ctx, count: int) -> dict[str, int]:
        """Takes a whole number."""
        return {"count": count}

    @world.tool
    def refuses(ctx: seahaven.Ctx) -> None:
        """Refuses, in the world's words."""
        raise Refused("no")

    @world.tool
    def misused(ctx: seahaven.Ctx) -> None:
        """A bug of the author's."""
        raise bug

    @world.tool
    def bad_sql(ctx: seahaven.Ctx) -> None:
        """Writes a column that is not there."""
        ctx.db.execute("INSERT INTO notes (id, nobody) VALUES ('n', 'x')")

    @world.tool
    def crashes(ctx: seahaven.Ctx) -> None:
        """A defect."""
        raise KeyError("missing")

    return world


def test_the_handler_is_named_for_what_it_is() -> None:
    handler = handled_world().middlewares[0]
    assert handler.__name__ == handler.__qualname__ == "error_handler"


def test_argument_errors_are_restated_with_the_call_in_hand() -> None:
    with handled_world().instance() as inst, pytest.raises(Restated) as raised:
        inst.call("add", count="three")
    assert raised.value.message == "1 bad argument(s) to add"
    assert isinstance(raised.value.__cause__, seahaven.ArgumentError)


def test_the_worlds_own_errors_and_world_bugs_pass_as_raised() -> None:
    world = handled_world()
    with world.instance() as inst:
        with pytest.raises(Refused, match="no"):
            inst.call("refuses")
        with pytest.raises(seahaven.WorldBug, match="the author's mistake"):
            inst.call("misused")


def test_a_database_refusal_is_logged_with_sqlites_words_and_the_agent_reads_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        handled_world().instance() as inst,
        caplog.at_level(logging.ERROR, logger="handled"),
        pytest.raises(Internal) as raised,
    ):
        inst.call("bad_sql")
    assert "nobody" not in raised.value.message
    assert isinstance(raised.value.__cause__, seahaven.DbError)
    [logged] = [record for record in caplog.records if record.name == "handled"]
    assert "database error under bad_sql (node=main)" in logged.getMessage()
    assert "nobody" in logged.getMessage()
    assert logged.exc_info is not None and logged.exc_info[1] is raised.value.__cause__


def test_a_defect_is_logged_with_its_traceback_and_the_agent_reads_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        handled_world().instance() as inst,
        caplog.at_level(logging.ERROR, logger="handled"),
        pytest.raises(Internal) as raised,
    ):
        inst.call("crashes")
    assert isinstance(raised.value.__cause__, KeyError)
    [logged] = [record for record in caplog.records if record.name == "handled"]
    assert "unexpected error under crashes (node=main): KeyError" in logged.getMessage()
    assert logged.exc_info is not None and logged.exc_info[0] is KeyError


# --- from_row -------------------------------------------------------------------------------------


class Note(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)

    id: str
    body: str
    pinned: bool
    words: int


def test_from_row_reads_each_field_from_its_column_and_bools_from_integers() -> None:
    row = {"id": "n1", "body": "two words", "pinned": 1, "words": 2, "unused": "x"}
    assert toolkit.from_row(Note, row) == Note(id="n1", body="two words", pinned=True, words=2)


def test_from_row_takes_what_is_worked_out_from_its_keywords() -> None:
    row = {"id": "n1", "body": "three short words", "pinned": 0}
    note = toolkit.from_row(Note, row, words=len(row["body"].split()))
    assert (note.words, note.pinned) == (3, False)


def test_from_row_names_the_model_and_the_missing_column() -> None:
    with pytest.raises(seahaven.WorldBug, match=r"from_row\(Note\).*no column 'words'"):
        toolkit.from_row(Note, {"id": "n1", "body": "", "pinned": 0})


def test_from_row_leaves_validation_to_the_model() -> None:
    with pytest.raises(ValueError):
        toolkit.from_row(Note, {"id": 1, "body": "", "pinned": 0, "words": 0})


# --- cursors --------------------------------------------------------------------------------------


def test_a_cursor_carries_its_position_back() -> None:
    cursor = toolkit.encode_cursor(("list_notes", None), ["2026-06-01", "n7"])
    assert toolkit.decode_cursor(cursor, ("list_notes", None), (str, str)) == ["2026-06-01", "n7"]
    assert "n7" not in cursor and "=" not in cursor


@pytest.mark.parametrize(
    ("cursor", "listing", "shape", "reason"),
    [
        ("not a cursor", ("list_notes",), (str,), "malformed"),
        ("e30", ("list_notes",), (str,), "malformed"),  # {} has no position
        (toolkit.encode_cursor(("list_notes",), ["a"]), ("list_notes",), (str, str), "position"),
        (toolkit.encode_cursor(("list_notes",), [True]), ("list_notes",), (int,), "position"),
        (toolkit.encode_cursor(("list_notes",), ["a"]), ("list_tags",), (str,), "listing"),
        (toolkit.encode_cursor(("list_notes", 1), ["a"]), ("list_notes", 2), (str,), "listing"),
    ],
)
def test_a_cursor_that_does_not_fit_says_why(
    cursor: str, listing: tuple[object, ...], shape: tuple[type, ...], reason: str
) -> None:
    with pytest.raises(toolkit.CursorError) as raised:
        toolkit.decode_cursor(cursor, listing, shape)
    assert raised.value.reason == reason


# --- pages ----------------------------------------------------------------------------------------


def paged_world() -> seahaven.World:
    return seahaven.World(
        name="paged",
        version="1.0.0",
        schema="CREATE TABLE items (id TEXT PRIMARY KEY, at TEXT NOT NULL, kind TEXT) STRICT;",
        state_format="seahaven.state/1",
    )


ROWS = "INSERT INTO items VALUES " + ", ".join(
    f"('i{n}', '{'2026' if n % 2 else '2027'}', '{'a' if n < 5 else 'b'}')" for n in range(8)
)


@pytest.mark.parametrize("descending", [False, True])
def test_pages_cover_every_row_once_in_a_total_order(descending: bool) -> None:
    with paged_world().instance(setup_sql=ROWS) as inst:
        seen: list[tuple[str, str]] = []
        after: list[Any] | None = None
        while True:
            rows, more = toolkit.keyset_page(
                inst.db,
                table="items",
                where=[],
                params=[],
                order_by="at",
                descending=descending,
                limit=3,
                after=after,
            )
            seen.extend((row["at"], row["id"]) for row in rows)
            if not more:
                break
            after = [rows[-1]["at"], rows[-1]["id"]]
    assert seen == sorted(seen, reverse=descending)
    assert len(seen) == len(set(seen)) == 8


def test_a_page_is_filtered_by_the_tools_own_conditions() -> None:
    with paged_world().instance(setup_sql=ROWS) as inst:
        rows, more = toolkit.keyset_page(
            inst.db,
            table="items",
            where=["kind = ?"],
            params=["b"],
            order_by="at",
            descending=False,
            limit=10,
            after=None,
        )
    assert ({row["kind"] for row in rows}, len(rows), more) == ({"b"}, 3, False)


def test_split_page_keeps_the_limit_and_says_whether_more_followed() -> None:
    assert toolkit.split_page([1, 2, 3], 2) == ([1, 2], True)
    assert toolkit.split_page([1, 2], 2) == ([1, 2], False)
    assert toolkit.split_page([], 2) == ([], False)


# --- rebuilding shipped fixtures ------------------------------------------------------------------


def _shelf_world(fixtures: Any) -> tuple[seahaven.World, Any]:
    """A world with fixtures ``base`` and ``more`` (forked from it), and a builder noting order."""
    world = seahaven.World(
        name="shelf",
        version="1.0.0",
        schema="CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        fixtures_dir=fixtures,
    )

    @world.tool
    def shelve(ctx: seahaven.Ctx, title: str) -> dict[str, object]:
        """Put a book on the shelf."""
        return {"id": ctx.db.execute("INSERT INTO books (title) VALUES (?)", title).last_rowid}

    built: list[str] = []

    def build(fixture_id: str) -> seahaven.Fixture:
        built.append(fixture_id)
        parent = "base" if fixture_id == "more" else None
        with world.instance(parent, now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
            inst.call("shelve", title=f"a book for {fixture_id}")
            return inst.freeze(fixture_id, f"The {fixture_id} shelf.")

    return world, (build, built)


def test_rebuild_fixtures_builds_parents_first_and_replaces_each_folder(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    into = tmp_path / "fixtures"
    world, (build, built) = _shelf_world(into)
    known, parents = ["more", "base"], {"more": "base"}
    assert toolkit.rebuild_fixtures(world, build, known, into=into, parents=parents) == 0
    assert built == ["base", "more"]
    first = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in first] == ["built base", "built more"]
    (into / "more" / "stray.txt").write_text("left by hand")

    assert toolkit.rebuild_fixtures(world, build, known, ["more"], into=into, parents=parents) == 0
    assert built == ["base", "more", "more"]
    assert not (into / "more" / "stray.txt").exists()
    assert capsys.readouterr().out.splitlines() == [first[1]]
    assert [fixture.id for fixture in world.fixtures()] == ["base", "more"]


def test_rebuilding_an_unchanged_fixture_keeps_it_created_at_and_all(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    into = tmp_path / "fixtures"
    world, (build, built) = _shelf_world(into)
    known, parents = ["base", "more"], {"more": "base"}
    assert toolkit.rebuild_fixtures(world, build, known, into=into, parents=parents) == 0
    sidecars = {name: (into / name / "fixture.yaml").read_bytes() for name in known}
    capsys.readouterr()

    assert toolkit.rebuild_fixtures(world, build, known, into=into, parents=parents) == 0
    assert built == ["base", "more", "base", "more"]
    # Same bytes, same fields: nothing on disk changes, so nothing churns in git.
    assert {name: (into / name / "fixture.yaml").read_bytes() for name in known} == sidecars
    assert all(
        line.endswith("(unchanged: the existing fixture and its created_at are kept)")
        for line in capsys.readouterr().out.splitlines()
    )
    assert sorted(entry.name for entry in into.iterdir()) == known


def test_a_rebuild_that_changes_the_fixture_gets_a_new_created_at(tmp_path: Any) -> None:
    from seahaven.fixtures.freezing import rebuild

    into = tmp_path / "fixtures"
    world, (build, _) = _shelf_world(into)
    first = build("base")

    frozen: list[seahaven.Fixture] = []

    def changed() -> seahaven.Fixture:
        with world.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
            inst.call("shelve", title="another book")
            frozen.append(inst.freeze("base", "The base shelf."))
            return frozen[-1]

    fixture, was_changed = rebuild(into, "base", changed)
    assert was_changed and fixture.file_sha256 != first.file_sha256
    assert fixture == frozen[0]  # its sidecar, created_at included, is the new freeze's
    assert [entry.name for entry in into.iterdir()] == ["base"]


def test_a_rebuild_that_fails_leaves_the_committed_fixture_in_place(tmp_path: Any) -> None:
    from seahaven.fixtures.freezing import rebuild

    into = tmp_path / "fixtures"
    _, (build, _) = _shelf_world(into)
    first = build("base")
    before = {path.name: path.read_bytes() for path in first.directory.iterdir()}

    def broken() -> seahaven.Fixture:
        raise RuntimeError("the generator broke half way")

    with pytest.raises(RuntimeError, match="half way"):
        rebuild(into, "base", broken)
    assert [entry.name for entry in into.iterdir()] == ["base"]
    assert {path.name: path.read_bytes() for path in first.directory.iterdir()} == before


def test_rebuild_fixtures_refuses_an_unknown_name_and_builds_nothing(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    into = tmp_path / "fixtures"
    world, (build, built) = _shelf_world(into)
    assert toolkit.rebuild_fixtures(world, build, ["base"], ["base", "nope"], into=into) == 2
    assert built == []
    assert not into.exists()
    assert capsys.readouterr().err == "unknown fixture nope; known: base\n"


def test_rebuild_fixtures_refuses_a_world_whose_fixtures_live_elsewhere(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    world, (build, built) = _shelf_world(tmp_path / "installed" / "fixtures")
    into = tmp_path / "checkout" / "fixtures"
    into.parent.mkdir()
    assert toolkit.rebuild_fixtures(world, build, ["base"], into=into) == 1
    assert built == []
    assert not into.exists()
    error = capsys.readouterr().err
    assert "resolves its fixtures to" in error and "pip install -e ." in error
