"""The ``Snapshot`` users hold: what it is at run time and what a user's type checker sees.

It is defined beside ``Instance`` over ``SnapshotData``, which the snapshot machinery takes and
restores without naming ``Instance``; these tests hold that the split changes nothing a user sees.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from composition_worlds import NOW, make_payments

import seahaven
import seahaven.instance.instance
from seahaven.instance.snapshots import SnapshotData

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def test_a_snapshot_is_the_public_snapshot_frozen_and_restores_as_the_instances_class() -> None:
    assert seahaven.Snapshot is seahaven.instance.instance.Snapshot
    world = make_payments(name="pay_snapshot_type")
    with world.instance(seed=1, now=NOW) as original:
        original.call("create_charge", amount=5)
        snapshot = original.snapshot()
        assert type(snapshot) is seahaven.Snapshot
        assert isinstance(snapshot, SnapshotData)
        assert repr(snapshot).startswith("Snapshot(token='snap-")
        # Immutable, with no attribute dictionary to grow one in.
        with pytest.raises(dataclasses.FrozenInstanceError):
            snapshot.token = "snap-other"  # type: ignore[misc]
        assert not hasattr(snapshot, "__dict__")
        assert snapshot == snapshot and snapshot != original.snapshot()
        # A copy with a field changed is still the public class.
        assert type(dataclasses.replace(snapshot, nbytes=0)) is seahaven.Snapshot
        with snapshot.restore() as branch:
            assert type(branch) is type(original)
            assert branch.call("count_charges") == {"count": 1}
        branches = snapshot.restore_many(2)
        try:
            assert [type(b) for b in branches] == [type(original)] * 2
        finally:
            for branch in branches:
                branch.destroy()


USER_CODE = """\
from typing import assert_type

import seahaven


def use(inst: seahaven.Instance, world: seahaven.World) -> None:
    snapshot = inst.snapshot()
    assert_type(snapshot, seahaven.Snapshot)
    assert_type(snapshot.restore(), seahaven.Instance)
    assert_type(snapshot.restore(world, storage="memory"), seahaven.Instance)
    assert_type(snapshot.restore_many(2), list[seahaven.Instance])
    assert_type(inst.fork(2), list[seahaven.Instance])
    kept: seahaven.Snapshot = snapshot
    reveal_type(kept.restore)
"""


def test_a_users_type_checker_sees_snapshot_restore_return_an_instance(tmp_path: Path) -> None:
    """Runs mypy --strict on a user's module: the one test here that starts a type checker."""
    pytest.importorskip("mypy")
    (tmp_path / "user_code.py").write_text(USER_CODE, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            "user_code.py",
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = result.stdout.splitlines()
    assert not [line for line in lines if ": error:" in line], result.stdout
    revealed = [line for line in lines if "Revealed type" in line]
    assert len(revealed) == 1, result.stdout
    assert "seahaven.instance.instance.Instance" in revealed[0], result.stdout
    assert result.returncode == 0, result.stdout + result.stderr
