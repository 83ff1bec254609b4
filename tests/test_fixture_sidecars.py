"""The fixture directory and its sidecar: both versions, every field, what reading refuses."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

import seahaven
from seahaven import fixtures
from seahaven.stores.clock import is_canonical

NOW = "2026-06-01T09:00:00.000Z"
V1_FIELDS = {
    "format_version",
    "id",
    "world",
    "world_version",
    "schema_hash",
    "now",
    "parent_id",
    "file_sha256",
    "created_at",
    "description",
}
NODE_FIELDS = {
    "path",
    "world",
    "world_version",
    "schema_hash",
    "scope",
    "file",
    "file_sha256",
    "aliases",
}


def make_world(name: str, table: str, **options: Any) -> seahaven.World:
    """A one-table world; enough to give each node a schema of its own."""
    return seahaven.World(
        name=name,
        version="1.0.0",
        schema=f"CREATE TABLE {table} (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )


def composite(fixtures_dir: Path) -> seahaven.World:
    """A host whose tree has an alias, a nested path and a named scope."""
    payments = make_world("payments", "charges")
    tax = make_world("tax", "rates")
    shop = make_world("shop", "orders")
    ledger = make_world("ledger", "entries")
    company = make_world("company", "staff", fixtures_dir=fixtures_dir)
    company.add_world(payments, name="payments")
    shop.add_world(payments, name="payments")
    shop.add_world(tax, name="tax")
    company.add_world(shop, name="shop")
    company.add_world(ledger, name="ledger", store="acct")
    return company


def read_sidecar(directory: Path) -> dict[str, Any]:
    raw = yaml.safe_load((directory / "fixture.yaml").read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    return raw


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_sidecar(directory: Path, fields: dict[str, Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fixture.yaml").write_text(yaml.safe_dump(fields), encoding="utf-8")


def v1_fields(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "format_version": 1,
        "id": "hand",
        "world": "notes",
        "world_version": "1.0.0",
        "schema_hash": "a" * 64,
        "now": NOW,
        "parent_id": None,
        "file_sha256": "b" * 64,
        "created_at": "2026-09-13T08:11:06.580Z",
        "description": "Written by hand for a reader test.",
    }
    fields.update(changes)
    return fields


def v2_node(**changes: Any) -> dict[str, Any]:
    node: dict[str, Any] = {
        "path": "payments",
        "world": "payments",
        "world_version": "1.0.0",
        "schema_hash": "c" * 64,
        "scope": None,
        "file": "state.payments.sqlite",
        "file_sha256": "d" * 64,
        "aliases": ["shop/payments"],
    }
    node.update(changes)
    return node


# --- what freeze writes ---------------------------------------------------------------------------


def test_a_single_store_world_writes_format_version_1_with_every_field(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        fixture = inst.freeze("plain", "One empty table.")

    directory = tmp_path / "fixtures" / "plain"
    assert sorted(path.name for path in directory.iterdir()) == ["fixture.yaml", "state.sqlite"]
    raw = read_sidecar(directory)
    assert set(raw) == V1_FIELDS
    assert raw["format_version"] == 1
    assert raw["id"] == "plain"
    assert raw["world"] == "notes"
    assert raw["world_version"] == "1.0.0"
    assert raw["schema_hash"] == world.schema_hash
    assert raw["now"] == NOW
    assert raw["parent_id"] is None
    assert raw["file_sha256"] == sha256(directory / "state.sqlite")
    assert is_canonical(raw["created_at"])
    assert raw["description"] == "One empty table."
    assert fixture.format_version == 1
    assert fixture.nodes == ()
    assert fixture.state_path == directory / "state.sqlite"


def test_a_composite_writes_format_version_2_with_one_entry_per_added_node(tmp_path: Path) -> None:
    world = composite(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        fixture = inst.freeze("acme", "Every store empty.")

    directory = tmp_path / "fixtures" / "acme"
    raw = read_sidecar(directory)
    assert set(raw) == V1_FIELDS | {"nodes"}
    assert raw["format_version"] == 2
    # The version-1 fields describe the root.
    assert raw["world"] == "company"
    assert raw["schema_hash"] == world.schema_hash
    assert raw["file_sha256"] == sha256(directory / "state.sqlite")
    by_path = {node["path"]: node for node in raw["nodes"]}
    assert sorted(by_path) == ["ledger", "payments", "shop", "shop/tax"]
    for node in raw["nodes"]:
        assert set(node) == NODE_FIELDS
        assert node["file_sha256"] == sha256(directory / node["file"])
    assert by_path["payments"]["file"] == "state.payments.sqlite"
    assert by_path["payments"]["aliases"] == ["shop/payments"]
    assert by_path["shop/tax"]["file"] == "state.shop__tax.sqlite"
    assert by_path["shop/tax"]["world"] == "tax"
    assert by_path["ledger"]["scope"] == "acct"
    assert by_path["shop"]["scope"] is None
    composition = {node.path: node for node in world.composition().nodes}
    for path, node in by_path.items():
        assert node["schema_hash"] == composition[path].world.schema_hash
        assert node["world_version"] == "1.0.0"
    files = sorted(path.name for path in directory.iterdir())
    assert files == sorted(["fixture.yaml", "state.sqlite", *(n["file"] for n in raw["nodes"])])
    assert {node.path for node in fixture.nodes} == set(by_path)
    assert fixture.files()["shop/tax"] == (
        directory / "state.shop__tax.sqlite",
        by_path["shop/tax"]["file_sha256"],
    )


# --- reading both versions ------------------------------------------------------------------------


def test_a_hand_written_version_1_sidecar_reads_into_a_fixture(tmp_path: Path) -> None:
    write_sidecar(tmp_path / "hand", v1_fields(parent_id="empty"))
    fixture = fixtures.load(tmp_path / "hand")
    assert fixture.id == "hand"
    assert fixture.parent_id == "empty"
    assert fixture.now == NOW
    assert fixture.description == "Written by hand for a reader test."
    assert fixture.world == "notes"
    assert fixture.world_version == "1.0.0"
    assert fixture.schema_hash == "a" * 64
    assert fixture.file_sha256 == "b" * 64
    assert fixture.created_at == "2026-09-13T08:11:06.580Z"
    assert fixture.format_version == 1
    assert fixture.nodes == ()


def test_a_hand_written_version_2_sidecar_reads_its_nodes(tmp_path: Path) -> None:
    write_sidecar(tmp_path / "hand", v1_fields(format_version=2, nodes=[v2_node()]))
    fixture = fixtures.load(tmp_path / "hand")
    assert fixture.format_version == 2
    (node,) = fixture.nodes
    assert node == fixtures.FixtureNode(
        path="payments",
        world="payments",
        world_version="1.0.0",
        schema_hash="c" * 64,
        scope=None,
        file="state.payments.sqlite",
        file_sha256="d" * 64,
        aliases=("shop/payments",),
    )


def test_a_node_file_name_has_no_length_limit(tmp_path: Path) -> None:
    long_name = "state." + "x" * 200 + ".sqlite"
    write_sidecar(tmp_path / "hand", v1_fields(format_version=2, nodes=[v2_node(file=long_name)]))
    assert fixtures.load(tmp_path / "hand").nodes[0].file == long_name


@pytest.mark.parametrize(
    ("file", "clause"),
    [
        ("../state.sqlite", "separator"),
        ("nested/state.payments.sqlite", "separator"),
        ("nested\\state.payments.sqlite", "separator"),
        ("C:state.payments.sqlite", "drive letter"),
        ("..", "dot"),
        (".", "dot"),
        ("state.paiements\u00e9.sqlite", "only ASCII"),
        ("state\x00.sqlite", "NUL"),
        ("", "empty"),
    ],
)
def test_a_node_file_that_is_not_a_plain_name_is_refused_on_read(
    tmp_path: Path, file: str, clause: str
) -> None:
    write_sidecar(tmp_path / "hand", v1_fields(format_version=2, nodes=[v2_node(file=file)]))
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.load(tmp_path / "hand")
    message = str(raised.value)
    assert str(tmp_path / "hand" / "fixture.yaml") in message
    assert "nodes.0.file" in message
    assert clause in message


# --- what reading refuses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        (v1_fields(format_version=3), "format_version 3"),
        (v1_fields(format_version="1"), "format_version '1'"),
        ({k: v for k, v in v1_fields().items() if k != "format_version"}, "format_version None"),
        ({k: v for k, v in v1_fields().items() if k != "file_sha256"}, "file_sha256"),
        (v1_fields(colour="blue"), "colour"),
        (v1_fields(world_version=1.0), "world_version"),
        (v1_fields(now="2026-06-01 09:00:00"), "not canonical"),
        (v1_fields(nodes=[v2_node()]), "format_version 1 sidecar has no nodes"),
        (v1_fields(format_version=2), "at least one added node"),
        (v1_fields(format_version=2, nodes=[]), "at least one added node"),
        (v1_fields(format_version=2, nodes=[v2_node(), v2_node(file="other.sqlite")]), "twice"),
        (v1_fields(format_version=2, nodes=[v2_node(path="main")]), "appears twice"),
        (v1_fields(format_version=2, nodes=[v2_node(file="state.sqlite")]), "named twice"),
        (
            v1_fields(format_version=2, nodes=[v2_node(), v2_node(path="ledger")]),
            "'state.payments.sqlite' is named twice",
        ),
        (v1_fields(format_version=2, nodes=[v2_node(extra=1)]), "nodes.0.extra"),
    ],
)
def test_a_sidecar_that_does_not_validate_is_a_world_bug_naming_the_file(
    tmp_path: Path, fields: dict[str, Any], complaint: str
) -> None:
    write_sidecar(tmp_path / "bad", fields)
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.load(tmp_path / "bad")
    assert str(tmp_path / "bad" / "fixture.yaml") in str(raised.value)
    assert complaint in str(raised.value)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("id: [unclosed\n", "not valid YAML"),
        ("- a list\n- of things\n", "not a mapping"),
        ("just words\n", "not a mapping"),
    ],
)
def test_a_sidecar_that_is_not_a_yaml_mapping_is_refused(
    tmp_path: Path, text: str, complaint: str
) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "fixture.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.load(tmp_path / "bad")
    assert str(tmp_path / "bad" / "fixture.yaml") in str(raised.value)
    assert complaint in str(raised.value)


def test_a_directory_without_a_sidecar_does_not_load(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(seahaven.WorldBug, match="cannot be read"):
        fixtures.load(tmp_path / "empty")


# --- the fixture-id rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture_id",
    ["", "a/b", "..", ".hidden", "trailing ", "caf\u00e9", "con", "LPT1.txt", "x" * 129, "C:x"],
)
def test_freeze_refuses_an_id_that_breaks_the_rule(tmp_path: Path, fixture_id: str) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.freeze(fixture_id, "never written")
    assert "not a fixture id" in str(raised.value)
    assert not (tmp_path / "fixtures").exists()


def test_the_longest_id_the_rule_allows_is_frozen(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    longest = "a" * 128
    with world.instance(now=NOW) as inst:
        inst.freeze(longest, "The longest id there is.")
    assert [fixture.id for fixture in world.fixtures()] == [longest]


def test_a_directory_whose_id_breaks_the_rule_is_listed_and_does_not_open(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        inst.freeze("good", "A fixture that will be renamed badly.")
    bad_id = "caf\u00e9"
    (tmp_path / "fixtures" / "good").rename(tmp_path / "fixtures" / bad_id)
    sidecar = tmp_path / "fixtures" / bad_id / "fixture.yaml"
    sidecar.write_text(
        sidecar.read_text(encoding="utf-8").replace("id: good", f"id: {bad_id}"), encoding="utf-8"
    )

    assert [fixture.id for fixture in world.fixtures()] == [bad_id]
    with pytest.raises(seahaven.WorldBug, match="not a fixture id"):
        world.instance(bad_id)
