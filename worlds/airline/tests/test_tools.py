"""Each tool checks, refuses, writes and answers as tau2-bench's airline tool of the same name."""

from __future__ import annotations

from typing import Any

import pytest
from airline_support import refusal, row, rows

import seahaven
from seahaven.pytest_plugin import prepared_on_repeat

pytestmark = pytest.mark.seahaven(fixture="initial")

MOHAMED = "mohamed_silva_9265"
ONE = [{"first_name": "Mohamed", "last_name": "Silva", "dob": "1960-11-26"}]


def booking(**changes: Any) -> dict[str, Any]:
    """Mohamed alone on HAT023 JFK to SFO on 26 May in economy (162) with insurance (30)."""
    arguments: dict[str, Any] = {
        "user_id": MOHAMED,
        "origin": "JFK",
        "destination": "SFO",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT023", "date": "2024-05-26"}],
        "passengers": ONE,
        "payment_methods": [
            {"payment_id": "certificate_3765853", "amount": 100},
            {"payment_id": "gift_card_8020792", "amount": 92},
        ],
        "total_baggages": 1,
        "nonfree_baggages": 0,
        "insurance": "yes",
    }
    arguments.update(changes)
    return arguments


def seats(instance: seahaven.Instance, flight: str, date: str, cabin: str) -> int:
    found = row(
        instance,
        f"SELECT seats_{cabin} AS n FROM flight_dates WHERE flight_number = ? AND date = ?",
        flight,
        date,
    )
    return int(found["n"])


def methods(instance: seahaven.Instance, user_id: str = MOHAMED) -> dict[str, Any]:
    found = rows(
        instance,
        "SELECT id, amount FROM payment_methods WHERE user_id = ? ORDER BY position",
        user_id,
    )
    return {item["id"]: item["amount"] for item in found}


def test_a_booking_takes_seats_spends_the_certificate_and_gift_card_and_files_the_reservation(
    instance: seahaven.Instance,
) -> None:
    before = seats(instance, "HAT023", "2024-05-26", "economy")
    reservation = instance.call("book_reservation", **booking())

    assert reservation.reservation_id == "HATHAT"
    # The benchmark's fixed "now", shown as it shows it.
    assert reservation.created_at == "2024-05-15T15:00:00"
    assert [(f.flight_number, f.origin, f.destination, f.price) for f in reservation.flights] == [
        ("HAT023", "JFK", "SFO", 162)
    ]
    assert [(p.payment_id, p.amount) for p in reservation.payment_history] == [
        ("certificate_3765853", 100),
        ("gift_card_8020792", 92),
    ]
    assert reservation.status is None
    assert seats(instance, "HAT023", "2024-05-26", "economy") == before - 1
    left = methods(instance)
    # A certificate is spent whole, whatever part of it paid; a gift card keeps the rest.
    assert "certificate_3765853" not in left
    assert left["gift_card_8020792"] == 106.0
    # The profile keeps its order with no gap, as the benchmark's dictionary does.
    positions = rows(
        instance,
        "SELECT position FROM payment_methods WHERE user_id = ? ORDER BY position",
        MOHAMED,
    )
    assert [item["position"] for item in positions] == list(range(len(left)))
    assert instance.call("get_user_details", user_id=MOHAMED).reservations == ["K1NW8N", "HATHAT"]
    stored = row(instance, "SELECT created_at FROM reservations WHERE reservation_id = 'HATHAT'")
    assert stored["created_at"] == "2024-05-15T20:00:00.000Z"


def test_new_reservations_take_the_benchmarks_three_ids_and_no_more(
    instance: seahaven.Instance,
) -> None:
    card = [{"payment_id": "credit_card_2198526", "amount": 192}]
    made = [
        instance.call("book_reservation", **booking(payment_methods=card)).reservation_id
        for _ in range(3)
    ]
    assert made == ["HATHAT", "HATHAU", "HATHAV"]
    assert refusal(instance, "book_reservation", **booking(payment_methods=card)) == (
        "LIMIT_REACHED",
        "Too many reservations",
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"user_id": "nobody_1"}, ("NOT_FOUND", "User nobody_1 not found")),
        (
            {"flights": [{"flight_number": "HAT999", "date": "2024-05-26"}]},
            ("NOT_FOUND", "Flight HAT999 not found"),
        ),
        (
            {"flights": [{"flight_number": "HAT023", "date": "2024-06-30"}]},
            ("NOT_FOUND", "Flight HAT023 not found on date 2024-06-30"),
        ),
        (
            {"flights": [{"flight_number": "HAT023", "date": "2024-05-10"}]},
            ("FLIGHT_NOT_AVAILABLE", "Flight HAT023 not available on date 2024-05-10"),
        ),
        ({"passengers": ONE * 15}, ("NOT_ENOUGH_SEATS", "Not enough seats on flight HAT023")),
        (
            {"payment_methods": [{"payment_id": "credit_card_1", "amount": 192}]},
            ("NOT_FOUND", "Payment method credit_card_1 not found"),
        ),
        (
            {"payment_methods": [{"payment_id": "gift_card_6136092", "amount": 192}]},
            ("INSUFFICIENT_BALANCE", "Not enough balance in payment method gift_card_6136092"),
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_2198526", "amount": 191}]},
            (
                "PAYMENT_MISMATCH",
                "Payment amount does not add up, total price is 192, but paid 191",
            ),
        ),
    ],
)
def test_a_refused_booking_says_what_the_benchmark_says_and_changes_nothing(
    instance: seahaven.Instance, changes: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert refusal(instance, "book_reservation", **booking(**changes)) == expected
    assert instance.change_log() == []


def test_payment_objects_validate_as_the_benchmarks_do(instance: seahaven.Instance) -> None:
    # tau2-bench reads a payment with pydantic's lax rules: 192.0 is 192, extra keys are dropped.
    card = [{"payment_id": "credit_card_2198526", "amount": 192.0, "note": "x"}]
    assert (
        instance.call("book_reservation", **booking(payment_methods=card)).payment_history[0].amount
        == 192
    )
    code, _ = refusal(instance, "book_reservation", **booking(cabin="first"))
    assert code == "INVALID_INPUT"


def test_cancelling_refunds_every_payment_and_keeps_the_seats(instance: seahaven.Instance) -> None:
    before = seats(instance, "HAT023", "2024-05-26", "basic_economy")
    cancelled = instance.call("cancel_reservation", reservation_id="K1NW8N")
    assert cancelled.status == "cancelled"
    assert [(p.payment_id, p.amount) for p in cancelled.payment_history] == [
        ("gift_card_6136092", 567),
        ("gift_card_6136092", -567),
    ]
    # The benchmark neither releases seats nor credits the gift card on a cancellation.
    assert seats(instance, "HAT023", "2024-05-26", "basic_economy") == before
    assert methods(instance)["gift_card_6136092"] == 129.0
    changed = sorted((record.table, record.op) for record in instance.change_log())
    assert changed == [("reservation_payments", "insert"), ("reservations", "update")]
    assert refusal(instance, "cancel_reservation", reservation_id="NOPE00") == (
        "NOT_FOUND",
        "Reservation NOPE00 not found",
    )


K1NW8N_FLIGHTS = [
    {"flight_number": "HAT023", "date": "2024-05-26"},
    {"flight_number": "HAT204", "date": "2024-05-28"},
    {"flight_number": "HAT021", "date": "2024-05-28"},
]


def test_changing_the_cabin_reprices_every_flight_and_charges_the_difference(
    instance: seahaven.Instance,
) -> None:
    assert refusal(
        instance,
        "update_reservation_flights",
        reservation_id="K1NW8N",
        cabin="economy",
        flights=K1NW8N_FLIGHTS,
        payment_id="credit_card_2198526",
    ) == ("NOT_ENOUGH_SEATS", "Not enough seats on flight HAT204")
    changed = instance.call(
        "update_reservation_flights",
        reservation_id="K1NW8N",
        cabin="business",
        flights=K1NW8N_FLIGHTS,
        payment_id="credit_card_2198526",
    )
    assert changed.cabin == "business"
    # In another cabin no flight is kept: each is priced as it sells now.
    assert [f.price for f in changed.flights] == [364, 248, 453]
    charged = changed.payment_history[-1]
    assert (charged.payment_id, charged.amount) == (
        "credit_card_2198526",
        3 * (364 + 248 + 453) - 3 * (53 + 71 + 65),
    )
    # Changing flights takes no seats, as in the benchmark.
    assert seats(instance, "HAT023", "2024-05-26", "business") == 6


def test_a_kept_flight_keeps_its_price_and_a_changed_one_is_one_rows_change(
    instance: seahaven.Instance,
) -> None:
    found = instance.call(
        "search_direct_flight", origin="SEA", destination="JFK", date="2024-05-28"
    )
    other = next(f for f in found if f.flight_number != "HAT021")
    flights = [*K1NW8N_FLIGHTS[:2], {"flight_number": other.flight_number, "date": "2024-05-28"}]
    changed = instance.call(
        "update_reservation_flights",
        reservation_id="K1NW8N",
        cabin="basic_economy",
        flights=flights,
        payment_id="gift_card_6136092",
    )
    assert [f.price for f in changed.flights][:2] == [53, 71]
    difference = 3 * (other.prices["basic_economy"] - 65)
    assert changed.flights[2].price == other.prices["basic_economy"]
    assert methods(instance)["gift_card_6136092"] == 129.0 - difference
    updated = [
        (record.table, record.key.get("position"))
        for record in instance.change_log()
        if record.table == "reservation_flights"
    ]
    assert updated == [("reservation_flights", 2)]


@pytest.mark.parametrize(
    ("payment_id", "expected"),
    [
        (
            "certificate_2765295",
            ("CERTIFICATE_NOT_ALLOWED", "Certificate cannot be used to update reservation"),
        ),
        ("gift_card_1", ("NOT_FOUND", "Payment method not found")),
    ],
)
def test_a_change_refuses_certificates_and_unknown_payment_methods(
    instance: seahaven.Instance, payment_id: str, expected: tuple[str, str]
) -> None:
    assert (
        refusal(
            instance,
            "update_reservation_flights",
            reservation_id="K1NW8N",
            cabin="basic_economy",
            flights=K1NW8N_FLIGHTS,
            payment_id=payment_id,
        )
        == expected
    )
    assert instance.change_log() == []


def test_a_gift_card_must_cover_a_change(instance: seahaven.Instance) -> None:
    assert refusal(
        instance,
        "update_reservation_flights",
        reservation_id="K1NW8N",
        cabin="business",
        flights=K1NW8N_FLIGHTS,
        payment_id="gift_card_8020792",
    ) == ("INSUFFICIENT_BALANCE", "Gift card balance is not enough")


def test_bags_added_cost_fifty_each_and_bags_removed_cost_nothing(
    instance: seahaven.Instance,
) -> None:
    more = instance.call(
        "update_reservation_baggages",
        reservation_id="K1NW8N",
        total_baggages=2,
        nonfree_baggages=2,
        payment_id="credit_card_2198526",
    )
    assert (more.total_baggages, more.nonfree_baggages) == (2, 2)
    assert more.payment_history[-1].amount == 100
    fewer = instance.call(
        "update_reservation_baggages",
        reservation_id="K1NW8N",
        total_baggages=1,
        nonfree_baggages=1,
        payment_id="credit_card_2198526",
    )
    assert len(fewer.payment_history) == 2


def test_passengers_are_replaced_one_for_one(instance: seahaven.Instance) -> None:
    assert refusal(
        instance, "update_reservation_passengers", reservation_id="K1NW8N", passengers=ONE
    ) == ("PASSENGER_COUNT_MISMATCH", "Number of passengers does not match")
    current = instance.call("get_reservation_details", reservation_id="K1NW8N").passengers
    renamed = [p.model_dump() for p in current]
    renamed[1]["dob"] = "1986-09-13"
    instance.call("update_reservation_passengers", reservation_id="K1NW8N", passengers=renamed)
    assert [(r.table, r.op, r.key["position"]) for r in instance.change_log()] == [
        ("reservation_passengers", "update", 1)
    ]


def test_certificates_are_sent_with_the_benchmarks_ids_three_at_most(
    instance: seahaven.Instance,
) -> None:
    said = [
        instance.call("send_certificate", user_id=MOHAMED, amount=amount)
        for amount in (50, 100, 150)
    ]
    assert said[0] == f"Certificate certificate_3221322 added to user {MOHAMED} with amount 50."
    assert list(methods(instance))[-3:] == [
        "certificate_3221322",
        "certificate_3221323",
        "certificate_3221324",
    ]
    assert methods(instance)["certificate_3221324"] == 150.0
    assert refusal(instance, "send_certificate", user_id=MOHAMED, amount=1) == (
        "LIMIT_REACHED",
        "Too many certificates",
    )


def test_searches_list_bookable_flights_and_one_stop_pairs_carry_their_dates(
    instance: seahaven.Instance,
) -> None:
    direct = instance.call(
        "search_direct_flight", origin="JFK", destination="SFO", date="2024-05-26"
    )
    assert [(f.flight_number, f.date, f.status) for f in direct] == [("HAT023", None, "available")]
    assert list(direct[0].available_seats) == ["basic_economy", "economy", "business"]
    assert (
        instance.call("search_direct_flight", origin="JFK", destination="SFO", date="2024-05-10")
        == []
    )
    pairs = instance.call(
        "search_onestop_flight", origin="SFO", destination="JFK", date="2024-05-20"
    )
    assert pairs
    for first, second in pairs:
        assert first.date == "2024-05-20"
        assert first.destination == second.origin
        # A first leg landing after midnight is followed by a flight on the next day.
        next_day = "+1" in first.scheduled_arrival_time_est
        assert second.date == ("2024-05-21" if next_day else "2024-05-20")
        assert second.scheduled_departure_time_est >= first.scheduled_arrival_time_est
    assert any("+1" in first.scheduled_arrival_time_est for first, _ in pairs)


def test_status_airports_calculator_and_transfer(instance: seahaven.Instance) -> None:
    assert instance.call("get_flight_status", flight_number="HAT001", date="2024-05-01") == "landed"
    assert (
        instance.call("get_flight_status", flight_number="HAT023", date="2024-05-26") == "available"
    )
    airports = instance.call("list_all_airports")
    assert (len(airports), airports[0].iata, airports[-1].city) == (20, "SFO", "LaGuardia")
    assert instance.call("calculate", expression="(162 + 30) * 3 / 4") == "144.0"
    assert refusal(instance, "calculate", expression="2 ** x") == (
        "INVALID_EXPRESSION",
        "Invalid characters in expression",
    )
    assert refusal(instance, "calculate", expression="1 / 0") == (
        "INVALID_EXPRESSION",
        "division by zero",
    )
    assert instance.call("calculate", expression=" 2 ** -1 + 10 // 4") == "2.5"
    # The benchmark's eval would work at this for ever; here it is refused at once.
    assert refusal(instance, "calculate", expression="9 ** 9 ** 9") == (
        "INVALID_EXPRESSION",
        "int too large to convert to float",
    )
    assert refusal(instance, "calculate", expression="()")[0] == "INVALID_EXPRESSION"
    assert (
        instance.call("transfer_to_human_agents", summary="wants a human") == "Transfer successful"
    )
    assert instance.change_log() == []


def test_a_tool_called_again_prepares_none_of_its_statements_again(
    instance: seahaven.Instance,
) -> None:
    # Each statement is prepared once per episode: a second round of the read tools
    # prepares nothing (a bare "col = ?" beside an ORDER BY would be prepared every time).
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_user_details", {"user_id": MOHAMED}),
        ("get_reservation_details", {"reservation_id": "K1NW8N"}),
        ("search_direct_flight", {"origin": "JFK", "destination": "SFO", "date": "2024-05-26"}),
        ("search_onestop_flight", {"origin": "JFK", "destination": "SFO", "date": "2024-05-26"}),
        ("get_flight_status", {"flight_number": "HAT023", "date": "2024-05-26"}),
    ]
    assert prepared_on_repeat(instance, calls) == []


def test_a_creation_time_is_shown_in_est_and_worked_out_once_per_instant() -> None:
    from airline_world.times import est_from_instant, instant_from_est

    instant = "2024-05-15T20:00:00.000Z"
    assert est_from_instant(instant) == "2024-05-15T15:00:00"
    before = est_from_instant.cache_info().hits
    assert est_from_instant(instant) == "2024-05-15T15:00:00"
    assert est_from_instant.cache_info().hits == before + 1
    assert instant_from_est("2024-05-15T15:00:00") == instant
    with pytest.raises(ValueError):
        est_from_instant("not an instant")
