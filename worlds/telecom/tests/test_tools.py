"""Each tool checks, refuses, writes and answers as tau2-bench's telecom tool of the same name;
the phone follows the carrier's records after every call; a task's setup runs as it starts.

The differential benchmark (``benchmarks/tau2_domains.py``) compares every tool with tau2-bench
itself; these tests pin the behaviours one by one, so a change shows where it broke.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from telecom_support import action, johns_phone, refusal, row, rows

import seahaven
from seahaven.pytest_plugin import prepared_on_repeat
from seahaven.scenarios import Scenario, Trial

pytestmark = pytest.mark.seahaven(fixture="initial")

STATUS_BAR = "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"


def phone(instance: seahaven.Instance, table: str = "device") -> dict[str, Any]:
    """The phone's one row of ``table``."""
    return row(instance, f"SELECT * FROM phone.{table} WHERE id = 1")


def as_user(instance: seahaven.Instance, tool: str, **arguments: Any) -> Any:
    """A call of one of the phone's tools, made as the customer."""
    with instance.acting_as("user"):
        return instance.call(tool, **arguments)


# --- the carrier's tools -------------------------------------------------------------------------


def test_customers_are_found_by_number_id_and_name(instance: seahaven.Instance) -> None:
    # A line's number finds its owner too, not only the contact number.
    assert instance.call("get_customer_by_phone", phone_number="555-123-2003").customer_id == (
        "C1001"
    )
    assert instance.call("get_customer_by_id", customer_id="C1002").full_name == "Sarah Johnson"
    found = instance.call("get_customer_by_name", full_name="sarah JOHNSON", dob="1990-11-22")
    assert [customer.customer_id for customer in found] == ["C1002"]
    assert instance.call("get_customer_by_name", full_name="Sarah Johnson", dob="1990-01-01") == []
    assert refusal(instance, "get_customer_by_phone", phone_number="555-000-0000") == (
        "NOT_FOUND",
        "Customer with phone number 555-000-0000 not found",
    )
    assert refusal(instance, "get_customer_by_id", customer_id="C9") == (
        "NOT_FOUND",
        "Customer with ID C9 not found",
    )


def test_details_by_id_tell_records_apart_by_their_first_letter(
    instance: seahaven.Instance,
) -> None:
    assert instance.call("get_details_by_id", id="L1003").status == "Suspended"
    assert instance.call("get_details_by_id", id="P1002").data_limit_gb == 15.0
    assert [item.amount for item in instance.call("get_details_by_id", id="B1001").line_items] == [
        40.0,
        65.0,
        40.0,
        15.5,
    ]
    assert refusal(instance, "get_details_by_id", id="D9") == (
        "NOT_FOUND",
        "Device with ID D9 not found",
    )
    assert refusal(instance, "get_details_by_id", id="X1") == (
        "INVALID_ID",
        "Unknown ID format or type: X1",
    )


def test_a_line_is_suspended_and_resumed_only_from_the_right_status(
    instance: seahaven.Instance,
) -> None:
    suspended = instance.call("suspend_line", customer_id="C1001", line_id="L1001", reason="trip")
    assert suspended.message == "Line suspended successfully. $5/month holding fee will apply."
    assert (suspended.line.status, suspended.line.suspension_start_date) == (
        "Suspended",
        "2025-02-25",
    )
    assert refusal(instance, "suspend_line", customer_id="C1001", line_id="L1001", reason="x") == (
        "INVALID_STATE",
        "Line must be active to suspend",
    )
    resumed = instance.call("resume_line", customer_id="C1001", line_id="L1001")
    assert (resumed.line.status, resumed.line.suspension_start_date) == ("Active", None)
    assert refusal(instance, "resume_line", customer_id="C1001", line_id="L1001") == (
        "INVALID_STATE",
        "Line must be suspended to resume",
    )
    # Someone else's line is not the customer's to change.
    assert refusal(instance, "resume_line", customer_id="C1001", line_id="L1009") == (
        "NOT_FOUND",
        "Line L1009 not found for customer C1001",
    )


def test_roaming_answers_whether_it_changed(instance: seahaven.Instance) -> None:
    assert instance.call("enable_roaming", customer_id="C1001", line_id="L1002") == (
        "Roaming was already enabled"
    )
    assert instance.call("disable_roaming", customer_id="C1001", line_id="L1002") == (
        "Roaming disabled successfully"
    )
    assert row(instance, "SELECT roaming_enabled FROM lines WHERE line_id = 'L1002'") == {
        "roaming_enabled": 0
    }


def test_refuelling_data_charges_the_draft_bill_and_answers_numbers_as_text(
    instance: seahaven.Instance,
) -> None:
    refuelled = instance.call("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)
    # The benchmark answers a plain dict, whose numbers its JSON shows as text.
    assert refuelled.model_dump() == {
        "message": "Successfully added 2.0 GB of data for line L1002 for $4.00",
        "new_data_refueling_gb": "2.0",
        "charge": "4.0",
    }
    draft = instance.call("get_details_by_id", id="B1003")
    assert draft.total_due == 4.0
    assert [item.model_dump() for item in draft.line_items] == [
        {
            "description": "Data refueling: 2.0 GB at $2.0/GB",
            "amount": 4.0,
            "date": "2025-02-25",
            "item_type": "Charge",
        }
    ]
    usage = instance.call("get_data_usage", customer_id="C1001", line_id="L1002")
    assert (usage.data_refueling_gb, usage.cycle_end_date) == ("2.0", "2025-02-28")
    assert refusal(instance, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=0) == (
        "INVALID_REQUEST",
        "Refuel amount must be positive",
    )


def test_a_customer_without_a_draft_bill_gets_one_for_next_month(
    instance: seahaven.Instance,
) -> None:
    instance.call("refuel_data", customer_id="C1002", line_id="L1004", gb_amount=1.0)
    ids = json.loads(
        row(instance, "SELECT bill_ids FROM customers WHERE customer_id = 'C1002'")["bill_ids"]
    )
    assert ids[:2] == ["B1004", "B1005"] and len(ids) == 3
    made = instance.call("get_details_by_id", id=ids[2])
    assert (made.status, made.period_start, made.period_end, made.due_date, made.total_due) == (
        "Draft",
        "2025-03-01",
        "2025-03-31",
        "2025-03-15",
        0.1,
    )


def test_bills_come_newest_first_and_a_payment_request_is_one_at_a_time(
    instance: seahaven.Instance,
) -> None:
    bills = instance.call("get_bills_for_customer", customer_id="C1001", limit=2)
    assert [bill.bill_id for bill in bills] == ["B1003", "B1002"]
    assert instance.call("send_payment_request", customer_id="C1001", bill_id="B1002") == (
        "Payment request sent to the customer for bill B1002"
    )
    assert refusal(instance, "send_payment_request", customer_id="C1001", bill_id="B1001") == (
        "INVALID_STATE",
        "A bill is already awaiting payment for this customer",
    )
    assert refusal(instance, "send_payment_request", customer_id="C1002", bill_id="B1002") == (
        "NOT_FOUND",
        "Bill B1002 not found for customer C1002",
    )


# --- the phone's tools ---------------------------------------------------------------------------


def test_the_phones_tools_answer_the_benchmarks_texts(instance: seahaven.Instance) -> None:
    assert as_user(instance, "check_status_bar") == (
        "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
    )
    assert as_user(instance, "set_network_mode_preference", mode="6g") == (
        "Failed to set network mode: '6g' is not a valid option. Please use one of: "
        "4g_5g_preferred, 4g_only, 3g_only, 2g_only\n"
        "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
    )
    assert as_user(instance, "set_network_mode_preference", mode="2g_only") == (
        "Preferred Network Mode set to: 2g_only\n"
        "Status Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔋 80%"
    )
    assert as_user(instance, "run_speed_test") == (
        "Speed Test Result: 0.05 Mbps (Very Poor). Connection is very slow. Basic web browsing "
        "might be difficult."
    )
    assert as_user(instance, "can_send_mms") == "Your messaging app cannot send MMS messages."
    assert as_user(instance, "grant_app_permission", app_name="messaging", permission="Camera") == (
        "Error. Permission 'camera' not tracked for app 'messaging', available permissions: "
        "['sms', 'storage', 'phone', 'network']\n"
        "Status Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔋 80%"
    )
    assert as_user(instance, "check_app_status", app_name="browser") == (
        "Status for App: browser\n - Permissions Granted:\n   - storage\n   - network"
    )


def test_airplane_mode_cuts_every_radio_and_blocks_wifi(instance: seahaven.Instance) -> None:
    as_user(instance, "toggle_wifi")
    as_user(instance, "connect_vpn")
    assert as_user(instance, "toggle_airplane_mode") == (
        "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    )
    device = phone(instance)
    assert (device["network_connection_status"], device["vpn_connected"]) == ("no_service", 0)
    assert as_user(instance, "toggle_wifi") == (
        "Cannot change Wi-Fi settings while Airplane Mode is ON.\n"
        "Status Bar: ✈️ Airplane Mode | 🔋 80%"
    )
    assert as_user(instance, "toggle_airplane_mode").startswith("Airplane Mode is now OFF.")
    assert phone(instance)["network_connection_status"] == "connected"
    assert instance.inspect().one("SELECT * FROM phone.vpn_details") is None


def test_the_vpn_shows_its_details_as_the_benchmark_prints_them(
    instance: seahaven.Instance,
) -> None:
    assert as_user(instance, "connect_vpn").startswith("VPN connected successfully.")
    assert as_user(instance, "connect_vpn") == "VPN already connected."
    assert as_user(instance, "check_vpn_status") == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': "
        "'OpenVPN', 'server_performance': <PerformanceLevel.EXCELLENT: 'excellent'>}"
    )
    as_user(instance, "disconnect_vpn")
    assert as_user(instance, "disconnect_vpn").startswith("No active VPN connection to disconnect.")


def test_the_apn_resets_at_the_next_reboot(instance: seahaven.Instance) -> None:
    as_user(instance, "set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": None})
    assert phone(instance, "diagnostics")["can_send_mms"] == 0
    assert as_user(instance, "reset_apn_settings").startswith("APN settings will reset at reboot.")
    assert phone(instance, "apn_settings")["mmsc_url"] is None
    assert as_user(instance, "reboot_device") == (
        "Resetting APN settings...\nRestarting network services...\n" + STATUS_BAR
    )
    assert phone(instance, "apn_settings")["mmsc_url"] == "http://mms.carrier.com/mms/wapenc"
    assert phone(instance, "diagnostics")["can_send_mms"] == 1
    # A key the benchmark's APN model does not know is refused, as its model refuses it.
    assert refusal(instance, "set_apn_settings", apn_settings={"apn": "x"})[0] == "INVALID_INPUT"


def test_a_tool_that_changes_nothing_writes_nothing(instance: seahaven.Instance) -> None:
    for tool in ("check_status_bar", "check_network_status", "run_speed_test", "can_send_mms"):
        as_user(instance, tool)
    as_user(instance, "toggle_data_saver_mode")
    records = instance.change_log()
    assert [(record.world, record.table, record.actor) for record in records] == [
        ("phone", "device", "user"),
        ("phone", "diagnostics", "user"),
    ]


def test_the_diagnostics_row_is_what_the_phones_own_checks_report() -> None:
    """Every combination of network, signal, Data Saver and VPN a phone can be put in."""
    from telecom_world.phone.behaviour import (
        can_send_mms,
        diagnostics,
        mobile_data_working,
        speed_test,
    )
    from telecom_world.phone.state import Phone, Vpn

    seen = set()
    for technology in ("2G", "3G", "4G", "5G"):
        for signal in ("none", "poor", "fair", "good", "excellent"):
            for saver in (False, True):
                for vpn in (None, "poor", "excellent"):
                    device = Phone()
                    device.device.network_technology_connected = technology
                    device.device.network_signal_strength = signal
                    device.device.data_saver_mode = saver
                    if vpn is not None:
                        device.device.vpn_connected = True
                        device.device.vpn = Vpn("1.1.1.1", "OpenVPN", vpn)
                    report = diagnostics(device)
                    speed, description = speed_test(device)
                    assert report["speed_mbps"] == speed
                    assert report["speed_description"] == description
                    assert report["mobile_data_working"] == mobile_data_working(device)
                    assert report["can_send_mms"] == can_send_mms(device)
                    seen.add(description)
    assert seen == {"No Connection", "Very Poor", "Poor", "Fair", "Good", "Excellent"}


# --- keeping the phone in step, and a task's setup -----------------------------------------------


@pytest.mark.seahaven(
    fixture="initial",
    startup=johns_phone(
        action(
            "assistant",
            "suspend_line_for_overdue_bill",
            customer_id="C1001",
            line_id="L1002",
            new_bill_id="B1234321",
            contract_ended=False,
        )
    ),
)
def test_a_suspended_line_loses_service_and_a_paid_bill_reaches_the_carrier(
    instance: seahaven.Instance,
) -> None:
    # The setup's own writes are the starting state, not the episode's.
    assert instance.change_log() == []
    assert phone(instance, "surroundings")["line_active"] == 0
    overdue = instance.call("get_details_by_id", id="B1234321")
    assert (overdue.status, overdue.total_due, overdue.period_start) == (
        "Overdue",
        65.0,
        "2025-01-01",
    )
    # The benchmark's phone looks at the line only when it searches for a network again:
    # until then it still shows service, and a reboot (a search) finds none.
    assert phone(instance)["network_connection_status"] == "connected"
    as_user(instance, "reboot_device")
    assert phone(instance)["network_connection_status"] == "no_service"

    instance.call("send_payment_request", customer_id="C1001", bill_id="B1234321")
    assert phone(instance, "payment_request") == {
        "id": 1,
        "bill_id": "B1234321",
        "amount_due": 65.0,
        "paid": 0,
    }
    assert as_user(instance, "make_payment") == (
        "Payment of 65.0 USD has been made for bill B1234321."
    )
    assert row(instance, "SELECT status FROM bills WHERE bill_id = 'B1234321'") == {
        "status": "Paid"
    }
    assert instance.inspect().one("SELECT * FROM phone.payment_request") is None
    instance.call("resume_line", customer_id="C1001", line_id="L1002")
    assert phone(instance, "surroundings")["line_active"] == 1
    assert as_user(instance, "reboot_device").endswith(STATUS_BAR)
    # Who did what: the payment's effect on the bill is the user's, the line's on the phone
    # the agent's.
    changes = {(record.world, record.table, record.actor) for record in instance.change_log()}
    assert ("main", "bills", "user") in changes
    assert ("phone", "surroundings", "agent") in changes


@pytest.mark.seahaven(
    fixture="initial",
    startup=johns_phone(
        action("user", "set_user_location", abroad=True),
        action("user", "turn_roaming_off"),
    ),
)
def test_abroad_mobile_data_needs_roaming_on_the_phone_and_on_the_line(
    instance: seahaven.Instance,
) -> None:
    assert phone(instance, "diagnostics")["mobile_data_working"] == 0
    as_user(instance, "toggle_roaming")
    assert phone(instance, "diagnostics")["mobile_data_working"] == 1
    instance.call("disable_roaming", customer_id="C1001", line_id="L1002")
    assert phone(instance, "surroundings")["roaming_allowed"] == 0
    assert as_user(instance, "run_speed_test") == "Speed test failed: No Connection."


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([action("user", "break_everything")], "the user side has no function 'break_everything'"),
        ([action("phone", "turn_data_off")], "env_type is 'user' or 'assistant'"),
        ([action("user", "lock_sim_card", mode="pin", extra=1)], "lock_sim_card does not take"),
        ([{"func_name": "turn_data_off", "env": "user"}], "has keys ['env']"),
        (
            [action("assistant", "resume_line", customer_id="C1001", line_id="L1001")],
            "resume_line was refused: Line must be suspended to resume",
        ),
    ],
)
def test_a_setup_that_cannot_run_is_the_authors_mistake(
    world: seahaven.World, actions: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("initial", startup={"initialization_actions": actions})
    assert message in str(raised.value)


def test_the_agent_never_gets_the_phones_tools(world: seahaven.World) -> None:
    from telecom_world.phone.tools import TOOL_NAMES

    scenario = Scenario(
        id="phone-is-the-users",
        world=world,
        instructions="Help the customer.",
        start={"fixture": "initial", "startup": johns_phone()},
        user={
            "instructions": "You are John.",
            "tools": list(TOOL_NAMES),
            "script": [{"reply": "Hi."}],
        },
        grader="submitted",
    )
    with Trial(scenario, seed=1) as trial:
        names = [tool["name"] for tool in trial.tools()]
        assert "get_customer_by_phone" in names and "message_user" in names
        assert not set(TOOL_NAMES) & set(names)
        with pytest.raises(seahaven.ToolError):
            trial.call("toggle_roaming")
        assert rows(trial.instance, "SELECT roaming_enabled FROM phone.device") == [
            {"roaming_enabled": 0}
        ]


def test_a_tool_called_again_prepares_none_of_its_statements_again(
    instance: seahaven.Instance,
) -> None:
    # Each statement is prepared once per episode: a second round of the read tools
    # prepares nothing (a bare "col = ?" beside an ORDER BY would be prepared every time).
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_customer_by_phone", {"phone_number": "555-123-2003"}),
        ("get_customer_by_id", {"customer_id": "C1002"}),
        ("get_customer_by_name", {"full_name": "Sarah Johnson", "dob": "1990-11-22"}),
        ("get_details_by_id", {"id": "L1003"}),
        ("get_bills_for_customer", {"customer_id": "C1001", "limit": 2}),
    ]
    assert prepared_on_repeat(instance, calls) == []
