"""The module paths and names kept one release under old names are gone (issue 45)."""

from __future__ import annotations

import importlib

import pytest

import seahaven
from seahaven.calls import activation, concurrency

RETIRED_MODULES = [
    "seahaven.cli_support",
    "seahaven.fixture_store",
    "seahaven.fixtures_dir",
    "seahaven.freezing",
    "seahaven.moved",
]


@pytest.mark.parametrize("module", RETIRED_MODULES)
def test_a_retired_module_path_is_not_importable(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


@pytest.mark.parametrize("name", [path.rpartition(".")[2] for path in RETIRED_MODULES])
def test_a_retired_module_is_no_attribute_of_the_package(name: str) -> None:
    assert not hasattr(seahaven, name)


@pytest.mark.parametrize(
    ("module", "old"),
    [
        (concurrency, "FairGate"),
        (concurrency, "gate"),
        (activation, "bypasses_gate"),
        (activation, "entered"),
    ],
)
def test_a_retired_old_name_is_an_attribute_error(module: object, old: str) -> None:
    with pytest.raises(AttributeError):
        getattr(module, old)


def test_the_documented_paths_stay_real_modules() -> None:
    # seahaven.helpers and seahaven.instances are the reference's paths: facades, not shims.
    from seahaven import helpers, instances, sql_tools

    assert helpers.run_sql is sql_tools.run_sql
    assert helpers.describe_schema is sql_tools.describe_schema
    assert instances.set_concurrency is concurrency.set_concurrency
    assert instances.default_concurrency is concurrency.default_concurrency
    assert instances.concurrency is concurrency.concurrency


def test_the_documented_paths_are_attributes_of_the_package() -> None:
    # ``import seahaven`` then ``seahaven.helpers.run_sql``, as the reference's examples do.
    import subprocess
    import sys

    code = "import seahaven; seahaven.helpers.run_sql; seahaven.instances.set_concurrency"
    subprocess.run([sys.executable, "-c", code], check=True)
