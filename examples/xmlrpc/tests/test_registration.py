"""What the factories refuse, and why the world's error handler must be registered first."""

from __future__ import annotations

import xmlrpc.client

import projecttracker
import pytest
import seahaven_xmlrpc
from projecttracker.middleware.error_handler import error_handler

import seahaven


def _ping(ctx: seahaven.Ctx) -> str:
    """Answer pong."""
    return "pong"


def test_the_factory_refuses_what_cannot_be_served() -> None:
    with pytest.raises(seahaven.WorldBug, match="at least one method"):
        seahaven_xmlrpc.xmlrpc_call(methods={})
    with pytest.raises(seahaven.WorldBug, match=r"system\.listMethods"):
        seahaven_xmlrpc.xmlrpc_call(methods={"system.listMethods": _ping})

    def no_annotation(ctx: seahaven.Ctx, value):  # type: ignore[no-untyped-def]
        return value

    with pytest.raises(seahaven.WorldBug, match="value"):
        seahaven_xmlrpc.xmlrpc_call(methods={"echo": no_annotation})
    with pytest.raises(seahaven.WorldBug, match="tools="):
        seahaven_xmlrpc.render_faults(tools=[])


def test_the_tool_is_registered_as_built_and_names_are_the_worlds() -> None:
    built = seahaven_xmlrpc.xmlrpc_call(methods={"ping": _ping}, name="legacy_api")
    assert built.name == "legacy_api"
    world = seahaven.World(
        name="named", version="1.0.0", schema="", state_format="seahaven.state/1"
    )
    with pytest.raises(seahaven.WorldBug, match="factory"):
        world.tool(built, name="other")


def _world(order: str) -> seahaven.World:
    world = seahaven.World(
        name=f"ordered_{order}",
        version="1.0.0",
        schema=seahaven.sql_files(projecttracker.__name__, "schema"),
        state_format="seahaven.state/1",
    )
    world.tool(seahaven_xmlrpc.xmlrpc_call(methods={"ping": _ping}))
    faults = seahaven_xmlrpc.render_faults(tools=["rpc"])
    chain = (error_handler, faults) if order == "handler_first" else (faults, error_handler)
    for middleware in chain:
        world.middleware(middleware)
    return world


def test_with_the_error_handler_outermost_failures_stay_fault_documents() -> None:
    with _world("handler_first").instance() as inst:
        answered = inst.call("rpc", document=5)
    with pytest.raises(xmlrpc.client.Fault) as refused:
        xmlrpc.client.loads(answered)
    assert refused.value.faultCode == seahaven_xmlrpc.INVALID_REQUEST


def test_with_the_error_handler_inside_an_endpoint_answers_something_else() -> None:
    # The handler restates the framework's refusal in the product's words before the fault
    # layer sees it: the caller gets a tool error, not the fault document it was promised.
    with _world("faults_first").instance() as inst, pytest.raises(seahaven.ToolError) as raised:
        inst.call("rpc", document=5)
    assert raised.value.code == "INVALID_INPUT"


def test_other_tools_are_left_alone() -> None:
    world = _world("handler_first")
    world.tool(seahaven.sql_tools.describe_schema(tables=["users"]))
    with world.instance() as inst, pytest.raises(seahaven.ToolError) as raised:
        inst.call("describe_schema", extra=1)
    assert raised.value.code == "INVALID_INPUT"


def test_the_extension_uses_nothing_but_the_public_api() -> None:
    import ast
    import sys

    from conftest import package_root

    for module in sorted(package_root().glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                )
                for name in names:
                    root = name.split(".")[0]
                    # seahaven only as the top-level package; otherwise itself, pydantic, stdlib.
                    assert (
                        name == "seahaven"
                        or root in ("seahaven_xmlrpc", "pydantic")
                        or (root in sys.stdlib_module_names)
                    ), (module.name, name)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "seahaven"
            ):
                assert node.attr in seahaven.__all__, (module.name, node.attr)
