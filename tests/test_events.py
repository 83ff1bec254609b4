"""Events on the world clock: what happens while the agent works, and when exactly.

An event fires just before the agent's next call once it is due: ``after_call``
N once the agent has made N calls, ``at`` once the instance's clock has reached
the time. It acts as ``event:<name>``, by a tool call or a Python function of
the instance, and an episode with events replays exactly for a seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from people_worlds import NOW, SEED_ROWS, make_desk

import seahaven
from seahaven.scenarios import Event, Scenario, ScenarioSet, Trial


@pytest.fixture
def desk() -> seahaven.World:
    return make_desk()


def notice(name: str, **when: Any) -> dict[str, Any]:
    return {"name": name, **when, "tool": "post_notice", "arguments": {"text": name}}


def with_events(world: seahaven.World, *events: dict[str, Any], **changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "id": "busy-desk",
        "world": world,
        "instructions": "Close ticket t1.",
        "start": {"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "tick"},
        "events": list(events),
        "grader": {"changed": {"table": "tickets", "to": {"status": "closed"}}},
        "solution": [{"tool": "close_ticket", "arguments": {"ticket_id": "t1", "note": "ok"}}],
    }
    data.update(changes)
    return Scenario.model_validate(data)


def notices(trial: Trial) -> list[tuple[Any, ...]]:
    return [
        (record.i, record.after["text"] if record.after else None, record.actor)
        for record in trial.instance.change_log()
        if record.table == "notices"
    ]


def test_after_call_fires_before_the_agents_next_call(desk: seahaven.World) -> None:
    scenario = with_events(desk, notice("first", after_call=0), notice("third", after_call=2))
    with Trial(scenario, seed=1) as trial:
        assert notices(trial) == [], "nothing happens before the agent acts"
        trial.call("line_status")  # the event after call 0 fires first: it is call 0
        trial.call("line_status")
        assert notices(trial) == [(0, "first", "event:first")]
        trial.call("line_status")
        assert notices(trial) == [(0, "first", "event:first"), (3, "third", "event:third")]
        assert [call.actor for call in trial.instance.call_log()] == [
            "event:first",
            "agent",
            "agent",
            "event:third",
            "agent",
        ]
        assert trial.report()["events"] == [
            {"name": "first", "at_call": 0, "error": None},
            {"name": "third", "at_call": 3, "error": None},
        ]


def test_at_fires_once_the_ticking_clock_passes_it(desk: seahaven.World) -> None:
    scenario = with_events(
        desk,
        notice("soon", at="+2s"),
        notice("instant", at="2026-05-04T09:00:03.000Z"),
        notice("tomorrow", at="+1d"),
    )
    with Trial(scenario, seed=1) as trial:
        trial.call("line_status")  # the clock reads +1s after it
        trial.call("line_status")  # +2s after it
        assert notices(trial) == []
        trial.call("line_status")  # "soon" is due: it fires first, as call 2 (+3s)
        assert notices(trial) == [(2, "soon", "event:soon")]
        trial.call("line_status")  # +3s was reached by the event's own call: "instant" now
        assert [name for _, name, _ in notices(trial)] == ["soon", "instant"]
        assert [event.name for event in trial.cast.events.pending] == ["tomorrow"]


def test_events_due_together_fire_in_the_scenarios_order(desk: seahaven.World) -> None:
    scenario = with_events(
        desk, notice("b", after_call=1), notice("a", at="+1s"), notice("c", after_call=0)
    )
    with Trial(scenario, seed=1) as trial:
        trial.call("line_status")
        trial.call("line_status")
        assert [name for _, name, _ in notices(trial)] == ["c", "b", "a"]


def test_an_event_may_be_python_and_its_bulk_writes_are_its_own(desk: seahaven.World) -> None:
    event = {"name": "outage", "after_call": 0, "python": "people_worlds:post_outage"}
    with Trial(with_events(desk, event), seed=1) as trial:
        trial.call("line_status")
        assert notices(trial) == [
            (0, "Network outage in your area", "event:outage"),
            (None, "written directly", "event:outage"),
        ]


def test_a_refused_event_is_noted_and_the_episode_goes_on(desk: seahaven.World) -> None:
    event = {"name": "stray", "after_call": 0, "tool": "close_ticket",
             "arguments": {"ticket_id": "t9", "note": "x"}}  # fmt: skip
    with Trial(with_events(desk, event), seed=1) as trial:
        trial.call("close_ticket", ticket_id="t1", note="ok")
        grade = trial.finish()
        assert grade.passed
        assert trial.report()["events"] == [
            {"name": "stray", "at_call": 0, "error": "NOT_FOUND: there is no ticket t9"}
        ]
        assert trial.instance.call_log()[0].actor == "event:stray"


def test_a_broken_event_is_the_authors_bug_naming_it(desk: seahaven.World) -> None:
    event = {"name": "oops", "after_call": 0, "python": "people_worlds:broken_event"}
    with (
        Trial(with_events(desk, event), seed=1) as trial,
        pytest.raises(seahaven.WorldBug, match="scenario 'busy-desk': event 'oops' raised"),
    ):
        trial.call("line_status")


def test_events_fire_before_submit_and_never_after_the_end(desk: seahaven.World) -> None:
    scenario = with_events(desk, notice("late", after_call=1), notice("never", after_call=5))
    with Trial(scenario, seed=1) as trial:
        trial.call("close_ticket", ticket_id="t1", note="ok")
        trial.submit("done")
        assert [name for _, name, _ in notices(trial)] == ["late"]
        with pytest.raises(seahaven.ToolError):
            trial.call("line_status")
        assert [name for _, name, _ in notices(trial)] == ["late"]


def test_the_solutions_replay_meets_the_same_events(desk: seahaven.World) -> None:
    scenario = with_events(
        desk,
        notice("meanwhile", after_call=1),
        grader={"matches_solution": {}},
        solution=[
            {"tool": "line_status", "arguments": {}},
            {"tool": "close_ticket", "arguments": {"ticket_id": "t1", "note": "ok"}},
        ],
    )
    with Trial(scenario, seed=1) as trial:
        trial.call("line_status")
        trial.call("close_ticket", ticket_id="t1", note="ok")
        assert trial.finish().passed
    with Trial(scenario, seed=1) as trial:
        trial.call("close_ticket", ticket_id="t1", note="ok")  # before the event: it never fires
        grade = trial.finish()
        assert not grade.passed
        assert "notices" in grade.checks[0].why


def test_an_episode_with_events_replays_exactly(desk: seahaven.World) -> None:
    scenario = with_events(desk, notice("a", after_call=1), notice("b", at="+3s"))

    def episode(seed: int) -> tuple[str, list[Any]]:
        with Trial(scenario, seed=seed) as trial:
            for _ in range(4):
                trial.call("line_status")
            trial.call("close_ticket", ticket_id="t1", note="ok")
            return trial.state_sha256(), trial.report()["events"]

    assert episode(3) == episode(3)


def test_a_fixed_clock_never_reaches_a_time(desk: seahaven.World) -> None:
    scenario = with_events(
        desk,
        notice("soon", at="+1m"),
        start={"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "fixed"},
    )
    with pytest.raises(seahaven.WorldBug, match="a fixed clock never gets there"):
        Trial(scenario, seed=1)


def test_an_event_the_world_cannot_run_is_refused_as_the_trial_starts(
    desk: seahaven.World,
) -> None:
    missing_tool = {"name": "x", "after_call": 0, "tool": "fly", "arguments": {}}
    with pytest.raises(seahaven.WorldBug, match="event 'x' calls 'fly', which world 'desk'"):
        Trial(with_events(desk, missing_tool), seed=1)
    missing_module = {"name": "y", "after_call": 0, "python": "no_such_module_here:f"}
    with pytest.raises(seahaven.WorldBug, match="event 'y': cannot import 'no_such_module_here'"):
        Trial(with_events(desk, missing_module), seed=1)


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"name": "e", "tool": "t"}, "takes one of at or after_call"),
        ({"name": "e", "at": "+1m", "after_call": 2, "tool": "t"}, "takes one of at or after_call"),
        ({"name": "e", "after_call": 1}, "takes one of tool or python"),
        ({"name": "e", "after_call": 1, "tool": "t", "python": "a:b"}, "one of tool or python"),
        ({"name": "e", "after_call": 1, "python": "a:b", "arguments": {"x": 1}}, "go with a tool"),
        ({"name": "e", "at": "soon", "tool": "t"}, 'at is "\\+10m"'),
        ({"name": "e", "at": 10, "tool": "t"}, 'at is "\\+10m"'),
        ({"name": "e", "after_call": -1, "tool": "t"}, "greater than or equal to 0"),
        ({"name": "e", "after_call": True, "tool": "t"}, "whole number"),
        ({"name": "Bad Name", "after_call": 1, "tool": "t"}, "event name 'Bad Name'"),
        ({"name": "e", "after_call": 1, "python": "nocolon"}, "module:function"),
    ],
)
def test_an_event_that_cannot_happen_is_refused(
    desk: seahaven.World, event: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        with_events(desk, event)


def test_two_events_of_one_name_are_refused(desk: seahaven.World) -> None:
    with pytest.raises(ValueError, match="two events are named 'a'"):
        with_events(desk, notice("a", after_call=1), notice("a", after_call=2))


def test_times_are_kept_as_written_or_as_canonical_instants() -> None:
    assert Event(name="e", at="+1h30m", tool="t").at == "+1h30m"
    assert Event(name="e", at="2026-05-04T11:00:00+02:00", tool="t").at == (
        "2026-05-04T09:00:00.000Z"
    )
    assert Event(name="e", after_call=3, tool="t").actor == "event:e"


def test_events_are_part_of_the_hash(desk: seahaven.World) -> None:
    plain = with_events(desk)
    one = with_events(desk, notice("a", after_call=1))
    later = with_events(desk, notice("a", after_call=2))
    assert len({plain.hash, one.hash, later.hash}) == 3
    assert "events" not in plain.to_data()
    assert one.to_data()["events"] == [
        {"name": "a", "after_call": 1, "tool": "post_notice", "arguments": {"text": "a"}}
    ]


PACK = """
name: desk-pack
version: "1.0.0"
world: people_worlds:DESK
defaults:
  start: {setup_sql: "INSERT INTO tickets VALUES ('t1', 'open', NULL)", clock_mode: tick}
splits: {train: [close-in-a-storm]}
"""

SCENARIOS = """
- id: close-in-a-storm
  instructions: Close ticket t1, and tell the customer.
  events:
    - {name: storm, after_call: 1, tool: post_notice, arguments: {text: storm warning}}
  user:
    instructions: You want to know the ticket is closed.
    script:
      - {when: {contains: closed}, reply: "Thanks!", stop: true}
  grader:
    all_of:
      - changed: {table: tickets, to: {status: closed}, by: agent}
      - changed: {table: notices, by: "event:storm"}
      - told_user: {contains: [closed]}
      - user_ended
      - nothing_else_changed: {by: agent, allow: [{table: tickets, where: {id: t1}}]}
  solution:
    - {tool: close_ticket, arguments: {ticket_id: t1, note: done}}
    - {tool: line_status}
    - {tool: message_user, arguments: {text: Your ticket is closed.}}
"""


def test_a_yaml_pack_has_users_and_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import people_worlds

    monkeypatch.setattr(people_worlds, "DESK", make_desk(), raising=False)
    (tmp_path / "pack.yaml").write_text(PACK)
    (tmp_path / "storm.yaml").write_text(SCENARIOS)
    pack = ScenarioSet.from_directory(tmp_path)
    [scenario] = pack
    assert scenario.user is not None and scenario.events[0].name == "storm"
    from seahaven.evaluation import check_pack

    [report] = check_pack(pack)
    assert report.problems == []


@pytest.mark.parametrize(
    ("mistake", "field"),
    [
        ("    - {name: storm, tool: post_notice}", "events.0: event 'storm' takes one of at or"),
        (
            "    - {name: storm, after_call: x, tool: post_notice}",
            "events.0.after_call: after_call is a whole number of the agent's calls",
        ),
    ],
)
def test_a_yaml_mistake_names_the_file_the_scenario_and_the_field(
    tmp_path: Path, mistake: str, field: str
) -> None:
    (tmp_path / "pack.yaml").write_text(PACK)
    broken = SCENARIOS.replace(
        "    - {name: storm, after_call: 1, tool: post_notice, arguments: {text: storm warning}}",
        mistake,
    )
    (tmp_path / "storm.yaml").write_text(broken)
    with pytest.raises(seahaven.WorldBug) as raised:
        ScenarioSet.from_directory(tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{tmp_path}/storm.yaml[0] (scenario 'close-in-a-storm'): ")
    assert field in message


def test_a_yaml_user_mistake_names_its_field(tmp_path: Path) -> None:
    (tmp_path / "pack.yaml").write_text(PACK)
    (tmp_path / "storm.yaml").write_text(SCENARIOS.replace('reply: "Thanks!", ', ""))
    with pytest.raises(seahaven.WorldBug, match=r"storm.yaml\[0\] \(scenario 'close-in-a-storm'\): "
                       r"user.script.0.reply: Field required"):  # fmt: skip
        ScenarioSet.from_directory(tmp_path)
