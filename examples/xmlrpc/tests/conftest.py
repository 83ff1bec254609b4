"""The copy of ProjectTracker, its fixture, and a client call made with ``xmlrpc.client``.

Every request document here is written by the standard library's ``xmlrpc.client.dumps`` and
every answer read by ``xmlrpc.client.loads``, so what passes is what any XML-RPC client sends
and understands, not what these tests happen to agree with.
"""

from __future__ import annotations

import copy
import xmlrpc.client
from pathlib import Path
from typing import Any

import projecttracker
import pytest
import tracker_rpc

import seahaven

NOW = "2026-06-01T09:00:00.000Z"
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


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> seahaven.World:
    """The copy, with ``small_startup`` frozen for it from projecttracker's own rows.

    The call log's table changes the schema hash, so projecttracker's fixture cannot be used
    as it is: it is rebuilt here, row for row, the way a world adding the extension would
    regenerate its fixtures.
    """
    built = copy.copy(tracker_rpc.world)
    built.fixtures_dir = tmp_path_factory.mktemp("fixtures")
    with projecttracker.world.instance("small_startup") as source:
        rows = {table: source.inspect().rows(f"SELECT * FROM {table}") for table in TABLES}
    with built.instance(now=NOW, clock_mode="fixed", seed=1) as blank:
        with blank.bulk() as ctx:
            for table, content in rows.items():
                for row in content:
                    columns = ", ".join(row)
                    marks = ", ".join("?" for _ in row)
                    ctx.db.execute(
                        f"INSERT INTO {table} ({columns}) VALUES ({marks})", *row.values()
                    )
        blank.freeze("small_startup", "projecttracker's small_startup, with a call log")
    return built


def call(inst: seahaven.Instance, method: str, *params: Any, tool: str = "rpc") -> Any:
    """Call ``method`` through the endpoint; its one result, or ``xmlrpc.client.Fault``."""
    document = xmlrpc.client.dumps(params, method, allow_none=True)
    answered = inst.call(tool, document=document)
    assert isinstance(answered, str)
    (result,), _ = xmlrpc.client.loads(answered, use_builtin_types=True)
    return result


def fault(inst: seahaven.Instance, method: str, *params: Any) -> xmlrpc.client.Fault:
    """Call ``method`` expecting a fault document; return the fault the client reads."""
    with pytest.raises(xmlrpc.client.Fault) as raised:
        call(inst, method, *params)
    return raised.value


def raw(inst: seahaven.Instance, document: str) -> xmlrpc.client.Fault | tuple[Any, ...]:
    """Send a hand-made document; the fault it answers, or the parameters of the answer."""
    answered = inst.call("rpc", document=document)
    try:
        return xmlrpc.client.loads(answered)[0]
    except xmlrpc.client.Fault as refused:
        return refused


def package_root() -> Path:
    """Where the extension's package lives, for the tests that read its source."""
    return Path(__file__).resolve().parents[1] / "src" / "seahaven_xmlrpc"
