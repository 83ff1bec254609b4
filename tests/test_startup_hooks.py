"""Startup hooks: keyword-only parameters filled from the caller's ``startup=``, refusals before
anything is touched, failures that leave nothing behind, and writes the change log never sees."""

from pathlib import Path
from typing import Any

import pytest

import seahaven

SCHEMA = """
CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL) STRICT;
CREATE TABLE notes (id TEXT PRIMARY KEY, author TEXT NOT NULL REFERENCES users (id)) STRICT;
"""


def declare(work_dir: Path | None = None) -> seahaven.World:
    """A world with users and notes, and a tool that says who is writing."""
    world = seahaven.World(
        name="startup",
        version="1.0.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )

    @world.tool
    def whoami(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Who this session is."""
        return dict(ctx.state)

    return world


def leftovers(directory: Path) -> list[Path]:
    """Everything under ``directory``, which should be nothing."""
    return sorted(directory.rglob("*")) if directory.exists() else []


def test_each_hook_receives_the_keywords_it_names_from_startup() -> None:
    world = declare()
    received: list[tuple[str, dict[str, Any]]] = []

    @world.instance_startup
    def principal(ctx: seahaven.Ctx, *, user_id: str, locale: str = "en") -> None:
        received.append(("principal", {"user_id": user_id, "locale": locale}))
        ctx.state["user_id"] = user_id

    @world.instance_startup
    def team(ctx: seahaven.Ctx, *, team: str = "core") -> None:
        received.append(("team", {"team": team}))
        ctx.state["team"] = team

    with world.instance(startup={"user_id": "ada", "team": "infra"}) as inst:
        assert inst.call("whoami") == {"user_id": "ada", "team": "infra"}
    assert received == [
        ("principal", {"user_id": "ada", "locale": "en"}),
        ("team", {"team": "infra"}),
    ]


def test_hooks_run_once_in_registration_order_before_the_first_call() -> None:
    world = declare()
    order: list[str] = []
    world.instance_startup(lambda ctx: order.append("one"))
    world.instance_startup(lambda ctx: order.append("two"))
    world.instance_startup(lambda ctx: order.append("three"))
    with world.instance() as inst:
        assert order == ["one", "two", "three"]
        inst.call("whoami")
        inst.call("whoami")
    assert order == ["one", "two", "three"]


def test_a_hook_sees_no_call() -> None:
    world = declare()
    seen: list[Any] = []
    world.instance_startup(lambda ctx: seen.append(ctx.call))
    with world.instance():
        pass
    assert seen == [None]


def test_a_startup_keyword_may_share_a_name_with_an_instance_parameter() -> None:
    world = declare()

    @world.instance_startup
    def hook(ctx: seahaven.Ctx, *, seed: str = "none", state_format: str = "none") -> None:
        ctx.state["seed"] = seed
        ctx.state["state_format"] = state_format

    with world.instance(seed=1, startup={"seed": "from startup"}) as inst:
        assert inst.call("whoami") == {"seed": "from startup", "state_format": "none"}
        assert inst.state_format == "seahaven.state/1"


def test_an_unknown_keyword_is_refused_before_any_file_is_touched(tmp_path: Path) -> None:
    work = tmp_path / "work"
    world = declare(work)
    ran: list[str] = []

    @world.instance_startup
    def principal(ctx: seahaven.Ctx, *, author: str = "anonymous") -> None:
        ran.append(author)

    with pytest.raises(seahaven.WorldBug, match="unknown startup keyword 'auther'") as caught:
        world.instance(startup={"auther": "ada"})
    assert "author" in str(caught.value)
    assert ran == []
    assert leftovers(work) == []


def test_any_keyword_is_unknown_to_a_world_without_hooks(tmp_path: Path) -> None:
    world = declare(tmp_path)
    with pytest.raises(seahaven.WorldBug, match="unknown startup keyword"):
        world.instance(startup={"user_id": "ada"})
    assert leftovers(tmp_path) == []


def test_a_hook_taking_star_star_kwargs_accepts_every_keyword() -> None:
    world = declare()

    @world.instance_startup
    def anything(ctx: seahaven.Ctx, **options: Any) -> None:
        ctx.state.update(options)

    with world.instance(startup={"whatever": 1, "typo": 2}) as inst:
        assert inst.call("whoami") == {"whatever": 1, "typo": 2}


def test_a_missing_required_keyword_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    world = declare(tmp_path)

    @world.instance_startup
    def principal(ctx: seahaven.Ctx, *, user_id: str) -> None:
        ctx.state["user_id"] = user_id

    with pytest.raises(seahaven.WorldBug, match="needs startup keyword 'user_id'"):
        world.instance()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [seahaven.WorldBug("user names nobody"), KeyError("x")])
def test_a_hook_that_raises_leaves_no_instance_behind(tmp_path: Path, failure: Exception) -> None:
    world = declare(tmp_path)
    later: list[str] = []

    @world.instance_startup
    def write_then_fail(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO users VALUES ('u1', 'Ada')")
        raise failure

    @world.instance_startup
    def never_runs(ctx: seahaven.Ctx) -> None:
        later.append("ran")

    with pytest.raises(type(failure)):
        world.instance()
    assert later == []
    assert leftovers(tmp_path) == []


def test_a_hooks_writes_are_kept_but_not_in_the_change_log() -> None:
    world = declare()

    @world.instance_startup
    def seed_user(ctx: seahaven.Ctx, *, user_id: str = "u1") -> None:
        ctx.db.execute("INSERT INTO users VALUES (?, 'Ada')", user_id)
        ctx.state["user_id"] = user_id

    @world.tool
    def write_note(ctx: seahaven.Ctx, note_id: str) -> None:
        ctx.db.execute("INSERT INTO notes VALUES (?, ?)", note_id, ctx.state["user_id"])

    with world.instance() as inst:
        assert inst.inspect().rows("SELECT * FROM users") == [{"id": "u1", "name": "Ada"}]
        assert inst.change_log() == []
        inst.call("write_note", note_id="n1")
        assert [(record.table, record.op) for record in inst.change_log()] == [("notes", "insert")]


def test_hooks_see_the_rows_setup_sql_wrote() -> None:
    world = declare()
    seen: list[Any] = []

    @world.instance_startup
    def find_user(ctx: seahaven.Ctx, *, user_id: str = "u1") -> None:
        row = ctx.db.one("SELECT name FROM users WHERE id = ?", user_id)
        if row is None:
            raise seahaven.WorldBug(f"user_id {user_id!r} names nobody")
        seen.append(row["name"])

    with world.instance(setup_sql="INSERT INTO users VALUES ('u1', 'Grace')"):
        pass
    assert seen == ["Grace"]
    with pytest.raises(seahaven.WorldBug, match="names nobody"):
        world.instance()


def test_hooks_run_in_one_transaction_that_commits_together() -> None:
    world = declare()
    in_transaction: list[bool] = []

    @world.instance_startup
    def first(ctx: seahaven.Ctx) -> None:
        in_transaction.append(ctx.db.in_transaction)
        ctx.db.execute("INSERT INTO users VALUES ('u1', 'Ada')")

    @world.instance_startup
    def second(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO users VALUES ('u2', 'Grace')")

    with world.instance() as inst:
        assert in_transaction == [True]
        assert [row["id"] for row in inst.inspect().rows("SELECT id FROM users ORDER BY id")] == [
            "u1",
            "u2",
        ]


def test_state_a_hook_leaves_is_per_instance() -> None:
    world = declare()

    @world.instance_startup
    def principal(ctx: seahaven.Ctx, *, user_id: str = "anonymous") -> None:
        ctx.state["user_id"] = user_id

    with world.instance(startup={"user_id": "ada"}) as first, world.instance() as second:
        assert first.call("whoami") == {"user_id": "ada"}
        assert second.call("whoami") == {"user_id": "anonymous"}
