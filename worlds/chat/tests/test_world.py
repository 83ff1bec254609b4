"""The world as a package: its registration, its schema rules and its published surface."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import pkgutil
import re
import sys
from pathlib import Path

import seahaven

import chat_world
from chat_world.middleware.error_handler import error_handler

PACKAGE = Path(chat_world.__file__).resolve().parent


def test_the_entry_point_publishes_this_world(world: seahaven.World) -> None:
    (entry,) = [
        entry
        for entry in importlib.metadata.entry_points(group="seahaven.worlds")
        if entry.name == "chat"
    ]
    assert entry.value == "chat_world:world"
    assert entry.load() is world is chat_world.world
    assert (world.name, world.version, world.pinned_state_format) == (
        "chat",
        "1.0.0",
        "seahaven.state/1",
    )


def test_fixtures_live_inside_the_package(world: seahaven.World) -> None:
    assert world.fixtures_dir.resolve() == PACKAGE / "fixtures"


def test_every_table_is_strict_and_keyed(world: seahaven.World) -> None:
    tables = world.schema_info.tables
    ordinary = {name: table for name, table in tables.items() if table.kind == "table"}
    assert sorted(ordinary) == ["channels", "memberships", "messages", "reactions", "users"]
    for name, table in ordinary.items():
        assert table.strict, name
        assert table.primary_key, name
    assert tables["messages_fts"].kind == "virtual"


def test_the_schema_reads_no_clock() -> None:
    schema = "\n".join(path.read_text() for path in sorted((PACKAGE / "schema").glob("*.sql")))
    for forbidden in ("current_timestamp", "current_date", "current_time", "'now'"):
        assert forbidden not in schema.lower()


def test_every_module_under_tools_and_middleware_is_imported() -> None:
    for package in (chat_world.tools, chat_world.middleware):
        for module in pkgutil.iter_modules(package.__path__):
            assert f"{package.__name__}.{module.name}" in sys.modules


def test_world_code_draws_time_and_randomness_only_from_ctx() -> None:
    forbidden = re.compile(
        r"datetime\.now|datetime\.utcnow|date\.today|time\.time\(|^import random|^from random"
        r"|uuid4|uuid1|\.instance\(",
        re.MULTILINE,
    )
    for path in PACKAGE.rglob("*.py"):
        assert not forbidden.search(path.read_text()), path


def test_the_error_handler_is_the_outermost_middleware(world: seahaven.World) -> None:
    assert world.middlewares[0] is error_handler


def test_every_tool_is_described_for_an_agent(world: seahaven.World) -> None:
    for name, tool in world.tools.items():
        assert len(tool.description.split()) >= 8, name
        for argument, spec in tool.schema.get("properties", {}).items():
            # At the top of the argument's schema: a harness does not look inside anyOf.
            assert spec.get("description"), f"{name}.{argument}"


def test_no_description_names_a_sibling_tool(world: seahaven.World) -> None:
    # A world that adds chat under a tool prefix renames the tools, never the text, so a
    # description that said "use join_channel" would send its agent to a name it cannot call.
    for name, tool in world.tools.items():
        text = tool.description + json.dumps(tool.schema)
        named = [
            other for other in world.tools if other != name and re.search(rf"\b{other}\b", text)
        ]
        assert named == [], name


def test_the_tool_list_reads_people_channels_messages_reactions_search(
    world: seahaven.World,
) -> None:
    assert list(world.tools) == [
        "list_users",
        "get_user",
        "lookup_user_by_handle",
        "create_user",
        "deactivate_user",
        "list_channels",
        "get_channel",
        "lookup_channel_by_name",
        "create_channel",
        "archive_channel",
        "set_channel_topic",
        "join_channel",
        "leave_channel",
        "invite_to_channel",
        "list_members",
        "post_message",
        "reply_in_thread",
        "list_messages",
        "get_message",
        "get_thread",
        "edit_message",
        "delete_message",
        "add_reaction",
        "remove_reaction",
        "search_messages",
    ]


def test_the_signatures_other_worlds_call_in_process(world: seahaven.World) -> None:
    # A world that adds chat calls these from host code; renaming a parameter breaks it.
    expected = {
        "create_user": ["handle", "display_name", "title", "timezone", "role"],
        "join_channel": ["channel_id"],
        "invite_to_channel": ["channel_id", "user_id"],
        "post_message": ["channel_id", "text"],
        "reply_in_thread": ["message_id", "text"],
        "lookup_user_by_handle": ["handle"],
        "lookup_channel_by_name": ["name"],
    }
    for name, parameters in expected.items():
        signature = inspect.signature(world.tools[name].fn)
        assert list(signature.parameters)[1:] == parameters, name
