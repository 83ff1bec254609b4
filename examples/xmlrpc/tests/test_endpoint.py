"""The endpoint through real calls: documents in, documents out, one transaction per call."""

from __future__ import annotations

import xmlrpc.client

import pytest
import seahaven_xmlrpc
from conftest import call, fault

import seahaven


@pytest.fixture
def inst(world: seahaven.World) -> seahaven.Instance:
    with world.instance("small_startup", clock_mode="fixed", startup={"user_id": "u_2"}) as made:
        yield made


def test_the_surface_is_one_tool_with_the_methods_described(inst: seahaven.Instance) -> None:
    [tool] = inst.tools()
    assert tool["name"] == "rpc"
    assert sorted(tool["input_schema"]["properties"]) == ["document"]
    assert "issue.get(key, issue_id)" in tool["description"]
    assert "Close every issue named by key" in tool["description"]


def test_a_method_answers_a_method_response(inst: seahaven.Instance) -> None:
    issue = call(inst, "issue.get", "ENG-12")
    assert issue["title"] == "The session cookie leaks a stack trace"
    assert issue["completed_at"] is None  # <nil/> travels both ways
    closed = call(inst, "issue.transition", issue["id"], "done")
    assert (closed["status"], closed["assignee_id"]) == ("done", None)
    # The startup viewer of the world is who the method acted as.
    trail = inst.inspect().rows(
        "SELECT actor_id FROM issue_events WHERE issue_id = ? AND created_at = ?",
        issue["id"],
        inst.clock.iso(),
    )
    assert {row["actor_id"] for row in trail} == {"u_2"}
    # Optional parameters may be left off the end, or sent as nil.
    assert call(inst, "issue.get", None, issue["id"])["key"] == "ENG-12"
    found = call(inst, "issue.search", "session cookie")
    assert found["issues"][0]["key"] == "ENG-12"


def test_introspection_lists_and_explains_the_methods(inst: seahaven.Instance) -> None:
    listed = call(inst, "system.listMethods")
    assert "issue.closeAll" in listed and "system.methodHelp" in listed
    assert listed == sorted(listed)
    assert call(inst, "system.methodHelp", "issue.closeAll").startswith("Close every issue")
    assert fault(inst, "system.methodHelp", "nope").faultCode == seahaven_xmlrpc.METHOD_NOT_FOUND


def test_a_fault_rolls_back_everything_the_method_wrote(inst: seahaven.Instance) -> None:
    refused = fault(inst, "issue.closeAll", ["ENG-3", "ENG-4", "ENG-999"])
    assert refused.faultCode == seahaven_xmlrpc.APPLICATION_ERROR
    assert refused.faultString == "NOT_FOUND: issue ENG-999 not found"
    # ENG-3 and ENG-4 were closed before the method failed, and neither close survived.
    statuses = inst.inspect().rows(
        "SELECT status FROM issues WHERE key IN ('ENG-3', 'ENG-4') ORDER BY key"
    )
    assert [row["status"] for row in statuses] == ["in_progress", "todo"]
    assert {record.table for record in inst.change_log()} == {"xmlrpc_calls"}
    assert call(inst, "issue.closeAll", ["ENG-3", "ENG-4"]) == ["ENG-3", "ENG-4"]


def test_the_product_errors_arrive_as_application_faults(inst: seahaven.Instance) -> None:
    taken = fault(inst, "user.create", "maya@tally.test", "Maya Again")
    assert taken.faultCode == seahaven_xmlrpc.APPLICATION_ERROR
    assert taken.faultString.startswith("CONFLICT: maya@tally.test is already the email of u")


def test_parameters_are_checked_against_the_method(inst: seahaven.Instance) -> None:
    wrong_type = fault(inst, "issue.transition", "some-id", 3)
    assert wrong_type.faultCode == seahaven_xmlrpc.INVALID_PARAMS
    assert "status" in wrong_type.faultString
    too_many = fault(inst, "user.get", "u_1", "maya@tally.test", "extra")
    assert too_many.faultCode == seahaven_xmlrpc.INVALID_PARAMS
    assert "at most 2 parameters" in too_many.faultString
    missing = fault(inst, "issue.comment", "only-an-id")
    assert missing.faultCode == seahaven_xmlrpc.INVALID_PARAMS
    assert "body" in missing.faultString
    # A dateTime where text belongs is refused as strictly as a tool's argument would be.
    when = xmlrpc.client.DateTime("20260601T09:00:00")
    assert fault(inst, "issue.get", when).faultCode == seahaven_xmlrpc.INVALID_PARAMS


def test_an_unknown_method_is_method_not_found(inst: seahaven.Instance) -> None:
    missing = fault(inst, "issue.delete", "ENG-1")
    assert missing.faultCode == seahaven_xmlrpc.METHOD_NOT_FOUND
    assert "issue.get" in missing.faultString  # the answer says what is served
