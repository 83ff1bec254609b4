"""The world as a package: its entry point, its schema rules, its registrations and its policy."""

from __future__ import annotations

import importlib.metadata
import pkgutil
import sys
from pathlib import Path
from typing import get_type_hints

import chat_world
import company_world
import payments_world
from company_world import access, portal
from company_world.middleware.error_handler import error_handler
from company_world.middleware.gate import gate
from company_world.world import CHAT_TOOLS, EU_BLOCKED_TOOLS

import seahaven

PACKAGE = Path(company_world.__file__).resolve().parent


def test_the_entry_point_publishes_this_world(world: seahaven.World) -> None:
    (entry,) = [
        entry
        for entry in importlib.metadata.entry_points(group="seahaven.worlds")
        if entry.name == "company"
    ]
    assert entry.value == "company_world:world"
    assert entry.load() is world is company_world.world
    assert (world.name, world.version, world.pinned_state_format) == (
        "company",
        "1.1.0",
        "seahaven.state/1",
    )


def test_the_distribution_depends_on_the_two_worlds_it_adds() -> None:
    requirements = importlib.metadata.requires("seahaven-world-company") or []
    # Beside these, the serve extra asks for seahaven[serve]; an extra is not a dependency.
    assert sorted(r for r in requirements if "extra ==" not in r) == [
        "seahaven-world-chat<2,>=1.0",
        "seahaven-world-payments<2,>=1.0",
        "seahaven<0.2,>=0.1",
    ]


def test_the_fixtures_live_inside_the_package(world: seahaven.World) -> None:
    assert world.fixtures_dir.resolve() == PACKAGE / "fixtures"


def test_every_table_is_strict_and_keyed(world: seahaven.World) -> None:
    tables = world.schema_info.tables
    ordinary = {name: table for name, table in tables.items() if table.kind == "table"}
    assert sorted(ordinary) == ["approvals", "audit_log", "expenses", "invoices", "staff"]
    for name, table in ordinary.items():
        assert table.strict, name
        assert table.primary_key, name


def test_the_schema_reads_no_clock() -> None:
    schema = "\n".join(path.read_text() for path in sorted((PACKAGE / "schema").glob("*.sql")))
    for forbidden in ("current_timestamp", "current_date", "current_time", "'now'"):
        assert forbidden not in schema.lower()


def test_every_module_under_tools_and_middleware_is_imported() -> None:
    for package in (company_world.tools, company_world.middleware):
        modules = list(pkgutil.iter_modules(package.__path__))
        assert modules
        for module in modules:
            assert f"{package.__name__}.{module.name}" in sys.modules


def test_the_error_handler_is_outermost_and_the_gate_next(world: seahaven.World) -> None:
    assert world.middlewares == (error_handler, gate)


def test_the_company_adds_four_worlds_in_the_order_the_agent_sees_them(
    world: seahaven.World,
) -> None:
    added = [
        (item.world, item.name, item.store, item.tool_prefix, dict(item.startup))
        for item in world.added_worlds
    ]
    assert added == [
        (payments_world.world, "payments", None, "pay_", {"settlement_days": 0}),
        (chat_world.world, "chat", None, "chat_", {"user": "backoffice"}),
        (payments_world.world, "payments_eu", "eu", "eu_pay_", {"settlement_days": 2}),
        (portal.world, "portal", None, "portal_", {}),
    ]
    payments, chat, europe, customers = world.added_worlds
    assert (payments.tool_allow_list, payments.tool_block_list) == (None, None)
    assert (customers.tool_allow_list, customers.tool_block_list) == (None, None)
    assert chat.tool_allow_list == CHAT_TOOLS
    assert europe.tool_block_list == EU_BLOCKED_TOOLS


def test_the_worlds_class_annotates_exactly_the_added_names(world: seahaven.World) -> None:
    hints = get_type_hints(company_world.CompanyWorlds)
    names = ("payments", "chat", "payments_eu", "portal")
    assert hints == {name: seahaven.WorldHandle for name in names}
    assert [item.name for item in world.added_worlds] == list(hints)


def test_the_policy_names_every_own_tool_and_every_added_world(world: seahaven.World) -> None:
    assert sorted(access.OWN_TOOL_ROLES) == sorted(world.tools)
    assert sorted(access.ADDED_WORLD_ROLES) == sorted(item.name for item in world.added_worlds)
    for roles in (*access.OWN_TOOL_ROLES.values(), *access.ADDED_WORLD_ROLES.values()):
        assert roles <= access.EVERYONE and "admin" in roles


def test_every_own_description_says_what_the_tool_does_and_how_it_fails(
    world: seahaven.World,
) -> None:
    for name, tool in world.tools.items():
        assert len(tool.description.split()) >= 12, name
        if name not in ("get_company_summary",):  # reads only, and cannot fail
            assert "Errors:" in tool.description, name
