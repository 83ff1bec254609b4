"""Hostile and malformed documents: every one answered with a fault document, nothing kept."""

from __future__ import annotations

import logging
import xmlrpc.client

import pytest
import seahaven_xmlrpc
from conftest import call, raw

import seahaven


@pytest.fixture
def inst(world: seahaven.World) -> seahaven.Instance:
    with world.instance("small_startup", clock_mode="fixed") as made:
        yield made


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ("not xml at all", seahaven_xmlrpc.PARSE_ERROR),
        ("<methodCall><methodName>issue.get</methodName>", seahaven_xmlrpc.PARSE_ERROR),
        ("<whatever/>", seahaven_xmlrpc.INVALID_REQUEST),
        (
            xmlrpc.client.dumps(("a",), methodresponse=True),
            seahaven_xmlrpc.INVALID_REQUEST,
        ),
        (
            "<methodCall><methodName>issue.get</methodName><params><param><value><int>"
            "twelve</int></value></param></params></methodCall>",
            seahaven_xmlrpc.INVALID_REQUEST,
        ),
        (
            '<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa">]>'
            "<methodCall><methodName>&a;</methodName></methodCall>",
            seahaven_xmlrpc.INVALID_REQUEST,
        ),
    ],
    ids=[
        "not-xml",
        "unclosed",
        "not-a-method-call",
        "a-response",
        "a-bad-int",
        "a-dtd",
    ],
)
def test_a_document_that_is_not_a_method_call_is_a_fault(
    inst: seahaven.Instance, document: str, code: int
) -> None:
    answered = raw(inst, document)
    assert isinstance(answered, xmlrpc.client.Fault), answered
    assert answered.faultCode == code
    rows = inst.inspect().rows("SELECT method, fault_code FROM xmlrpc_calls")
    assert rows == [{"method": None, "fault_code": code}]


@pytest.mark.parametrize(
    "document",
    [
        "<methodCall><methodName>a\udcffb</methodName></methodCall>",
        "<methodCall>" + "x" * 1_000_001 + "</methodCall>",
    ],
    ids=["lone-surrogate", "too-long"],
)
def test_a_document_the_framework_refuses_is_an_invalid_request(
    inst: seahaven.Instance, document: str
) -> None:
    answered = raw(inst, document)
    assert isinstance(answered, xmlrpc.client.Fault), answered
    assert answered.faultCode == seahaven_xmlrpc.INVALID_REQUEST
    assert "document" in answered.faultString
    # Refused before the endpoint ran, so the endpoint has nothing to log.
    assert inst.inspect().rows("SELECT method FROM xmlrpc_calls") == []


def test_deep_nesting_is_read_without_recursion(inst: seahaven.Instance) -> None:
    deep = "<value><array><data>" * 5_000 + "</data></array></value>" * 5_000
    document = (
        "<methodCall><methodName>system.listMethods</methodName><params><param>"
        f"{deep}</param></params></methodCall>"
    )
    # system.listMethods takes the parameter list as it is; the point is that it was read.
    assert isinstance(raw(inst, document), tuple)


def test_an_endpoint_called_without_a_document_answers_a_fault(inst: seahaven.Instance) -> None:
    for arguments in ({}, {"document": 5}, {"document": "x", "extra": 1}):
        answered = inst.call("rpc", **arguments)
        with pytest.raises(xmlrpc.client.Fault) as refused:
            xmlrpc.client.loads(answered)
        assert refused.value.faultCode == seahaven_xmlrpc.INVALID_REQUEST


def test_a_method_that_crashes_is_an_internal_fault_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(ctx: seahaven.Ctx, how: str) -> str:
        """Fail the way a bug does."""
        ctx.db.execute("UPDATE issues SET title = 'half way' WHERE key = 'ENG-1'")
        if how == "db":
            ctx.db.execute("INSERT INTO nowhere VALUES (1)")
        raise KeyError(how)

    world = seahaven.World(
        name="crashing",
        version="1.0.0",
        schema="CREATE TABLE issues (key TEXT PRIMARY KEY, title TEXT NOT NULL) STRICT;"
        + seahaven_xmlrpc.CALL_LOG_DDL,
        state_format="seahaven.state/1",
    )
    world.tool(seahaven_xmlrpc.xmlrpc_call(methods={"explode": explode}, log_calls=True))
    world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
    with world.instance(setup_sql="INSERT INTO issues VALUES ('ENG-1', 'whole')") as inst:
        for how in ("db", "python"):
            with (
                caplog.at_level(logging.ERROR, logger="seahaven_xmlrpc"),
                pytest.raises(xmlrpc.client.Fault) as refused,
            ):
                call(inst, "explode", how)
            assert refused.value.faultCode == seahaven_xmlrpc.INTERNAL_ERROR
            assert "nowhere" not in refused.value.faultString
        assert inst.inspect().one("SELECT title FROM issues") == {"title": "whole"}
        logged = [record.getMessage() for record in caplog.records]
        assert any("no such table: nowhere" in line for line in logged)
        assert any("KeyError" in line for line in logged)


def test_a_result_xml_rpc_cannot_carry_is_an_internal_fault() -> None:
    def huge(ctx: seahaven.Ctx) -> int:
        """An integer wider than XML-RPC's 32 bits."""
        return 2**40

    world = seahaven.World(
        name="too_big",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )
    world.tool(seahaven_xmlrpc.xmlrpc_call(methods={"huge": huge}))
    world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
    with world.instance() as inst, pytest.raises(xmlrpc.client.Fault) as refused:
        call(inst, "huge")
    assert refused.value.faultCode == seahaven_xmlrpc.INTERNAL_ERROR
