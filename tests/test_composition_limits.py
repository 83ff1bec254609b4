"""Limits: what an idle composite instance holds, and why a copied world is another node."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from composition_worlds import STAFF, add_echo_tools, make_payments, make_world, surface

import seahaven

PROC_FDS = Path("/proc/self/fd")


def _open_descriptors(directory: Path) -> dict[str, int]:
    """How many of this process's descriptors point at each ``*.sqlite`` file in ``directory``."""
    counts: dict[str, int] = {}
    for descriptor in PROC_FDS.iterdir():
        try:
            target = Path(os.readlink(descriptor))
        except OSError:
            continue
        if target.parent == directory and target.suffix == ".sqlite":
            counts[target.name] = counts.get(target.name, 0) + 1
    return counts


def _company() -> seahaven.World:
    tax = make_world("tax", "CREATE TABLE rates (id TEXT PRIMARY KEY) STRICT;")
    payments = make_payments()
    payments.add_world(tax)
    host = make_world("company", STAFF)
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")
    return host


@pytest.mark.usefixtures("on_disk")
@pytest.mark.skipif(not PROC_FDS.is_dir(), reason="needs /proc/self/fd to count open files")
def test_an_idle_instance_holds_one_file_and_one_connection_per_node() -> None:
    host = _company()

    with host.instance() as inst:
        inst.call("pay_create_charge", amount=1)
        inst.call("eu_count_charges")
        expected = {
            "state.sqlite": 1,
            "state.payments.sqlite": 1,
            "state.payments__tax.sqlite": 1,
            "state.payments_eu.sqlite": 1,
            "state.payments_eu__tax.sqlite": 1,
        }
        assert _open_descriptors(inst.directory.resolve()) == expected
        assert len(inst.composition()) == len(host.composition().nodes) == len(expected)


def test_an_idle_instance_holds_no_session() -> None:
    host = make_world("company", STAFF)
    host.add_world(make_payments())
    kept: list[seahaven.Db] = []

    @host.tool
    def keep_child_db(ctx: seahaven.Ctx) -> dict[str, str]:
        """Keep the child's Db object (not the handle) for the test to write through."""
        kept.append(ctx.worlds.payments.db)
        return {}

    with host.instance() as inst:
        inst.call("keep_child_db")
        # Between calls nothing is recording: these writes are nobody's change.
        inst.db.execute("INSERT INTO staff (id) VALUES ('between')")
        kept[0].execute("INSERT INTO charges (id, amount) VALUES ('between', 1)")
        inst.call("create_charge", amount=2)

        logged = [(record.i, record.world, record.key) for record in inst.change_log()]
        assert len(logged) == 1
        assert logged[0][:2] == (1, "payments")
        assert logged[0][2] != {"id": "between"}


# --- copy.copy(world) -----------------------------------------------------------------------------


def test_a_copied_world_is_a_distinct_node() -> None:
    payments = make_payments()
    copied = copy.copy(payments)
    host = make_world("company")
    host.add_world(payments, name="original", tool_prefix="o_")
    host.add_world(copied, name="copied", tool_prefix="c_")

    nodes = host.composition().nodes
    assert [(node.path, node.scope) for node in nodes] == [
        ("main", None),
        ("original", None),
        ("copied", None),
    ]
    with host.instance() as inst:
        inst.call("c_create_charge", amount=1)
        assert inst.call("o_count_charges") == {"count": 0}
        assert inst.call("c_count_charges") == {"count": 1}


def test_a_host_that_added_the_original_does_not_see_the_copy() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments)
    copied = copy.copy(payments)

    add_echo_tools(copied, "refund")
    copied.fixtures_dir = Path("elsewhere")

    assert surface(host) == ["create_charge", "count_charges"]
    assert list(payments.tools) == ["create_charge", "count_charges"]
    assert list(copied.tools) == ["create_charge", "count_charges", "refund"]
    assert payments.fixtures_dir != Path("elsewhere")
    assert host.composition().by_path["payments"].world is payments


def test_a_copied_root_keeps_its_tree(tmp_path: Path) -> None:
    host = _company()
    copied = copy.copy(host)
    copied.fixtures_dir = tmp_path

    assert [node.path for node in copied.composition().nodes] == [
        node.path for node in host.composition().nodes
    ]
    with copied.instance() as inst:
        inst.call("pay_create_charge", amount=5)
        inst.freeze("copied_root", "A fixture frozen beside the copy.")
    assert (tmp_path / "copied_root" / "state.payments.sqlite").is_file()
    assert host.fixtures_dir != tmp_path
