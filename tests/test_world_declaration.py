"""Declaring a world: the constructor, the name rule, the schema and its hash, the read-only
members, ``copy.copy`` and ``seahaven.sql_files``."""

from __future__ import annotations

import copy
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven.instance.state import BUILTIN_FORMATS

NOTES_SCHEMA = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;"


def declare(**overrides: Any) -> seahaven.World:
    """A small valid world, with any constructor argument replaced."""
    arguments: dict[str, Any] = {
        "name": "notes",
        "version": "1.0.0",
        "schema": NOTES_SCHEMA,
        "state_format": "seahaven.state/1",
    }
    arguments.update(overrides)
    return seahaven.World(**arguments)


# --- the constructor -----------------------------------------------------------------------------


def test_every_constructor_argument_is_kept(tmp_path: Path) -> None:
    world = declare(
        name="Notes Pro",
        version="2.1.0",
        state_format="seahaven.state+calls/1",
        default_clock_mode="tick",
        description="Short notes for one person.",
        mcp_server_name="Notes & Co",
        mcp_server_instructions="Search before you write.",
        fixtures_dir=tmp_path / "fixtures",
        work_dir=str(tmp_path / "work"),
        untracked_tables=["notes"],
    )
    assert world.name == "Notes Pro"
    assert world.version == "2.1.0"
    assert world.schema == NOTES_SCHEMA
    assert world.pinned_state_format == "seahaven.state+calls/1"
    assert world.default_clock_mode == "tick"
    assert world.description == "Short notes for one person."
    assert world.mcp_server_name == "Notes & Co"
    assert world.mcp_server_instructions == "Search before you write."
    assert world.fixtures_dir == tmp_path / "fixtures"
    assert world.work_dir == tmp_path / "work"
    assert world.untracked_tables == ("notes",)


def test_optional_members_default_sensibly() -> None:
    world = declare()
    assert world.default_clock_mode == "running"
    assert world.description is None
    assert world.mcp_server_instructions is None
    assert world.work_dir is None
    assert world.untracked_tables == ()


def test_mcp_server_name_defaults_to_the_world_name() -> None:
    assert declare(name="ledger").mcp_server_name == "ledger"


def test_mcp_server_instructions_are_kept_untrimmed_even_when_empty() -> None:
    assert declare(mcp_server_instructions="").mcp_server_instructions == ""
    assert declare(mcp_server_instructions="  hi \n").mcp_server_instructions == "  hi \n"


@pytest.mark.parametrize("bad", ["", "   ", "x" * 129])
def test_mcp_server_name_refuses_blank_and_overlong(bad: str) -> None:
    with pytest.raises(seahaven.WorldBug, match="mcp_server_name"):
        declare(mcp_server_name=bad)


def test_mcp_server_name_is_not_held_to_the_world_name_rule() -> None:
    assert declare(mcp_server_name="x" * 128).mcp_server_name == "x" * 128
    assert declare(mcp_server_name="Acme: Notes/Tasks").mcp_server_name == "Acme: Notes/Tasks"


def test_an_unknown_default_clock_mode_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match=r"not a clock mode.*fixed.*tick.*running.*wall"):
        declare(default_clock_mode="sundial")


def test_untracked_tables_as_a_bare_string_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="untracked_tables"):
        declare(untracked_tables="notes")


# --- the world-name rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "a",
        "x" * 128,
        "Notes 2.0",
        "my-world_v1.2",
        "com0",  # only com1 to com9 are devices
        "console",  # a device name only when it is the whole stem
        "nul-ish",
    ],
)
def test_names_inside_the_rule_are_accepted(name: str) -> None:
    assert declare(name=name).name == name


@pytest.mark.parametrize(
    ("name", "clause"),
    [
        ("", "empty"),
        ("x" * 129, "129 characters"),
        ("a/b", "separator"),
        ("a\\b", "separator"),
        ("C:notes", "drive letter"),
        ("a\x00b", "NUL"),
        ("café", "'é'"),
        ("日記", "'日'"),
        ("a*b", "'\\*'"),
        ("tab\there", "'\\\\t'"),
        (" notes", "starts or ends with a space or a dot"),
        ("notes ", "starts or ends with a space or a dot"),
        (".notes", "starts or ends with a space or a dot"),
        ("notes.", "starts or ends with a space or a dot"),
        ("con", "device"),
        ("PRN", "device"),
        ("aux.txt", "device"),
        ("Nul.tar.gz", "device"),
        ("com1", "device"),
        ("COM9.log", "device"),
        ("lpt1", "device"),
        ("lpt9", "device"),
    ],
)
def test_names_outside_the_rule_are_refused_with_the_clause(name: str, clause: str) -> None:
    with pytest.raises(seahaven.WorldBug, match="not a world name") as caught:
        declare(name=name)
    assert re.search(clause, str(caught.value)), str(caught.value)


def test_a_name_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="not a world name"):
        declare(name=42)


# --- the state format pin ------------------------------------------------------------------------


def test_state_format_is_required_and_the_refusal_names_the_built_ins() -> None:
    with pytest.raises(seahaven.WorldBug, match="state_format") as caught:
        seahaven.World(name="notes", version="1.0.0", schema=NOTES_SCHEMA)
    for builtin in BUILTIN_FORMATS:
        assert builtin in str(caught.value)
    assert "seahaven.state/1" in BUILTIN_FORMATS


@pytest.mark.parametrize("builtin", sorted(BUILTIN_FORMATS))
def test_every_built_in_format_can_be_pinned(builtin: str) -> None:
    assert declare(state_format=builtin).pinned_state_format == builtin


def test_a_seahaven_format_that_does_not_exist_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match=r"seahaven.state/1"):
        declare(state_format="seahaven.summary/1")


def test_a_badly_spelled_format_name_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="<family>/<major>"):
        declare(state_format="summary")


def test_a_pinned_format_of_the_worlds_own_must_be_registered_before_an_instance() -> None:
    world = declare(state_format="notes.summary/1")
    assert world.pinned_state_format == "notes.summary/1"
    with pytest.raises(seahaven.WorldBug, match=r"no state format 'notes.summary/1'"):
        world.instance()

    @world.state_format("notes.summary/1")
    def summary(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"count": 0}

    with world.instance() as inst:
        assert inst.state_format == "notes.summary/1"


# --- the schema ----------------------------------------------------------------------------------


def test_a_schema_that_does_not_execute_is_refused_with_sqlites_message() -> None:
    with pytest.raises(seahaven.WorldBug) as caught:
        declare(schema="CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT; CREATE TABEL oops (x);")
    message = str(caught.value)
    assert "does not execute" in message
    assert 'near "TABEL": syntax error' in message


def test_a_schema_that_breaks_a_rule_sqlite_enforces_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="unknown datatype"):
        declare(schema="CREATE TABLE notes (id VARCHAR(5) PRIMARY KEY) STRICT;")


def test_a_schema_that_is_not_text_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="schema must be SQL text"):
        declare(schema=None)


def test_the_schema_hash_is_stable_across_formatting_and_comments() -> None:
    compact = (
        "CREATE TABLE notes(id TEXT PRIMARY KEY,body TEXT NOT NULL DEFAULT 'a  b') STRICT;"
        "CREATE TABLE tags(id TEXT PRIMARY KEY,note_id TEXT REFERENCES notes(id)) STRICT;"
    )
    spread = """
    -- Tags come first in this file; SQLite does not care.
    CREATE TABLE tags (
        id      TEXT PRIMARY KEY,
        note_id TEXT REFERENCES notes (id)   -- the note it hangs on
    ) STRICT;

    /* The notes themselves. */
    CREATE TABLE notes (
        id   TEXT PRIMARY KEY,
        body TEXT NOT NULL DEFAULT 'a  b'
    ) STRICT;
    """
    hashed = declare(schema=compact).schema_hash
    assert len(hashed) == 64 and int(hashed, 16) >= 0
    assert declare(schema=spread).schema_hash == hashed


QUOTED_DEFAULT = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL DEFAULT '{}') STRICT;"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            NOTES_SCHEMA,
            "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, pinned INTEGER) STRICT;",
            id="column added",
        ),
        pytest.param(
            NOTES_SCHEMA,
            "CREATE TABLE notes (id TEXT PRIMARY KEY, body BLOB NOT NULL) STRICT;",
            id="type changed",
        ),
        pytest.param(
            NOTES_SCHEMA,
            "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT) STRICT;",
            id="constraint dropped",
        ),
        pytest.param(
            NOTES_SCHEMA,
            "CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL) STRICT;",
            id="column renamed",
        ),
        pytest.param(
            NOTES_SCHEMA,
            NOTES_SCHEMA + " CREATE INDEX notes_body ON notes (body);",
            id="index added",
        ),
        pytest.param(
            QUOTED_DEFAULT.format("a  b"),
            QUOTED_DEFAULT.format("a b"),
            id="whitespace inside a quoted default is data",
        ),
    ],
)
def test_a_real_schema_change_changes_the_hash(before: str, after: str) -> None:
    assert declare(schema=before).schema_hash != declare(schema=after).schema_hash


def test_rows_a_schema_seeds_are_not_part_of_the_hash() -> None:
    plain = "CREATE TABLE plans (id TEXT PRIMARY KEY) STRICT;"
    seeded = plain + " INSERT INTO plans VALUES ('free');"
    assert declare(schema=plain).schema_hash == declare(schema=seeded).schema_hash


# --- read-only members ---------------------------------------------------------------------------


def _tool_a(ctx: seahaven.Ctx, text: str) -> dict[str, Any]:
    """Echo."""
    return {"text": text}


def _middleware(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
    return next_(ctx, call)


def _hook_one(ctx: seahaven.Ctx, *, user_id: str = "u1", locale: str = "en") -> None:
    ctx.state["user"] = user_id


def _hook_two(ctx: seahaven.Ctx, *, team: str = "core") -> None:
    ctx.state["team"] = team


def test_registries_are_exposed_read_only_in_registration_order() -> None:
    world = declare()
    world.tool(_tool_a)
    world.tool(_tool_a, name="echo_again")
    world.middleware(_middleware)
    world.instance_startup(_hook_one)
    world.instance_startup(_hook_two)

    assert list(world.tools) == ["_tool_a", "echo_again"]
    assert world.tools["echo_again"].fn is _tool_a
    with pytest.raises(TypeError):
        world.tools["x"] = world.tools["_tool_a"]  # type: ignore[index]
    # One function registered as two tools is one key with two tools.
    assert [tool.name for tool in world.tools_by_fn[_tool_a]] == ["_tool_a", "echo_again"]
    assert world.middlewares == (_middleware,)
    assert world.startup_hooks == (_hook_one, _hook_two)
    assert world.accepted_startup_kwargs == {"user_id", "locale", "team"}
    assert isinstance(world.middlewares, tuple)
    assert isinstance(world.startup_hooks, tuple)


def test_state_formats_lists_only_the_worlds_own() -> None:
    world = declare()
    assert world.state_formats == ()

    @world.state_format("notes.summary/1")
    def summary(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {}

    assert world.state_formats == ("notes.summary/1",)


def test_added_worlds_records_each_add_world_call_in_order() -> None:
    host = declare(name="host")
    payments = declare(name="payments")
    chat = declare(name="chat")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(chat, name="slack", tool_block_list=["x"])

    added = host.added_worlds
    assert isinstance(added, tuple)
    assert [(entry.name, entry.world) for entry in added] == [
        ("payments", payments),
        ("slack", chat),
    ]
    assert added[0].tool_prefix == "pay_"
    assert added[1].tool_block_list == ("x",)


def test_members_cannot_be_assigned() -> None:
    world = declare()
    for member in ("name", "version", "schema", "schema_hash", "tools", "pinned_state_format"):
        with pytest.raises(AttributeError):
            setattr(world, member, "changed")


# --- copy.copy -----------------------------------------------------------------------------------


def test_a_copy_shares_the_registrations_and_then_goes_its_own_way(tmp_path: Path) -> None:
    original = declare(fixtures_dir=tmp_path / "original")
    original.tool(_tool_a)
    original.middleware(_middleware)
    original.instance_startup(_hook_one)

    clone = copy.copy(original)
    assert clone is not original
    assert list(clone.tools) == ["_tool_a"]
    assert clone.middlewares == (_middleware,)
    assert clone.startup_hooks == (_hook_one,)
    assert clone.schema_hash == original.schema_hash

    @clone.tool
    def only_on_the_clone(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Only here."""
        return {}

    @original.tool
    def only_on_the_original(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Only there."""
        return {}

    clone.instance_startup(_hook_two)
    assert list(clone.tools) == ["_tool_a", "only_on_the_clone"]
    assert list(original.tools) == ["_tool_a", "only_on_the_original"]
    assert original.startup_hooks == (_hook_one,)

    clone.fixtures_dir = tmp_path / "elsewhere"
    assert clone.fixtures_dir == tmp_path / "elsewhere"
    assert original.fixtures_dir == tmp_path / "original"

    with clone.instance() as inst:
        assert [tool["name"] for tool in inst.tools()] == ["_tool_a", "only_on_the_clone"]
    with original.instance() as inst:
        assert [tool["name"] for tool in inst.tools()] == ["_tool_a", "only_on_the_original"]


# --- sql_files -----------------------------------------------------------------------------------


def make_package(root: Path, files: dict[str, str]) -> str:
    """Write a throwaway package under ``root`` and return its (unique) import name."""
    name = f"shpkg_{uuid.uuid4().hex[:10]}"
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for relative, text in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return name


def test_sql_files_joins_the_files_in_filename_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = make_package(
        tmp_path,
        {
            "schema/010_tags.sql": "CREATE TABLE tags (id TEXT PRIMARY KEY) STRICT;",
            "schema/002_notes.sql": "CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT;",
            "schema/README.md": "not SQL",
            "schema/001_plans.sql": "CREATE TABLE plans (id TEXT PRIMARY KEY) STRICT;",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    text = seahaven.sql_files(package, "schema")
    assert text == (
        "CREATE TABLE plans (id TEXT PRIMARY KEY) STRICT;\n"
        "CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT;\n"
        "CREATE TABLE tags (id TEXT PRIMARY KEY) STRICT;"
    )
    assert set(declare(schema=text).schema_info.tables) == {"plans", "notes", "tags"}


def test_sql_files_reads_a_nested_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = make_package(tmp_path, {"db/schema/001.sql": "SELECT 1;"})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert seahaven.sql_files(package, "db/schema") == "SELECT 1;"


def test_sql_files_refuses_no_package() -> None:
    with pytest.raises(seahaven.WorldBug, match="__package__"):
        seahaven.sql_files(None, "schema")


def test_sql_files_refuses_a_module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = make_package(tmp_path, {"world.py": "", "schema/001.sql": "SELECT 1;"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(seahaven.WorldBug, match="rather than __name__"):
        seahaven.sql_files(f"{package}.world", "schema")


@pytest.mark.parametrize("directory", ["../elsewhere", "schema/../../elsewhere", "/etc", ".", ""])
def test_sql_files_refuses_a_directory_outside_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, directory: str
) -> None:
    package = make_package(tmp_path, {"schema/001.sql": "SELECT 1;"})
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "001.sql").write_text("SELECT 2;")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(seahaven.WorldBug, match="inside"):
        seahaven.sql_files(package, directory)


def test_sql_files_refuses_a_directory_without_sql_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = make_package(tmp_path, {"schema/notes.txt": "nothing here"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(seahaven.WorldBug, match=r"no \*\.sql files"):
        seahaven.sql_files(package, "schema")


def test_sql_files_refuses_a_missing_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = make_package(tmp_path, {})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(seahaven.WorldBug, match="has no directory 'schema'"):
        seahaven.sql_files(package, "schema")


def test_sql_files_refuses_a_package_that_cannot_be_imported() -> None:
    with pytest.raises(seahaven.WorldBug, match="cannot import"):
        seahaven.sql_files(f"missing_{uuid.uuid4().hex}", "schema")
