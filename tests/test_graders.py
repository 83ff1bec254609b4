"""The built-in graders on episodes that pass and episodes that fail, and why they say so."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from grading_worlds import SEED_ROWS, make_shop, ship_scenario, start

import seahaven
from seahaven import grading
from seahaven.grading import Episode, Grade
from seahaven.scenarios import Trial


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


@pytest.fixture
def play(shop: seahaven.World) -> Iterator[Callable[..., Episode]]:
    """Run calls on a fresh shop instance and hand back its episode (instance kept alive)."""
    opened: list[seahaven.Instance] = []

    def run(*calls: tuple[str, dict[str, Any]], answer: str | None = None) -> Episode:
        inst = shop.instance(setup_sql=SEED_ROWS, now="2026-05-04T09:00:00.000Z", seed=1)
        opened.append(inst)
        for tool, arguments in calls:
            with contextlib.suppress(seahaven.ToolError):
                inst.call(tool, **arguments)
        return Episode.of(inst, answer=answer, submitted=answer is not None)

    yield run
    for inst in opened:
        inst.destroy()


def ship(order: str = "o1") -> tuple[str, dict[str, Any]]:
    return ("set_status", {"order_id": order, "status": "shipped"})


def one(grade: Grade) -> grading.Check:
    [check] = grade.checks
    return check


# --- the end state --------------------------------------------------------------------------


def test_exists_and_absent_read_the_end_state(play: Callable[..., Episode]) -> None:
    episode = play(ship())
    found = grading.exists("orders", {"id": "o1", "status": "shipped"})(episode)
    assert found.passed and found.score == 1.0
    assert one(found).why == 'one row of orders matches where id="o1", status="shipped"'.replace(
        "one row", "1 row"
    )
    missing = grading.exists("orders", {"id": "o2", "status": "shipped"})(episode)
    assert not missing.passed and missing.score == 0.0
    assert "no row of orders matches" in one(missing).why
    assert grading.absent("orders", {"status": "lost"})(episode).passed
    still = grading.absent("orders", {"customer": "ada"})(episode)
    assert not still.passed and "2 rows of orders still match" in one(still).why


def test_where_takes_lists_as_any_of_and_null_and_numbers_by_value(
    play: Callable[..., Episode],
) -> None:
    episode = play()
    assert grading.count("orders", {"status": ["open", "shipped"]}, equals=3)(episode).passed
    assert grading.count("orders", {"total": 25.0}, equals=1)(episode).passed
    assert grading.count("orders", {"total": 12.5}, equals=1)(episode).passed
    assert grading.count("orders", {"customer": None}, equals=0)(episode).passed
    assert grading.count("orders", {"status": []}, equals=0)(episode).passed


def test_where_operators_test_text_numbers_and_exclusions(
    play: Callable[..., Episode],
) -> None:
    episode = play(("tag", {"order_id": "o1", "tags": ["Gift", "rush"]}))
    # contains: the text, ignoring case; a list needs every piece.
    assert grading.count("orders", {"tags": {"contains": "gift"}}, equals=1)(episode).passed
    assert grading.exists("orders", {"tags": {"contains": ["GIFT", "Rush"]}})(episode).passed
    assert not grading.exists("orders", {"tags": {"contains": ["gift", "slow"]}})(episode).passed
    # pattern: a regular expression found in the text, ignoring case.
    assert grading.count("orders", {"customer": {"pattern": "^(ADA|bri)"}}, equals=3)(
        episode
    ).passed
    # not: none of the values; not null is "has a value".
    assert grading.count("orders", {"status": {"not": "shipped"}}, equals=2)(episode).passed
    assert grading.count("orders", {"status": {"not": ["open", "shipped"]}}, equals=0)(
        episode
    ).passed
    assert grading.count("orders", {"customer": {"not": None}}, equals=3)(episode).passed
    # at_least and at_most compare numbers; together they are a range, and text never passes.
    assert grading.count("orders", {"total": {"at_least": 25}}, equals=2)(episode).passed
    assert grading.count("orders", {"total": {"at_least": 12, "at_most": 30}}, equals=2)(
        episode
    ).passed
    assert grading.count("orders", {"customer": {"at_least": 0}}, equals=0)(episode).passed
    # Plain values and operators mix: SQL narrows by the first, Python tests the second.
    both = grading.count("orders", {"customer": "ada", "total": {"at_most": 30}}, equals=1)
    assert both(episode).passed
    missing = grading.exists("orders", {"tags": {"contains": "slow"}})(episode)
    assert one(missing).why == 'no row of orders matches where tags contains "slow"'


def test_operators_work_in_changed_to_and_in_allowances(play: Callable[..., Episode]) -> None:
    episode = play(("place_order", {"customer": "cyd", "total": 7}))
    placed = grading.changed(
        "orders",
        {"customer": {"pattern": "^c"}},
        to={"total": {"at_least": 5}, "id": {"not": None}},
    )
    assert placed(episode).passed
    short = grading.changed("orders", {"customer": "cyd"}, to={"total": {"at_least": 10}})(episode)
    assert not short.passed
    assert one(short).why.endswith("total is 7.0, not one that >= 10")
    allow_small = grading.nothing_else_changed(
        allow=[{"table": "orders", "where": {"total": {"at_most": 10}}}]
    )
    assert allow_small(episode).passed
    assert not allow_small(play(("place_order", {"customer": "cyd", "total": 70}))).passed
    # Deleted and unchanged read rows through the same operators.
    gone = play(("cancel", {"order_id": "o2"}))
    assert grading.deleted("orders", {"customer": {"contains": "BRI"}})(gone).passed
    assert grading.unchanged("orders", {"customer": {"not": "brian"}})(gone).passed
    assert not grading.unchanged("orders", {"total": {"at_most": 20}})(gone).passed


def test_count_bounds(play: Callable[..., Episode]) -> None:
    episode = play(("place_order", {"customer": "ada", "total": 5}))
    assert grading.count("orders", {"customer": "ada"}, equals=3)(episode).passed
    wrong = grading.count("orders", {"customer": "ada"}, equals=2)(episode)
    assert not wrong.passed
    assert one(wrong).why == "3 rows match, and exactly 2 are wanted"
    assert grading.count("orders", at_least=4, at_most=4)(episode).passed
    assert not grading.count("orders", at_most=3)(episode).passed


def test_a_check_on_an_added_store_names_it(play: Callable[..., Episode]) -> None:
    episode = play(("ledger_record", {"order_id": "o1", "cents": 2500}))
    assert grading.exists("entries", {"cents": 2500}, store="ledger")(episode).passed
    missing = grading.exists("entries", {"cents": 1}, store="ledger")(episode)
    assert "no row of ledger.entries matches" in one(missing).why
    with pytest.raises(seahaven.WorldBug, match="no store 'bank'"):
        grading.exists("entries", store="bank")(episode)


# --- net changes ------------------------------------------------------------------------------


def test_changed_needs_the_episode_to_have_set_the_values(play: Callable[..., Episode]) -> None:
    shipped = grading.changed("orders", {"id": "o1"}, to={"status": "shipped"})
    assert shipped(play(ship())).passed
    # o3 was shipped before the episode began: it matches, but the episode did not change it.
    already = grading.changed("orders", {"id": "o3"}, to={"status": "shipped"})(play(ship()))
    assert not already.passed
    assert one(already).why == "1 row matches, but the episode did not change any of them"
    wrong = grading.changed("orders", {"id": "o1"}, to={"status": "lost"})(play(ship()))
    assert not wrong.passed
    assert one(wrong).why == 'main.orders (id=\'o1\'): status is "shipped", not "lost"'
    untouched = play(("tag", {"order_id": "o1", "tags": ["gift"]}))
    set_other = grading.changed("orders", {"id": "o1"}, to={"status": "open"})(untouched)
    assert one(set_other).why == "main.orders (id='o1'): the episode did not set status"


def test_changed_finds_inserted_rows_by_their_end_values_and_op(
    play: Callable[..., Episode],
) -> None:
    episode = play(("place_order", {"customer": "cyd", "total": 7}))
    assert grading.changed("orders", {"customer": "cyd"}, to={"total": 7.0}, op="insert")(
        episode
    ).passed
    assert not grading.changed("orders", {"customer": "cyd"}, op="update")(episode).passed
    gone = grading.changed("orders", {"customer": "nobody"})(episode)
    assert "is left in the store" in one(gone).why


def test_json_text_columns_compare_by_content(play: Callable[..., Episode]) -> None:
    episode = play(("tag", {"order_id": "o2", "tags": ["rush", "gift"]}))
    grader = grading.changed("orders", {"id": "o2"}, to={"tags": '[ "rush" ,"gift"]'})
    assert grader(episode).passed


def test_deleted_matches_the_row_as_it_was(play: Callable[..., Episode]) -> None:
    episode = play(("cancel", {"order_id": "o2"}))
    assert grading.deleted("orders", {"customer": "brian", "total": 12.5})(episode).passed
    assert not grading.deleted("orders", {"customer": "ada"})(episode).passed
    # A row inserted then deleted in one episode nets to nothing: it was never deleted.
    churn = play(("place_order", {"customer": "eve", "total": 1}))
    assert not grading.deleted("orders", {"customer": "eve"})(churn).passed


def test_unchanged_names_what_changed(play: Callable[..., Episode]) -> None:
    assert grading.unchanged("orders", {"customer": "brian"})(play(ship())).passed
    touched = grading.unchanged("orders", {"customer": "ada"})(play(ship()))
    assert not touched.passed
    assert one(touched).why == "the episode changed main.orders (id='o1') update of status"
    gone = grading.unchanged("orders", {"customer": "brian"})(play(("cancel", {"order_id": "o2"})))
    assert "main.orders (id='o2') delete" in one(gone).why
    # A row moved out of ``where`` by the episode matched it at the start: it was changed.
    moved = grading.unchanged("orders", {"status": "open"})(play(ship("o2")))
    assert not moved.passed and "(id='o2') update of status" in one(moved).why


def test_nothing_else_changed_catches_collateral_damage(play: Callable[..., Episode]) -> None:
    allowed = grading.nothing_else_changed(allow=["orders"])
    assert allowed(play(ship())).passed
    collateral = allowed(play(ship(), ("ledger_record", {"order_id": "o1", "cents": 1})))
    assert not collateral.passed
    assert (
        "1 row changed beyond what is allowed: ledger.entries (n=1) insert" in one(collateral).why
    )
    assert grading.nothing_else_changed()(play()).passed
    assert one(grading.nothing_else_changed()(play())).why == "the episode changed nothing"


def test_an_allowance_can_limit_rows_columns_and_kinds(play: Callable[..., Episode]) -> None:
    only_o1 = grading.nothing_else_changed(allow=[{"table": "orders", "where": {"id": "o1"}}])
    assert only_o1(play(ship("o1"))).passed
    assert not only_o1(play(ship("o2"))).passed
    status_only = grading.nothing_else_changed(allow=[{"table": "orders", "columns": ["status"]}])
    assert status_only(play(ship())).passed
    assert not status_only(play(("tag", {"order_id": "o1", "tags": ["x"]}))).passed
    no_deletes = grading.nothing_else_changed(
        allow=[{"table": "orders", "ops": ["insert", "update"]}]
    )
    assert not no_deletes(play(("cancel", {"order_id": "o1"}))).passed
    # ``where`` on an updated row reads its values at the end, not only the changed columns.
    by_customer = grading.nothing_else_changed(
        allow=[{"table": "orders", "where": {"customer": "ada"}}]
    )
    assert by_customer(play(ship("o1"))).passed
    assert not by_customer(play(ship("o2"))).passed


# --- the reference solution -------------------------------------------------------------------


def test_matches_solution_ignores_order_and_declared_columns(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)
    with Trial(scenario, seed=5, world=shop) as trial:
        # The solution's two calls, the other way round: the same end state.
        trial.call("ledger_record", order_id="o1", cents=2500)
        trial.call("set_status", order_id="o1", status="shipped")
        grade = trial.finish()
    assert grade.passed, grade.summary()


def test_matches_solution_compares_numbers_by_value_and_rows_by_content() -> None:
    # Minted ids come from the seeded stream: ignoring them, two inserts match in any order.
    shop = make_shop()
    scenario = ship_scenario(
        shop,
        id="two-orders",
        grader={"matches_solution": {"ignore": ["orders.id", "placed_at"]}},
        solution=[
            {"tool": "place_order", "arguments": {"customer": "cyd", "total": 25}},
            {"tool": "place_order", "arguments": {"customer": "dot", "total": 3}},
        ],
    )
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("place_order", customer="dot", total=3.0)
        trial.call("place_order", customer="cyd", total=25.0)
        assert trial.finish().passed
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("place_order", customer="cyd", total=25)
        grade = trial.finish()
    assert not grade.passed
    why = one(grade).why
    assert why.startswith("the solution's main.orders (id=")
    assert "insert did not happen" in why


def test_matches_solution_reports_what_the_solution_did_not_make(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("set_status", order_id="o1", status="shipped")
        trial.call("ledger_record", order_id="o1", cents=2500)
        trial.call("set_status", order_id="o2", status="shipped")
        grade = trial.finish()
    failed = {check.name: check.why for check in grade.failed}
    assert "the solution did not make main.orders (id='o2') update of status" in str(failed)
    # The scenario allows any change to orders, so only the comparison with the solution fails.
    assert len(failed) == 1


def test_matches_solution_names_the_values_a_row_was_changed_to(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)
    with Trial(scenario, seed=5, world=shop) as trial:
        # The row the solution ships, set to another status, and the right payment.
        trial.call("set_status", order_id="o1", status="cancelled")
        trial.call("ledger_record", order_id="o1", cents=2500)
        grade = trial.finish()
    [failed] = [check for check in grade.failed if check.name.startswith("the same net")]
    # Column by column: what the episode left, and what the solution did.
    assert failed.why == (
        'main.orders (id=\'o1\'): status is "cancelled", the solution\'s "shipped"'
    )


def test_matches_solution_cuts_long_values_short(shop: seahaven.World) -> None:
    scenario = ship_scenario(shop)
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("set_status", order_id="o1", status="x" * 5000)
        trial.call("ledger_record", order_id="o1", cents=2500)
        grade = trial.finish()
    [failed] = [check for check in grade.failed if check.name.startswith("the same net")]
    assert 'status is "xxx' in failed.why and "…" in failed.why and len(failed.why) < 200


def test_matches_solution_counts_a_row_changed_only_in_ignored_columns_as_unchanged(
    shop: seahaven.World,
) -> None:
    scenario = ship_scenario(shop, grader={"matches_solution": {"ignore": ["orders.tags"]}})
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("set_status", order_id="o1", status="shipped")
        trial.call("ledger_record", order_id="o1", cents=2500)
        # An extra update that touches only an ignored column: no difference that counts.
        trial.call("tag", order_id="o2", tags=["rush"])
        # And one beside a column that counts, on the solution's own row.
        trial.call("tag", order_id="o1", tags=["gift"])
        grade = trial.finish()
    assert grade.passed, grade.summary()
    with Trial(scenario, seed=5, world=shop) as trial:
        trial.call("set_status", order_id="o1", status="shipped")
        trial.call("ledger_record", order_id="o1", cents=2500)
        trial.call("tag", order_id="o3", tags=["rush"])
        trial.call("set_status", order_id="o3", status="open")
        grade = trial.finish()
    [failed] = grade.failed
    # The extra row is named by the columns that count, never by an ignored one.
    assert failed.why == "the solution did not make main.orders (id='o3') update of status"


# --- what the agent did -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "answer", "passed"),
    [
        ({"equals": "Ada Lovelace"}, "  ada lovelace ", True),
        ({"equals": "Ada Lovelace", "case_sensitive": True}, "ada lovelace", False),
        ({"equals": 65}, "65", True),
        ({"equals": 65}, "65.0", True),
        ({"equals": 65}, "64", False),
        ({"number": 1250, "tolerance": 0.01}, "$1,250.00", True),
        ({"number": 1250, "tolerance": 0.01}, "1250.02", False),
        ({"number": 1250}, "about a thousand", False),
        ({"number": 1600}, "1600 USD", True),
        ({"number": 1600}, "usd 1,600.00", True),
        ({"number": 1600}, "EUR1600", True),
        ({"number": 1600}, "1600 dollars", False),
        ({"number": 1600}, "USD", False),
        ({"number": "$1,600"}, "1600.00", True),
        ({"pattern": r"\bINV-\d{4}\b"}, "It is inv-0011.", True),
        ({"pattern": r"\bINV-\d{4}\b", "case_sensitive": True}, "It is inv-0011.", False),
        ({"contains": ["refuse", "gate"]}, "I refuse: the Gate said no", True),
        ({"contains": "approved"}, "I refuse", False),
    ],
)
def test_answer_modes(
    play: Callable[..., Episode], wanted: dict[str, Any], answer: str, passed: bool
) -> None:
    grade = grading.answer(**wanted)(play(answer=answer))
    assert grade.passed is passed
    assert one(grade).why == f"the answer was {answer!r}".replace("'", '"')


def test_no_answer_fails_every_answer_check(play: Callable[..., Episode]) -> None:
    grade = grading.answer(contains="x")(play())
    assert not grade.passed and one(grade).why == "no answer was submitted"
    assert not grading.submitted()(play()).passed
    assert grading.submitted()(play(answer="done")).passed


def test_called_counts_calls_by_tool_arguments_and_outcome(play: Callable[..., Episode]) -> None:
    episode = play(ship("o1"), ship("nope"), ("total_for", {"customer": "ada"}))
    assert grading.called("set_status", times=2)(episode).passed
    assert grading.called("set_status", times=1, ok=True)(episode).passed
    assert grading.called("set_status", arguments={"order_id": "o1"}, times=1)(episode).passed
    assert grading.called("cancel", times=0)(episode).passed
    never = grading.called("cancel")(episode)
    assert not never.passed and one(never).name == "cancel called at least 1 time"
    assert one(never).why == "it was called 0 times"


# --- combining --------------------------------------------------------------------------------


def test_all_of_is_the_lowest_and_any_of_the_highest(play: Callable[..., Episode]) -> None:
    episode = play(ship())
    good = grading.exists("orders", {"status": "shipped", "id": "o1"})
    bad = grading.exists("orders", {"status": "lost"})
    both = grading.all_of(good, bad)(episode)
    assert (both.passed, both.score, len(both.checks)) == (False, 0.0, 2)
    either = grading.any_of(good, bad)(episode)
    assert (either.passed, either.score, len(either.checks)) == (True, 1.0, 2)


def test_weighted_gives_partial_credit(play: Callable[..., Episode]) -> None:
    episode = play(ship())
    good = grading.exists("orders", {"status": "shipped", "id": "o1"})
    bad = grading.exists("orders", {"status": "lost"})
    grade = grading.weighted([(good, 3), (bad, 1)])(episode)
    assert grade.score == pytest.approx(0.75) and not grade.passed
    assert grading.weighted([(good, 3), (bad, 1)], pass_at=0.7)(episode).passed


def test_a_python_grader_may_return_a_bool_a_score_a_check_or_a_grade(
    play: Callable[..., Episode],
) -> None:
    episode = play(ship())

    def shipped_rows(episode: Episode) -> float:
        rows = episode.end.rows("SELECT id FROM orders WHERE status = 'shipped'")
        return len(rows) / 2

    assert grading.python(shipped_rows)(episode).score == 1.0
    assert grading.python(lambda e: False)(episode).passed is False
    check = grading.Check("custom", True, "because")
    assert grading.python(lambda e: check)(episode).checks == (check,)
    with pytest.raises(seahaven.WorldBug, match="returned 'yes'"):
        grading.python(lambda e: "yes")(episode)
    with pytest.raises(seahaven.WorldBug, match="raised ZeroDivisionError"):
        grading.python(lambda e: 1 / 0)(episode)


def test_a_python_grader_reads_the_start_through_a_trial(shop: seahaven.World) -> None:
    def grew(episode: Episode) -> bool:
        before = episode.start.one("SELECT count(*) AS n FROM orders")
        after = episode.end.one("SELECT count(*) AS n FROM orders")
        assert before is not None and after is not None
        return bool(after["n"] == before["n"] + 1)

    scenario = ship_scenario(shop, grader=grading.python(grew), solution=None)
    with Trial(scenario, seed=1, world=shop) as trial:
        trial.call("place_order", customer="z", total=1)
        assert trial.finish().passed


# --- graders as data --------------------------------------------------------------------------


def test_specs_round_trip_through_data() -> None:
    grader = grading.all_of(
        grading.changed("orders", {"id": "o1"}, to={"status": "shipped"}, op="update"),
        grading.count("entries", {"cents": {"at_least": 100}}, store="ledger", at_least=1),
        grading.exists("orders", {"tags": {"contains": ["gift"]}, "status": {"not": None}}),
        grading.nothing_else_changed(allow=["orders", {"table": "entries", "store": "ledger"}]),
        grading.any_of(grading.answer(number=3, tolerance=0.5), grading.submitted()),
        grading.weighted([(grading.called("cancel", times=0), 2)], pass_at=0.5),
        grading.matches_solution(ignore=["id"]),
    )
    spec = grader.spec()
    again = grading.grader_from_spec(spec)
    assert again.spec() == spec
    assert spec["all_of"][2] == {
        "exists": {
            "table": "orders",
            "where": {"tags": {"contains": ["gift"]}, "status": {"not": None}},
        }
    }
    assert spec["all_of"][3] == {"nothing_else_changed": {"allow": ["orders", "ledger.entries"]}}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"exist": {"table": "t"}}, "'exist' is not a kind of grader"),
        ({"exists": {"tabel": "t"}}, "exists does not take tabel; it takes table, where, store"),
        ({"exists": {}}, "exists needs table"),
        ({"exists": {"table": "t"}, "absent": {"table": "t"}}, "names one kind"),
        ({"all_of": []}, "all_of takes a list of graders"),
        ({"all_of": [{"count": {"table": "t"}}]}, r"grader.all_of\[0\]: count needs equals"),
        ({"answer": {"number": 1, "pattern": "x"}}, "exactly one of"),
        ({"answer": {"pattern": "("}}, "not a regular expression"),
        ({"changed": {"table": "t", "where": {"a": {"b": 1}}}}, "'b' is not an operator"),
        ({"exists": {"table": "t", "where": {"a": {}}}}, "an empty mapping tests nothing"),
        ({"exists": {"table": "t", "where": {"a": {"contains": 3}}}}, "contains takes a piece"),
        ({"exists": {"table": "t", "where": {"a": {"pattern": "("}}}}, "not a regular expr"),
        ({"exists": {"table": "t", "where": {"a": {"at_least": "5"}}}}, "at_least takes a num"),
        ({"exists": {"table": "t", "where": {"a": {"not": [[1]]}}}}, "not takes a value"),
        ({"python": "nowhere_at_all:fn"}, "cannot import 'nowhere_at_all'"),
        ({"weighted": {"parts": [{"weight": -1, "grader": "submitted"}]}}, "a weight is a number"),
        ("bogus", "'bogus' is not a kind of grader"),
    ],
)
def test_a_bad_spec_names_where_and_what(spec: Any, message: str) -> None:
    with pytest.raises(seahaven.WorldBug, match=message):
        grading.grader_from_spec(spec)


def test_an_episode_read_back_from_a_document_grades_change_checks(
    shop: seahaven.World,
) -> None:
    with shop.instance(**start()) as inst:
        inst.call("set_status", order_id="o1", status="shipped")
        document = inst.state(format="seahaven.state+calls/1")
    episode = Episode.from_document(document)
    assert grading.called("set_status", times=1)(episode).passed
    assert grading.nothing_else_changed(allow=["orders"])(episode).passed
    with pytest.raises(seahaven.WorldBug, match="no end state to read"):
        grading.exists("orders")(episode)
