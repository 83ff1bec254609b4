"""The seeded stream: seed derivation, ``ctx.ids``, SQL's ``random()`` and ``randomblob()`` on
every connection from streams of their own, and seed validation."""

import random
import uuid
from pathlib import Path
from typing import Any

import pytest

import seahaven

SCHEMA = """
CREATE TABLE tokens (id TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
CREATE TABLE salts (id TEXT PRIMARY KEY, salt BLOB NOT NULL DEFAULT (randomblob(8))) STRICT;
"""


def declare(name: str = "ids", **options: Any) -> seahaven.World:
    """A world whose tools draw from ``ctx.ids`` and from SQL."""
    world = seahaven.World(
        name=name, version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1", **options
    )

    @world.tool
    def mint(ctx: seahaven.Ctx, count: int = 3) -> dict[str, Any]:
        """Draw identifiers and numbers from the seeded stream."""
        return {
            "uuids": [ctx.ids.uuid() for _ in range(count)],
            "numbers": [ctx.ids.random.randint(0, 10**9) for _ in range(count)],
        }

    @world.tool
    def roll(ctx: seahaven.Ctx, count: int = 3) -> list[int]:
        """Draw from SQL's random()."""
        return [ctx.db.one("SELECT random() AS r")["r"] for _ in range(count)]  # type: ignore[index]

    @world.tool
    def salt(ctx: seahaven.Ctx, id: str) -> str:
        """Insert a row whose DEFAULT calls randomblob()."""
        ctx.db.execute("INSERT INTO salts (id) VALUES (?)", id)
        row = ctx.db.one("SELECT hex(salt) AS h FROM salts WHERE id = ?", id)
        assert row is not None
        return str(row["h"])

    return world


def minted(world: seahaven.World, fixture: str | None = None, **options: Any) -> dict[str, Any]:
    """What ``mint`` draws first on a new instance."""
    with world.instance(fixture, **options) as inst:
        return dict(inst.call("mint"))


# --- derivation ----------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_ids() -> None:
    world = declare()
    assert minted(world, seed=7) == minted(world, seed=7)


def test_a_different_seed_gives_different_ids() -> None:
    world = declare()
    assert minted(world, seed=7)["uuids"] != minted(world, seed=8)["uuids"]


def test_no_seed_is_still_reproducible_and_differs_from_every_seed_tried() -> None:
    world = declare()
    unseeded = minted(world)
    assert unseeded == minted(world)
    assert all(unseeded["uuids"] != minted(world, seed=seed)["uuids"] for seed in (0, 1, 2))


def test_a_blank_instance_derives_from_the_world_name() -> None:
    assert minted(declare("alpha"), seed=1) == minted(declare("alpha"), seed=1)
    assert minted(declare("alpha"), seed=1) != minted(declare("beta"), seed=1)


def test_a_fixture_instance_derives_from_the_fixture_id(tmp_path: Path) -> None:
    world = declare(fixtures_dir=tmp_path)
    with world.instance(now="2026-06-01T09:00:00Z") as inst:
        inst.freeze("first", "Empty.")
        inst.freeze("second", "Empty too, under another id.")
    first = minted(world, "first", seed=1)
    assert first == minted(world, "first", seed=1)
    assert first != minted(world, "second", seed=1)
    assert first != minted(world, seed=1)
    with world.instance("first", seed=1) as a, world.instance("first", seed=1) as b:
        assert a.seed == b.seed
        with world.instance("second", seed=1) as c:
            assert c.seed != a.seed


def test_the_derived_seed_is_exposed_on_the_instance_and_ctx() -> None:
    world = declare()
    seen: list[bytes] = []

    @world.tool
    def look(ctx: seahaven.Ctx) -> None:
        seen.append(ctx.instance.seed)

    with world.instance(seed=3) as inst:
        inst.call("look")
        assert seen == [inst.seed]
        assert isinstance(inst.seed, bytes) and len(inst.seed) >= 16


# --- ctx.ids -------------------------------------------------------------------------------------


def test_uuid_is_uuid4_shaped() -> None:
    for text in minted(declare(), seed=5)["uuids"]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_ids_random_is_a_seeded_random() -> None:
    world = declare()
    seen: list[Any] = []

    @world.tool
    def shuffle(ctx: seahaven.Ctx) -> list[int]:
        seen.append(ctx.ids.random)
        items = list(range(10))
        ctx.ids.random.shuffle(items)
        return items

    def shuffled() -> list[int]:
        with world.instance(seed=9) as inst:
            return list(inst.call("shuffle"))

    assert shuffled() == shuffled()
    assert isinstance(seen[0], random.Random)


def test_ids_continue_across_calls_rather_than_restarting() -> None:
    with declare().instance(seed=1) as inst:
        first = inst.call("mint")
        second = inst.call("mint")
    assert set(first["uuids"]).isdisjoint(second["uuids"])


def test_an_instance_seeds_no_stream_until_something_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seeding a stream costs as much as a small query; an instance whose calls draw nothing
    # (most of a benchmark's) pays for none, and the first draw seeds only what it uses.
    world = declare()

    @world.tool
    def nothing(ctx: seahaven.Ctx) -> int:
        return 1

    seeded: list[object] = []
    real_seed = random.Random.seed

    def counting_seed(self: random.Random, *args: Any, **kwargs: Any) -> None:
        seeded.append(self)
        real_seed(self, *args, **kwargs)

    with world.instance(seed=3) as inst:
        monkeypatch.setattr(random.Random, "seed", counting_seed)
        inst.call("nothing")
        assert seeded == []
        inst.call("roll", count=1)
        assert len(seeded) == 1
        inst.call("mint", count=1)
        assert len(seeded) == 2
        inst.call("mint", count=1)
        inst.call("roll", count=1)
        assert len(seeded) == 2


def test_a_stream_first_drawn_late_is_the_stream_drawn_early() -> None:
    world = declare()

    @world.tool
    def nothing(ctx: seahaven.Ctx) -> int:
        return 1

    with world.instance(seed=5) as early:
        drawn_early = (early.call("mint"), early.call("roll"))
    with world.instance(seed=5) as late:
        for _ in range(3):
            late.call("nothing")
        drawn_late = (late.call("mint"), late.call("roll"))
    assert drawn_late == drawn_early


# --- SQL random() and randomblob() ---------------------------------------------------------------


def test_sql_random_replays_per_seed() -> None:
    world = declare()

    def rolled(seed: int) -> list[int]:
        with world.instance(seed=seed) as inst:
            return list(inst.call("roll"))

    assert rolled(1) == rolled(1)
    assert rolled(1) != rolled(2)
    assert len(set(rolled(1))) == 3


def test_randomblob_in_a_default_replays() -> None:
    world = declare()

    def salts(seed: int) -> list[str]:
        with world.instance(seed=seed) as inst:
            return [inst.call("salt", id="a"), inst.call("salt", id="b")]

    assert salts(4) == salts(4)
    assert salts(4) != salts(5)
    assert all(len(value) == 16 for value in salts(4))


def test_randomblob_in_the_schema_replays() -> None:
    world = seahaven.World(
        name="ids",
        version="1.0.0",
        schema="""
        CREATE TABLE keys (id TEXT PRIMARY KEY, secret TEXT NOT NULL) STRICT;
        INSERT INTO keys VALUES ('k1', hex(randomblob(6)));
        """,
        state_format="seahaven.state/1",
    )

    def secret(seed: int) -> Any:
        with world.instance(seed=seed) as inst:
            return inst.inspect().one("SELECT secret FROM keys")

    assert secret(1) == secret(1)
    assert secret(1) != secret(2)


def test_sql_random_does_not_shift_ctx_ids() -> None:
    world = declare()
    expected = minted(world, seed=6)
    with world.instance(seed=6) as inst:
        inst.call("roll", count=5)
        for _ in range(5):
            inst.inspect().one("SELECT random(), randomblob(16)")
        # ctx.ids drew nothing yet, so it hands out what a fresh instance would.
        assert inst.call("mint") == expected


def test_inspect_draws_from_a_stream_of_its_own() -> None:
    world = declare()

    def tool_rolls(read_first: bool) -> list[int]:
        with world.instance(seed=2) as inst:
            if read_first:
                for _ in range(3):
                    inst.inspect().one("SELECT random()")
            return list(inst.call("roll"))

    # Reading from inspect() does not move the tools' SQL stream ...
    assert tool_rolls(read_first=True) == tool_rolls(read_first=False)
    # ... and the two streams differ.
    with world.instance(seed=2) as inst:
        from_tools = list(inst.call("roll"))
        inspect = inst.inspect()
        from_inspect = [inspect.one("SELECT random() AS r")["r"] for _ in range(3)]  # type: ignore[index]
    assert from_tools != from_inspect
    assert set(from_tools).isdisjoint(from_inspect)


def test_sql_random_and_ctx_ids_are_separate_streams() -> None:
    world = declare()

    @world.tool
    def first_draw_in_python(ctx: seahaven.Ctx) -> int:
        # The same 64 bits SQL's random() would hand out if both shared one stream.
        return ctx.ids.random.getrandbits(64) - 2**63

    with world.instance(seed=3) as inst:
        from_sql = inst.call("roll", count=1)[0]
    with world.instance(seed=3) as inst:
        from_python = inst.call("first_draw_in_python")
    assert from_sql != from_python


# --- seed validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "fragment"),
    [
        (-1, "negative"),
        (2**64, "8 bytes"),
        (2**70, "8 bytes"),
        (True, "bool"),
        (False, "bool"),
        (1.0, "float"),
        ("7", "str"),
    ],
)
def test_a_bad_seed_is_refused(seed: Any, fragment: str) -> None:
    with pytest.raises(seahaven.WorldBug, match=fragment):
        declare().instance(seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1])
def test_seeds_at_the_edges_are_accepted(seed: int) -> None:
    with declare().instance(seed=seed) as inst:
        assert inst.call("mint", count=1)["uuids"]
