"""The call log: a row for every call, faults included, and the client that made it."""

from __future__ import annotations

import pytest
import seahaven_xmlrpc
from conftest import call, fault

import seahaven


def test_every_call_is_logged_with_its_client_and_its_fault(world: seahaven.World) -> None:
    startup = {"xmlrpc_client": "eval-harness/2.1"}
    with world.instance("small_startup", clock_mode="fixed", startup=startup) as inst:
        call(inst, "issue.get", "ENG-3")
        fault(inst, "issue.get", "ENG-999")
        fault(inst, "no.such")
        rows = inst.inspect().rows(
            "SELECT method, client, fault_code, fault_string FROM xmlrpc_calls ORDER BY rowid"
        )
    assert rows == [
        {
            "method": "issue.get",
            "client": "eval-harness/2.1",
            "fault_code": None,
            "fault_string": None,
        },
        {
            "method": "issue.get",
            "client": "eval-harness/2.1",
            "fault_code": seahaven_xmlrpc.APPLICATION_ERROR,
            "fault_string": "NOT_FOUND: issue ENG-999 not found",
        },
        {
            "method": "no.such",
            "client": "eval-harness/2.1",
            "fault_code": seahaven_xmlrpc.METHOD_NOT_FOUND,
            "fault_string": rows[2]["fault_string"],
        },
    ]


def test_a_faulted_calls_log_row_is_in_the_change_log_and_nothing_else(
    world: seahaven.World,
) -> None:
    with world.instance("small_startup") as inst:
        fault(inst, "issue.closeAll", ["ENG-3", "ENG-999"])
        records = inst.change_log()
    assert [(record.table, record.op) for record in records] == [("xmlrpc_calls", "insert")]


def test_a_world_that_forgot_the_table_is_told_how_to_fix_it() -> None:
    def ping(ctx: seahaven.Ctx) -> str:
        """Answer pong."""
        return "pong"

    world = seahaven.World(
        name="forgetful",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )
    world.tool(seahaven_xmlrpc.xmlrpc_call(methods={"ping": ping}, log_calls=True))
    world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match="call_log_ddl"):
        call(inst, "ping")


def test_the_call_log_table_is_the_worlds_to_name() -> None:
    def ping(ctx: seahaven.Ctx) -> str:
        """Answer pong."""
        return "pong"

    world = seahaven.World(
        name="named_log",
        version="1.0.0",
        schema=seahaven_xmlrpc.call_log_ddl("rpc_audit"),
        state_format="seahaven.state/1",
    )
    world.tool(
        seahaven_xmlrpc.xmlrpc_call(
            methods={"ping": ping}, log_calls=True, call_log_table="rpc_audit"
        )
    )
    world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
    with world.instance() as inst:
        assert call(inst, "ping") == "pong"
        assert inst.inspect().one("SELECT method FROM rpc_audit") == {"method": "ping"}
    with pytest.raises(seahaven.WorldBug, match="lower-case"):
        seahaven_xmlrpc.call_log_ddl("Audit; DROP TABLE x")


def test_the_call_log_changes_the_schema_hash(world: seahaven.World) -> None:
    import projecttracker

    assert world.schema_hash != projecttracker.world.schema_hash
    # So projecttracker's own fixture is refused by the copy, with the way out named.
    copy_of = seahaven.World(
        name="projecttracker",
        version="1.0.0",
        schema=world.schema,
        state_format="seahaven.state/1",
        fixtures_dir=projecttracker.world.fixtures_dir,
    )
    with pytest.raises(seahaven.WorldBug, match="schema"):
        copy_of.instance("small_startup")
