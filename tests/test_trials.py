"""A trial: one episode bound to a scenario, its budget, ``submit``, and its grade."""

from __future__ import annotations

import gc

import pytest
from grading_worlds import make_shop, question_scenario, ship_scenario, start

import seahaven
from seahaven.scenarios import EpisodeOver, Scenario, Trial, replay_solution, submit_listing
from seahaven.scenarios import trial as trial_module


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


def test_a_trial_lists_submit_after_the_worlds_tools(shop: seahaven.World) -> None:
    with Trial(ship_scenario(shop), seed=1, world=shop) as trial:
        names = [tool["name"] for tool in trial.tools()]
        assert names[-1] == "submit"
        assert names[:-1] == [tool["name"] for tool in trial.instance.tools()]
        assert trial.tools()[-1] == submit_listing()
        assert trial.instructions.startswith("Ship Ada's open order")


def test_submit_ends_the_episode_and_grades_it(shop: seahaven.World) -> None:
    with Trial(question_scenario(shop), seed=1, world=shop) as trial:
        assert trial.call("total_for", customer="ada") == {"total": 65.0}
        assert not trial.done and trial.reward is None and trial.grade is None
        answer = trial.call("submit", answer="65")
        assert answer == {"submitted": True, "answer": "65"}
        assert trial.done and trial.submitted and trial.ended_by == "submit"
        assert trial.reward == 1.0
        assert trial.grade is not None and trial.grade.passed
        with pytest.raises(EpisodeOver) as raised:
            trial.call("total_for", customer="ada")
        assert raised.value.code == "episode_over"
        assert "an answer was submitted" in raised.value.message
        with pytest.raises(EpisodeOver):
            trial.submit("again")
        # What the agent did after the end did not happen.
        assert trial.calls_made == 1


def test_the_budget_ends_the_episode_on_the_call_that_spends_it(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop, budget=2)
    with Trial(scenario, seed=1, world=shop) as trial:
        assert trial.calls_left == 2
        trial.call("set_status", order_id="o1", status="shipped")
        assert trial.calls_left == 1 and not trial.done
        # A refused call counts too.
        with pytest.raises(seahaven.ToolError):
            trial.call("set_status", order_id="nope", status="shipped")
        assert trial.done and trial.ended_by == "budget"
        assert trial.grade is not None and not trial.grade.passed
        with pytest.raises(EpisodeOver, match="its budget of 2 tool calls is spent"):
            trial.call("ledger_record", order_id="o1", cents=2500)


def test_an_unknown_tool_and_a_bad_submit_count_against_the_budget(shop: seahaven.World) -> None:
    with Trial(question_scenario(shop), seed=1, world=shop) as trial:
        with pytest.raises(seahaven.UnknownTool):
            trial.call("no_such_tool")
        with pytest.raises(seahaven.ArgumentError) as bad:
            trial.call("submit", answer=65)
        assert bad.value.error_type == "invalid_args"
        assert bad.value.violations[0]["loc"] == ["answer"]
        with pytest.raises(seahaven.ArgumentError):
            trial.call("submit", answer="x", note="y")
        assert trial.done and trial.ended_by == "budget"


def test_an_answer_too_long_is_refused(shop: seahaven.World) -> None:
    with Trial(question_scenario(shop), seed=1, world=shop) as trial:
        with pytest.raises(seahaven.ArgumentError, match="at most 20000 characters"):
            trial.submit("9" * 20_001)
        assert not trial.done


def test_finish_grades_where_the_episode_stands_once(shop: seahaven.World) -> None:
    with Trial(ship_scenario(shop), seed=1, world=shop) as trial:
        trial.call("set_status", order_id="o1", status="shipped")
        trial.call("ledger_record", order_id="o1", cents=2500)
        grade = trial.finish()
        assert grade.passed and trial.ended_by == "finish"
        assert trial.finish() is grade
        report = trial.report()
        assert report["done"] is True and report["grade"] == grade.to_dict()
        assert report["id"] == "ship-ada" and report["calls_made"] == 2


def test_a_world_with_its_own_submit_tool_cannot_be_bound() -> None:
    world = make_shop()

    @world.tool
    def submit(ctx: seahaven.Ctx) -> None:
        """The world's own submit."""

    with pytest.raises(seahaven.WorldBug, match="has a tool named 'submit'"):
        Trial(ship_scenario(world), seed=1, world=world)


def test_a_scenario_that_cannot_start_says_which(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop, start={"fixture": "nowhere"})
    with pytest.raises(seahaven.WorldBug, match="scenario 'ship-ada' cannot start"):
        Trial(scenario, seed=1, world=shop)


def test_the_state_hash_follows_what_the_agent_did_not_the_instance(shop: seahaven.World) -> None:
    def hash_of(*orders: str) -> str:
        with Trial(ship_scenario(shop), seed=4, world=shop) as trial:
            for order in orders:
                trial.call("set_status", order_id=order, status="shipped")
            return trial.state_sha256()

    assert hash_of("o1") == hash_of("o1")
    assert hash_of("o1") != hash_of("o2")


def test_a_solution_is_replayed_once_per_seed(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)
    first = replay_solution(scenario, shop, 11)
    assert replay_solution(scenario, shop, 11) is first
    assert replay_solution(scenario, shop, 12) is not first
    assert [change.table for change in first.changes] == ["entries", "orders"]
    assert first.errors == [] and first.answer is None
    with pytest.raises(seahaven.WorldBug, match="has no reference solution"):
        replay_solution(ship_scenario(shop, solution=None), shop, 1)


@pytest.mark.usefixtures("on_disk")
def test_closing_a_trial_destroys_its_instances(shop: seahaven.World) -> None:
    from seahaven import grading

    def reads_start(episode: grading.Episode) -> bool:
        return episode.start.one("SELECT count(*) AS n FROM orders") is not None

    trial = Trial(ship_scenario(shop, grader=grading.python(reads_start)), seed=1, world=shop)
    directory = trial.instance.directory
    assert trial.finish().passed
    trial.close()
    trial.close()
    assert not directory.exists()
    with pytest.raises(seahaven.WorldBug):
        trial.instance.call("total_for", customer="ada")


def test_a_grader_that_breaks_is_the_scenarios_bug(shop: seahaven.World) -> None:
    from seahaven import grading

    broken = ship_scenario(shop, grader=grading.exists("no_such_table"))
    with (
        Trial(broken, seed=1, world=shop) as trial,
        pytest.raises(
            seahaven.WorldBug, match=r"scenario 'ship-ada': grading failed: .*no such table"
        ),
    ):
        trial.finish()


def order_scenario(world: seahaven.World) -> Scenario:
    """Place an order (a minted id, a ticking clock) and pay it: a solution the seed shapes."""
    return ship_scenario(
        world,
        id="order-and-pay",
        start=start(clock_mode="tick"),
        grader={"matches_solution": {}},
        solution=[
            {"tool": "place_order", "arguments": {"customer": "cy", "total": 9.5}},
            {"tool": "ledger_record", "arguments": {"order_id": "o2", "cents": 1250}},
        ],
    )


def test_a_replay_from_a_start_image_is_the_replay_from_a_new_instance() -> None:
    scenario = order_scenario(make_shop())
    fresh = replay_solution(scenario, make_shop(), 21)
    # Another world object, so neither replay is the other's cached one.
    other = make_shop()
    with other.instance(**scenario.start.instance_options(seed=21)) as found:
        image = found.snapshot()
    from_image = replay_solution(scenario, other, 21, start=image)
    assert from_image is not fresh
    assert list(from_image.changes) == list(fresh.changes)
    minted = [change.key for change in fresh.changes.in_table("orders")]
    assert len(minted) == 1 and minted[0]["id"].startswith("o-")


def test_a_trial_keeps_a_start_image_only_while_a_replay_needs_it(shop: seahaven.World) -> None:
    scenario = order_scenario(shop)
    before = trial_module._held_bytes
    trial = Trial(scenario, seed=31, world=shop)
    image = trial._start_image
    assert image is not None
    assert trial_module._held_bytes == before + image.nbytes
    trial.call("place_order", customer="cy", total=9.5)
    trial.call("ledger_record", order_id="o2", cents=1250)
    grade = trial.finish()
    assert grade.passed, grade.summary()
    # Graded: the image is let go at once, not when the trial closes.
    assert trial._start_image is None
    assert trial_module._held_bytes == before
    trial.close()
    assert trial_module._held_bytes == before
    # The seed's replay is known now: a second trial of it takes no image.
    with Trial(scenario, seed=31, world=shop) as again:
        assert again._start_image is None
    # Nor does a trial whose grader never replays the solution.
    with Trial(ship_scenario(shop, grader={"submitted": None}), seed=32, world=shop) as plain:
        assert plain._start_image is None
    # A trial dropped before it ends lets its image go when it is collected.
    abandoned = Trial(scenario, seed=33, world=shop)
    assert trial_module._held_bytes > before
    abandoned.instance.destroy()
    del abandoned
    gc.collect()
    assert trial_module._held_bytes == before


# 0: the budget is full before the snapshot; 1: the snapshot is larger than what is left.
@pytest.mark.parametrize("budget", [0, 1])
def test_past_the_image_budget_a_trial_replays_on_a_new_instance(
    shop: seahaven.World, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    monkeypatch.setattr(trial_module, "START_IMAGE_BUDGET", budget)
    scenario = order_scenario(shop)
    with Trial(scenario, seed=41, world=shop) as trial:
        assert trial._start_image is None
        trial.call("place_order", customer="cy", total=9.5)
        trial.call("ledger_record", order_id="o2", cents=1250)
        assert trial.finish().passed
    with Trial(scenario, seed=42, world=shop) as wrong:
        wrong.call("ledger_record", order_id="o2", cents=1250)
        assert not wrong.finish().passed


def test_the_start_view_comes_from_the_start_image(shop: seahaven.World) -> None:
    from seahaven import grading

    def start_and_solution(episode: grading.Episode) -> bool:
        before = episode.start.one("SELECT count(*) AS n FROM orders")
        return before is not None and before["n"] == 3 and len(episode.solution) == 2

    grader = grading.all_of(grading.matches_solution(), grading.python(start_and_solution))
    with Trial(
        order_scenario(shop).model_copy(update={"grader": grader}), seed=51, world=shop
    ) as trial:
        assert trial._start_image is not None
        trial.call("place_order", customer="cy", total=9.5)
        trial.call("ledger_record", order_id="o2", cents=1250)
        assert trial.finish().passed


def test_a_start_that_cannot_be_snapshotted_replays_on_a_new_instance(
    shop: seahaven.World,
) -> None:
    import threading

    @shop.instance_startup
    def keep_a_lock(ctx: seahaven.Ctx) -> None:
        ctx.state["lock"] = threading.Lock()  # deepcopy refuses a lock

    with Trial(order_scenario(shop), seed=61, world=shop) as trial:
        assert trial._start_image is None
        trial.call("place_order", customer="cy", total=9.5)
        trial.call("ledger_record", order_id="o2", cents=1250)
        assert trial.finish().passed


def _idle(world: seahaven.World) -> list[seahaven.Instance]:
    """The idle replay instances this process keeps for ``world``."""
    with trial_module._shelf_lock:
        return [
            instance
            for instances in trial_module._shelf.values()
            for instance in instances
            if instance.world is world
        ]


def test_replays_reuse_an_idle_instance_and_match_replays_on_new_ones() -> None:
    trial_module.clear_replay_instances()
    reused_world, fresh_world = make_shop(), make_shop()
    scenario = order_scenario(reused_world)
    for seed in (71, 72, 73):
        with reused_world.instance(**scenario.start.instance_options(seed=seed)) as found:
            image = found.snapshot()
        reused = replay_solution(scenario, reused_world, seed, start=image)
        [idle] = _idle(reused_world)  # the one replay instance, put back each time
        if seed == 71:
            first = idle
        assert idle is first
        # Replayed on a new instance of another world object: no cache, no idle instance.
        fresh = replay_solution(scenario, fresh_world, seed)
        assert list(reused.changes) == list(fresh.changes)
        assert reused.errors == fresh.errors
    assert _idle(fresh_world) == []  # a replay on a new instance is not kept
    trial_module.clear_replay_instances()
    assert _idle(reused_world) == []
    with pytest.raises(seahaven.WorldBug, match="was destroyed"):
        first.call("total_for", customer="ada")


def test_at_most_replay_instances_are_kept_idle(
    shop: seahaven.World, monkeypatch: pytest.MonkeyPatch
) -> None:
    trial_module.clear_replay_instances()
    monkeypatch.setattr(trial_module, "REPLAY_INSTANCES", 2)
    scenario = order_scenario(shop)
    images = []
    for seed in (81, 82, 83):
        with shop.instance(**scenario.start.instance_options(seed=seed)) as found:
            images.append(found.snapshot())
    # Three replays under way at once (as three threads would have them): three instances.
    taken = [trial_module._replay_instance(shop, image) for image in images]
    for instance in taken:
        trial_module._shelve(instance)
    kept = _idle(shop)
    assert kept == taken[1:]
    with pytest.raises(seahaven.WorldBug, match="was destroyed"):
        taken[0].call("total_for", customer="ada")
    # The shop's two are taken back out; another world's then fill the shelf past its size.
    again = [trial_module._replay_instance(shop, image) for image in images[:2]]
    assert again == kept[::-1] and _idle(shop) == []
    other = make_shop()
    with other.instance(**scenario.start.instance_options(seed=84)) as found:
        other_image = found.snapshot()
    for instance in [trial_module._replay_instance(other, other_image) for _ in range(3)]:
        trial_module._shelve(instance)
    assert len(_idle(other)) == 2
    for instance in again:
        trial_module._shelve(instance)
    assert _idle(other) == [] and _idle(shop) == again
    trial_module.clear_replay_instances()


def test_an_idle_instance_that_cannot_take_the_start_gives_way_to_a_new_restore(
    shop: seahaven.World,
) -> None:
    trial_module.clear_replay_instances()
    scenario = order_scenario(shop)
    with shop.instance(**scenario.start.instance_options(seed=91)) as found:
        image = found.snapshot()
    replay_solution(scenario, shop, 91, start=image)
    [idle] = _idle(shop)
    idle.inspect()  # harmless: a restore in place closes the reader
    # The world grows a store: the idle instance no longer has the world's stores.
    from composition_worlds import make_world

    shop.add_world(make_world("extra", "CREATE TABLE e (id TEXT PRIMARY KEY) STRICT;"))
    with pytest.raises(seahaven.WorldBug, match="cannot be restored on world"):
        replay_solution(scenario, shop, 92, start=image)
    assert _idle(shop) == []
    assert "destroyed" in repr(idle)
