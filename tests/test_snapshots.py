"""Snapshots in process: take, restore, fork, the limits of a ``SnapshotStore``.

A branch is judged the way the issue puts it: given the same calls as the
original after the snapshot, it ends with the same state document (all but
``episode_id``, which names the instance), the same ids and the same clock.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import stat
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest
from composition_worlds import CHARGES, NOW, make_payments, make_world

import seahaven
from seahaven.instance.snapshots import StoreImage, restore_into

ROOT = Path(__file__).resolve().parent.parent
ACME_SCRIPT: list[dict[str, Any]] = json.loads(
    (ROOT / "examples" / "acme_episode.json").read_text(encoding="utf-8")
)


def run(instance: seahaven.Instance, calls: list[dict[str, Any]]) -> list[Any]:
    """Each call's result, or its ``ToolError`` code."""
    results: list[Any] = []
    for call in calls:
        try:
            results.append(instance.call(call["tool"], **call["arguments"]))
        except seahaven.ToolError as error:
            results.append(("tool_error", error.code))
    return results


def document(instance: seahaven.Instance) -> dict[str, Any]:
    """The whole state document with the call log, all but the instance's own id."""
    found = instance.state(format="seahaven.state+calls/1")
    assert found["episode_id"] == instance.id
    del found["episode_id"]
    return found


def streams_world(work_dir: Path | None = None) -> seahaven.World:
    """A world whose one tool draws from every stream a branch must go on with."""
    options: dict[str, Any] = {} if work_dir is None else {"work_dir": work_dir}
    world = make_world(
        "streams",
        "CREATE TABLE draws (id TEXT PRIMARY KEY, n INTEGER NOT NULL, sql_random INTEGER NOT NULL,"
        " at TEXT NOT NULL, pick INTEGER NOT NULL) STRICT;",
        **options,
    )

    @world.tool
    def draw(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Draw an id, a random pick, a SQL random() and the time; count draws in ctx.state."""
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        draw_id = ctx.ids.uuid()
        pick = ctx.ids.random.randrange(1_000_000)
        ctx.db.execute(
            "INSERT INTO draws (id, n, sql_random, at, pick) "
            "VALUES (?, ?, random(), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?)",
            draw_id,
            ctx.state["n"],
            pick,
        )
        row = ctx.db.one("SELECT * FROM draws WHERE id = ?", draw_id)
        assert row is not None
        return dict(row)

    return world


DRAW = [{"tool": "draw", "arguments": {}}]


@pytest.fixture(autouse=True, params=["memory", "disk"])
def storage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with instances in memory and on disk, by default."""
    monkeypatch.setenv("SEAHAVEN_STORAGE", request.param)
    return str(request.param)


def test_a_branch_goes_on_with_the_same_ids_clock_sql_random_and_node_state() -> None:
    world = streams_world()
    with world.instance(seed=11, now=NOW, clock_mode="tick") as original:
        run(original, DRAW * 3)
        snapshot = original.snapshot()
        assert snapshot.call_count == 3
        with snapshot.restore() as branch:
            assert branch.id != original.id
            assert branch.clock.iso() == original.clock.iso()
            assert branch.call_count == 3
            after_original = run(original, DRAW * 4)
            after_branch = run(branch, DRAW * 4)
            assert after_branch == after_original
            # ctx.state went on from 3, the clock from the fourth tick.
            assert [draw["n"] for draw in after_branch] == [4, 5, 6, 7]
            assert after_branch[0]["at"] == "2026-06-01T09:00:04.000Z"
            assert document(branch) == document(original)


def test_a_branch_of_a_payments_fixture_ends_with_the_originals_document() -> None:
    from payments_world import world

    calls = [
        {"tool": "create_customer", "arguments": {"email": "a@example.test", "name": "A"}},
        {"tool": "create_customer", "arguments": {"email": "b@example.test", "name": "B"}},
        {"tool": "list_customers", "arguments": {"limit": 3}},
    ]
    with world.instance("small_shop", seed=5, clock_mode="tick") as original:
        run(original, calls[:1])
        snapshot = original.snapshot()
        assert snapshot.fixture == "small_shop"
        with snapshot.restore() as branch:
            assert run(branch, calls[1:]) == run(original, calls[1:])
            assert document(branch) == document(original)
            assert branch.fixture_files == original.fixture_files
            assert [record.to_dict() for record in branch.change_log()] == [
                record.to_dict() for record in original.change_log()
            ]


def test_a_company_fork_of_acme_mid_episode_gives_each_branch_the_originals_end() -> None:
    from company_world import world

    with world.instance("acme", seed=3, clock_mode="tick") as original:
        assert len(original.composition()) > 1  # the added stores are snapshotted too
        run(original, ACME_SCRIPT[:3])
        branches = original.fork(3)
        try:
            expected = run(original, ACME_SCRIPT[3:])
            for branch in branches:
                assert run(branch, ACME_SCRIPT[3:]) == expected
                assert document(branch) == document(original)
                assert branch.state_json().replace(branch.id, "?") == original.state_json().replace(
                    original.id, "?"
                )
        finally:
            for branch in branches:
                branch.destroy()


def test_branches_are_independent_of_each_other_and_of_the_original() -> None:
    world = make_payments(name="pay_branches")
    with world.instance(seed=1, now=NOW) as original:
        original.call("create_charge", amount=5)
        first, second = original.snapshot().restore_many(2)
        with first, second:
            first.call("create_charge", amount=7)
            first.call("create_charge", amount=9)
            assert first.call("count_charges") == {"count": 3}
            assert second.call("count_charges") == {"count": 1}
            assert original.call("count_charges") == {"count": 1}
            if first.storage == "disk":
                assert first.directory != second.directory
            assert len(second.change_log()) == 1
            # Destroying one branch leaves the other whole.
            first.destroy()
            assert second.call("count_charges") == {"count": 1}


def test_a_snapshot_taken_after_a_reader_opened_holds_a_write_ahead_log_image() -> None:
    world = make_payments(name="pay_wal")
    with world.instance(seed=2, now=NOW) as original:
        original.call("create_charge", amount=5)
        original.inspect().one("SELECT count(*) FROM charges")  # the store is in WAL mode now
        original.call("create_charge", amount=6)
        snapshot = original.snapshot()
        assert snapshot.stores[0].image[18:20] == b"\x01\x01"
        with snapshot.restore() as branch:
            assert branch.call("count_charges") == {"count": 2}
            assert branch.inspect().one("SELECT sum(amount) AS s FROM charges") == {"s": 11}


def test_a_restored_instance_keeps_the_originals_options(tmp_path: Path) -> None:
    world = streams_world(tmp_path)
    with world.instance(
        seed=9, now=NOW, clock_mode="fixed", state_format="seahaven.state+last_step/1"
    ) as original:
        run(original, DRAW)
        with original.snapshot().restore() as branch:
            assert branch.state_format == "seahaven.state+last_step/1"
            assert branch.caller_seed == 9
            assert branch.seed == original.seed
            assert branch.clock.mode == "fixed"
            assert branch.composition() == original.composition()
            assert branch.storage == original.storage
            if branch.storage == "memory":
                return
            assert branch.directory.parent == tmp_path
            assert stat.S_IMODE(branch.directory.stat().st_mode) == 0o700
            assert stat.S_IMODE(branch.state_path.stat().st_mode) == 0o600


def test_a_snapshot_is_refused_inside_a_call_and_inside_bulk() -> None:
    world = make_world("pay_inside", "CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;")
    holder: list[seahaven.Instance] = []

    @world.tool
    def snap(ctx: seahaven.Ctx) -> dict[str, str]:
        """Try to snapshot the instance this call runs on."""
        return {"token": holder[0].snapshot().token}

    with world.instance(now=NOW) as instance:
        holder.append(instance)
        with pytest.raises(seahaven.WorldBug, match="cannot be taken inside a call"):
            instance.call("snap")
        with instance.bulk(), pytest.raises(seahaven.WorldBug, match="inside a call"):
            instance.snapshot()
        # Neither attempt harmed the instance.
        assert instance.snapshot().call_count == 1


def test_a_destroyed_instance_refuses_a_snapshot() -> None:
    world = make_payments(name="pay_destroyed")
    instance = world.instance(now=NOW)
    instance.destroy()
    with pytest.raises(seahaven.WorldBug, match="was destroyed"):
        instance.snapshot()


def test_a_snapshot_restores_only_on_the_same_world_versions_and_schemas() -> None:
    world = make_payments(name="pay_versions")
    with world.instance(now=NOW) as original:
        original.call("create_charge", amount=5)
        snapshot = original.snapshot()
    newer = seahaven.World(
        name="pay_versions", version="2.0.0", schema=CHARGES, state_format="seahaven.state/1"
    )
    with pytest.raises(seahaven.WorldBug, match=r"was 1\.0\.0, and is now 2\.0\.0"):
        snapshot.restore(newer)
    changed = make_world(
        "pay_versions", "CREATE TABLE charges (id TEXT PRIMARY KEY, cents INTEGER) STRICT;"
    )
    with pytest.raises(seahaven.WorldBug, match="schema of world 'pay_versions' at 'main' changed"):
        snapshot.restore(changed)
    grown = make_payments(name="pay_versions")
    grown.add_world(make_world("ledger", "CREATE TABLE l (id TEXT PRIMARY KEY) STRICT;"))
    with pytest.raises(seahaven.WorldBug, match="held 1 stores, and the world now has 2"):
        snapshot.restore(grown)
    # The same world again, as a module loaded afresh would build it, restores.
    with snapshot.restore(make_payments(name="pay_versions")) as branch:
        assert branch.call("count_charges") == {"count": 1}


def test_a_restore_that_fails_half_way_leaves_no_directory_behind(tmp_path: Path) -> None:
    world = streams_world(tmp_path)
    world.add_world(make_payments(name="ledger", work_dir=tmp_path))
    with world.instance(now=NOW) as original:
        run(original, DRAW)
        snapshot = original.snapshot()
        before = sorted(tmp_path.iterdir())
        root, added = snapshot.stores
        # The second store's image is damaged: the first is written and opened before it fails.
        damaged = dataclasses.replace(
            snapshot, stores=(root, dataclasses.replace(added, image=b"not a database" * 512))
        )
        with pytest.raises(seahaven.WorldBug, match="the snapshot is damaged"):
            damaged.restore()
        assert sorted(tmp_path.iterdir()) == before
        with pytest.raises(seahaven.WorldBug, match="damaged"):
            damaged.restore_many(2)
        assert sorted(tmp_path.iterdir()) == before


def test_restore_many_refuses_a_count_below_one() -> None:
    world = make_payments(name="pay_count")
    with world.instance(now=NOW) as original:
        snapshot = original.snapshot()
    for bad in (0, -1, True, 1.5):
        with pytest.raises(seahaven.WorldBug, match="1 or more"):
            snapshot.restore_many(bad)  # type: ignore[arg-type]


# --- the store's limits ------------------------------------------------------------------------


def fake_snapshot(token: str, nbytes: int) -> seahaven.Snapshot:
    """A snapshot of a stated size, made from a real one so that every field is genuine."""
    return dataclasses.replace(_BASE[0], token=token, nbytes=nbytes)


_BASE: list[seahaven.Snapshot] = []


@pytest.fixture(autouse=True, scope="module")
def _base_snapshot() -> Any:
    world = make_payments(name="pay_store")
    with world.instance(now=NOW) as instance:
        instance.call("create_charge", amount=1)
        _BASE.append(instance.snapshot())
    yield
    _BASE.clear()


def test_the_store_evicts_the_oldest_past_its_count() -> None:
    store = seahaven.SnapshotStore(max_count=2)
    tokens = [store.put(fake_snapshot(f"snap-{n}", 10)) for n in range(3)]
    assert store.tokens() == tokens[1:]
    with pytest.raises(seahaven.UnknownSnapshot, match="evicted to make room"):
        store.get(tokens[0])
    assert store.get(tokens[2]).token == "snap-2"


def test_the_store_refuses_past_its_count_when_told_to() -> None:
    store = seahaven.SnapshotStore(max_count=1, when_full="refuse")
    store.put(fake_snapshot("snap-a", 10))
    with pytest.raises(seahaven.SnapshotRefused, match="raise max_count") as refused:
        store.put(fake_snapshot("snap-b", 10))
    assert (refused.value.limit, refused.value.setting) == ("count", "max_count")
    assert store.tokens() == ["snap-a"]
    assert store.discard("snap-a")
    store.put(fake_snapshot("snap-b", 10))


def test_the_store_bounds_its_bytes() -> None:
    store = seahaven.SnapshotStore(max_bytes=100)
    with pytest.raises(seahaven.SnapshotRefused, match="larger than the limit") as refused:
        store.put(fake_snapshot("snap-big", 101))
    assert refused.value.setting == "max_bytes"
    store.put(fake_snapshot("snap-1", 60))
    store.put(fake_snapshot("snap-2", 30))
    store.put(fake_snapshot("snap-3", 30))  # 120 > 100: the oldest goes
    assert store.tokens() == ["snap-2", "snap-3"]
    assert store.nbytes == 60
    full = seahaven.SnapshotStore(max_bytes=100, when_full="refuse")
    full.put(fake_snapshot("snap-1", 60))
    with pytest.raises(seahaven.SnapshotRefused, match="would pass the limit of max_bytes=100"):
        full.put(fake_snapshot("snap-2", 60))


def test_the_store_forgets_a_snapshot_past_its_age() -> None:
    now = [1000.0]
    store = seahaven.SnapshotStore(max_age=30, clock=lambda: now[0])
    store.put(fake_snapshot("snap-old", 10))
    now[0] += 20
    store.put(fake_snapshot("snap-new", 10))
    now[0] += 15
    assert "snap-old" not in store
    with pytest.raises(seahaven.UnknownSnapshot, match="expired, being older than max_age=30"):
        store.get("snap-old")
    assert store.get("snap-new").token == "snap-new"
    with pytest.raises(seahaven.UnknownSnapshot, match="no snapshot was kept under it"):
        store.get("snap-never")


def test_the_store_checks_its_limits() -> None:
    for bad in ({"max_count": 0}, {"max_bytes": -1}, {"max_age": 0}, {"when_full": "drop"}):
        with pytest.raises(seahaven.WorldBug, match="SnapshotStore"):
            seahaven.SnapshotStore(**bad)


def test_an_evicted_snapshot_releases_its_memory() -> None:
    world = make_payments(name="pay_memory")
    store = seahaven.SnapshotStore(max_count=1)
    with world.instance(now=NOW) as instance:
        instance.call("create_charge", amount=1)
        snapshot = instance.snapshot()
        image: StoreImage = snapshot.stores[0]
        gone = weakref.ref(snapshot)
        gone_image = weakref.ref(image)
        store.put(snapshot)
        branch = snapshot.restore()
        del snapshot, image
        gc.collect()
        assert gone() is not None  # the store holds it
        store.put(instance.snapshot())
    gc.collect()
    # Evicted, it is freed, though an instance restored from it lives on.
    assert gone() is None
    assert gone_image() is None
    with branch:
        assert branch.call("count_charges") == {"count": 1}
    assert len({_BASE[0], _BASE[0]}) == 1  # hashable, by identity


def test_a_restored_snapshot_from_the_store_is_the_one_put() -> None:
    world = make_payments(name="pay_roundtrip")
    store = seahaven.SnapshotStore()
    with world.instance(seed=4, now=NOW, clock_mode="tick") as original:
        original.call("create_charge", amount=3)
        token = store.put(original.snapshot())
        assert token.startswith("snap-") and len(token) == 29
        with store.get(token).restore() as branch:
            assert branch.call("create_charge", amount=8) == original.call(
                "create_charge", amount=8
            )
            assert document(branch) == document(original)


def test_a_running_clock_runs_on_from_the_snapshots_reading() -> None:
    world = make_payments(name="pay_running")
    with world.instance(now=NOW, clock_mode="running") as original:
        snapshot = original.snapshot()
        taken = snapshot.clock[1]
        with snapshot.restore() as branch:
            assert branch.clock.mode == "running"
            reading = branch.clock.reading_ms()
            assert taken <= reading < taken + 5_000


def test_a_snapshot_waits_for_a_call_running_on_another_thread() -> None:
    world = make_world("pay_threads", "CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;")
    entered, release = threading.Event(), threading.Event()

    @world.tool
    def slow_write(ctx: seahaven.Ctx) -> dict[str, str]:
        """Write a row, then wait to be let go."""
        ctx.db.execute("INSERT INTO t (id) VALUES ('row')")
        entered.set()
        release.wait(10)
        return {"id": "row"}

    with world.instance(now=NOW) as instance:
        caller = threading.Thread(target=instance.call, args=("slow_write",))
        caller.start()
        assert entered.wait(10)
        taken: list[seahaven.Snapshot] = []
        taker = threading.Thread(target=lambda: taken.append(instance.snapshot()))
        taker.start()
        taker.join(0.3)
        assert taken == []  # the call holds the instance
        release.set()
        caller.join(10)
        taker.join(10)
        [snapshot] = taken
        assert snapshot.call_count == 1
        with snapshot.restore() as branch:
            assert branch.db.one("SELECT id FROM t") == {"id": "row"}
            assert len(branch.change_log()) == 1


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_a_restore_can_keep_its_stores_elsewhere_than_the_original_did(where: str) -> None:
    world = make_payments(name="pay_elsewhere")
    with world.instance(seed=4, now=NOW, clock_mode="tick") as original:
        original.call("create_charge", amount=5)
        snapshot = original.snapshot()
        with snapshot.restore(storage=where) as branch:
            assert branch.storage == where
            for inst in (original, branch):
                inst.call("create_charge", amount=8)
            assert document(branch) == document(original)
        with pytest.raises(seahaven.WorldBug, match="storage must be 'memory' or 'disk'"):
            snapshot.restore(storage="tape")


# --- restoring into an instance in place ---------------------------------------------------------


def test_an_instance_restored_into_goes_on_as_a_new_restore_would() -> None:
    world = streams_world()
    with world.instance(seed=11, now=NOW, clock_mode="tick") as original:
        run(original, DRAW * 3)
        snapshot = original.snapshot()
        # Another seed and another history: all of it is replaced.
        with world.instance(seed=99, now=NOW, clock_mode="tick", storage="memory") as reused:
            run(reused, DRAW * 5)
            before_id = reused.id
            restore_into(snapshot, reused)
            assert reused.id not in (before_id, original.id)
            assert reused.seed == original.seed
            assert reused.call_count == 3
            assert reused.clock.iso() == original.clock.iso()
            with snapshot.restore(storage="memory") as branch:
                after = run(branch, DRAW * 4)
                assert run(reused, DRAW * 4) == after
                assert [draw["n"] for draw in after] == [4, 5, 6, 7]
                assert document(reused) == document(branch)


def test_restoring_into_again_and_again_gives_each_snapshots_own_episode() -> None:
    from payments_world import world

    calls = [
        {"tool": "create_customer", "arguments": {"email": "a@example.test", "name": "A"}},
        {"tool": "list_customers", "arguments": {"limit": 3}},
    ]
    snapshots = []
    for seed in (1, 2, 3):
        with world.instance("small_shop", seed=seed, clock_mode="tick") as original:
            snapshots.append(original.snapshot())
    with snapshots[0].restore(storage="memory") as reused:
        for snapshot in [*snapshots, snapshots[0]]:
            restore_into(snapshot, reused)
            with snapshot.restore(storage="memory") as fresh:
                assert run(reused, calls) == run(fresh, calls)
                assert document(reused) == document(fresh)
                assert reused.change_log() == fresh.change_log()


def test_restoring_into_renews_an_open_reader() -> None:
    world = make_payments(name="pay_into_reader")
    with world.instance(now=NOW, storage="memory") as instance:
        snapshot = instance.snapshot()
        instance.call("create_charge", amount=5)
        assert instance.inspect().one("SELECT count(*) AS n FROM charges") == {"n": 1}
        restore_into(snapshot, instance)
        assert instance.inspect().one("SELECT count(*) AS n FROM charges") == {"n": 0}
        assert instance.change_log() == []


def test_restoring_into_refuses_what_a_restore_in_place_cannot_be() -> None:
    world = make_payments(name="pay_into_refused")
    with world.instance(now=NOW, clock_mode="tick", storage="memory") as original:
        original.call("create_charge", amount=5)
        snapshot = original.snapshot()
        with world.instance(now=NOW, clock_mode="tick", storage="disk") as on_disk:
            with pytest.raises(seahaven.WorldBug, match="only into an instance in memory"):
                restore_into(snapshot, on_disk)
            assert on_disk.call("count_charges") == {"count": 0}  # left as it was
        with (
            world.instance(now=NOW, clock_mode="fixed", storage="memory") as fixed,
            pytest.raises(seahaven.WorldBug, match="with a tick clock"),
        ):
            restore_into(snapshot, fixed)
        other = make_payments(name="pay_into_other")
        with (
            other.instance(now=NOW, clock_mode="tick", storage="memory") as elsewhere,
            pytest.raises(seahaven.WorldBug, match="cannot be restored on world"),
        ):
            restore_into(snapshot, elsewhere)
        with (
            world.instance(now=NOW, clock_mode="tick", storage="memory", control_tools=True) as ct,
            pytest.raises(seahaven.WorldBug, match="made with it; restore it as a new instance"),
        ):
            restore_into(snapshot, ct)
        [store] = snapshot.stores
        pageless = dataclasses.replace(snapshot, stores=(dataclasses.replace(store, image=b""),))
        with (
            world.instance(now=NOW, clock_mode="tick", storage="memory") as target,
            pytest.raises(seahaven.WorldBug, match="no pages yet"),
        ):
            restore_into(pageless, target)
        gone = world.instance(now=NOW, clock_mode="tick", storage="memory")
        gone.destroy()
        with pytest.raises(seahaven.WorldBug, match="was destroyed"):
            restore_into(snapshot, gone)


def test_restoring_into_is_refused_inside_a_call() -> None:
    world = make_world("pay_into_call", "CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;")
    found: list[Exception] = []
    held: list[seahaven.Snapshot] = []

    @world.tool
    def restore_myself(ctx: seahaven.Ctx) -> dict[str, bool]:
        """Try to restore the instance this call runs on."""
        try:
            restore_into(held[0], instances[0])
        except seahaven.WorldBug as error:
            found.append(error)
        return {"tried": True}

    with world.instance(now=NOW, storage="memory") as instance:
        instances = [instance]
        held.append(instance.snapshot())
        instance.call("restore_myself")
        assert len(found) == 1 and "inside a call" in str(found[0])


def test_a_restore_into_that_fails_half_way_destroys_the_instance() -> None:
    world = streams_world()
    world.add_world(make_payments(name="ledger"))
    with world.instance(now=NOW) as original:
        run(original, DRAW)
        snapshot = original.snapshot()
    root, added = snapshot.stores
    damaged = dataclasses.replace(
        snapshot, stores=(root, dataclasses.replace(added, image=b"not a database" * 512))
    )
    target = world.instance(now=NOW, storage="memory")
    with pytest.raises(seahaven.WorldBug, match="the snapshot is damaged"):
        restore_into(damaged, target)
    with pytest.raises(seahaven.WorldBug, match="was destroyed"):
        target.call("draw")
