"""The faces of ``seahaven.sandbox`` and ``seahaven.fixtures``, packages split by concern.

Each keeps the names it exported as one module, and a limit set on
``seahaven.sandbox`` reaches the code that reads it in ``seahaven.sandbox.limits``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import seahaven
from seahaven import fixtures, sandbox
from seahaven.sandbox import limits, policy, statement

# What seahaven.sandbox exported as one module, before it became a package.
SANDBOX_NAMES = [
    "ALLOWED_FUNCTIONS",
    "MAX_RESULT_BYTES",
    "MAX_SQL_BYTES",
    "MAX_VALUE_BYTES",
    "REFUSALS",
    "REPORTING_PRAGMAS",
    "SETUP_SQL_SECONDS",
    "STATEMENT_SECONDS",
    "Authorizer",
    "Deadline",
    "Fts5Tables",
    "ReaderAuthorizer",
    "Refusal",
    "Refused",
    "SqlResult",
    "fts5_tables",
    "interrupt_thread",
    "interruptible",
    "limit_values",
    "reader_refusal",
    "refusal_kind",
    "run_statement",
    "split_statements",
]


def test_the_sandbox_exports_what_it_did_and_what_its_doors_use() -> None:
    assert set(SANDBOX_NAMES) <= set(sandbox.__all__)
    for name in ("WRITE_ACTIONS", "catalog", "execute", "StatementFailed", "check_limits"):
        assert name in sandbox.__all__
    for name in sandbox.__all__:
        assert getattr(sandbox, name) is not None


@pytest.mark.parametrize(
    "name",
    [
        "MAX_RESULT_BYTES",
        "MAX_SQL_BYTES",
        "MAX_VALUE_BYTES",
        "SETUP_SQL_SECONDS",
        "STATEMENT_SECONDS",
    ],
)
def test_a_limit_read_off_the_package_is_the_one_the_code_reads(name: str) -> None:
    assert getattr(sandbox, name) == getattr(limits, name)


def test_a_limit_set_on_the_package_reaches_the_limits_module_and_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "STATEMENT_SECONDS", 0.25)
    assert limits.STATEMENT_SECONDS == 0.25
    monkeypatch.setattr(limits, "MAX_RESULT_BYTES", 123)
    assert sandbox.MAX_RESULT_BYTES == 123
    monkeypatch.undo()
    assert sandbox.STATEMENT_SECONDS == limits.STATEMENT_SECONDS == 10.0


def test_a_function_set_on_the_package_reaches_the_module_that_calls_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def one(sql: str) -> list[str]:
        return [sql]

    monkeypatch.setattr(sandbox, "split_statements", one)
    assert statement.split_statements is one


def test_write_actions_are_every_row_write_and_schema_change_and_attaching() -> None:
    import apsw

    assert policy.ROW_WRITES | policy.SCHEMA_ACTIONS <= sandbox.WRITE_ACTIONS
    assert {apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH, apsw.SQLITE_REINDEX} <= sandbox.WRITE_ACTIONS
    assert apsw.SQLITE_SELECT not in sandbox.WRITE_ACTIONS
    assert apsw.SQLITE_READ not in sandbox.WRITE_ACTIONS


def test_the_fixtures_face_is_unchanged() -> None:
    assert fixtures.__all__ == ["Fixture", "FixtureNode", "freeze", "load", "load_all", "verify"]
    from seahaven.fixtures import freezing, sidecar, verification

    assert fixtures.Fixture is sidecar.Fixture is seahaven.Fixture
    assert fixtures.FixtureNode is sidecar.FixtureNode
    assert fixtures.load is sidecar.load
    assert fixtures.load_all is sidecar.load_all
    assert fixtures.verify is verification.verify
    assert fixtures.freeze is freezing.freeze
    assert set(fixtures.__all__) <= set(dir(fixtures))
    with pytest.raises(AttributeError, match="no attribute 'frieze'"):
        _ = fixtures.frieze  # type: ignore[attr-defined]


def test_the_fixtures_package_imports_nothing_of_its_own_until_a_name_is_asked_for() -> None:
    # Importing seahaven.fixtures.location runs the package first: at module level it
    # may import only what the type checker reads, or it would pull in layers above.
    import ast

    tree = ast.parse(Path(fixtures.__file__).read_text(encoding="utf-8"))
    run_at_import = [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module not in ("__future__", "typing")
    ] + [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    assert run_at_import == []
