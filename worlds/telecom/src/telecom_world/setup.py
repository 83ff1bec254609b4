"""A task's setup: tau2-bench's ``initialization_actions``, run as the instance starts.

Every telecom task breaks something before the conversation starts: it tells the
phone whose it is, puts it abroad, turns its roaming or its data off, locks its
SIM, suspends the line for an unpaid bill. The benchmark writes that as a list
of calls, each on the user's side (the phone) or the agent's (the carrier), to
tools and to functions that are not tools (``break_apn_settings``,
``suspend_line_for_overdue_bill``), and syncs the two sides after each.

Here the list is the startup keyword ``initialization_actions``, in the
benchmark's own form (``env_type``, ``func_name``, ``arguments``), and the
startup hook below runs it with the same code the tools run, syncing after each
action. What it writes is the episode's starting state, not part of the
change log. A call it does not know, or one whose arguments do not fit, is the
scenario author's mistake: a ``WorldBug`` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import seahaven
from telecom_world import store
from telecom_world.errors import InvalidState
from telecom_world.phone import behaviour as phone_does
from telecom_world.phone.state import Phone
from telecom_world.phone.store import load, save
from telecom_world.sync import sync
from telecom_world.times import today
from telecom_world.tools import billing, lines
from telecom_world.world import TelecomWorlds, world

__all__ = ["ASSISTANT_FUNCTIONS", "USER_FUNCTIONS", "run_initialization"]

USER_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "set_user_info": phone_does.set_user_info,
    "set_user_location": phone_does.set_user_location,
    "simulate_network_search": phone_does.network_search,
    "turn_airplane_mode_on": phone_does.turn_airplane_mode_on,
    "turn_airplane_mode_off": phone_does.turn_airplane_mode_off,
    "unseat_sim_card": phone_does.unseat_sim_card,
    "lock_sim_card": phone_does.lock_sim_card,
    "turn_data_on": phone_does.turn_data_on,
    "turn_data_off": phone_does.turn_data_off,
    "turn_roaming_on": phone_does.turn_roaming_on,
    "turn_roaming_off": phone_does.turn_roaming_off,
    "turn_data_saver_mode_on": phone_does.turn_data_saver_mode_on,
    "turn_data_saver_mode_off": phone_does.turn_data_saver_mode_off,
    "break_apn_settings": phone_does.break_apn_settings,
    "break_apn_mms_setting": phone_does.break_apn_mms_setting,
    "break_vpn": phone_does.break_vpn,
    "remove_app_permission": phone_does.remove_app_permission,
    "set_wifi_calling": phone_does.set_wifi_calling,
    # Tools of the phone a setup may call too, by the tool's name.
    "set_network_mode_preference": phone_does.set_network_mode,
    "toggle_airplane_mode": phone_does.toggle_airplane,
    "toggle_data": phone_does.toggle_data,
    "toggle_roaming": phone_does.toggle_roaming,
    "toggle_data_saver_mode": phone_does.toggle_data_saver,
    "toggle_wifi": phone_does.toggle_wifi,
    "toggle_wifi_calling": phone_does.toggle_wifi_calling,
    "connect_vpn": phone_does.connect_vpn,
    "disconnect_vpn": phone_does.disconnect_vpn,
    "reseat_sim_card": phone_does.reseat_sim,
    "reset_apn_settings": phone_does.reset_apn,
    "reboot_device": phone_does.reboot,
    "grant_app_permission": phone_does.grant_permission,
}
"""What a setup may do on the phone, by the benchmark's name: each takes the ``Phone``."""


def set_data_usage(ctx: seahaven.Ctx, customer_id: str, line_id: str, data_used_gb: float) -> str:
    """Set the data a line has used this cycle (a setup's; not a tool)."""
    store.target_line(ctx.db, customer_id, line_id)
    ctx.db.execute("UPDATE lines SET data_used_gb = ? WHERE line_id = ?", data_used_gb, line_id)
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


def suspend_line_for_overdue_bill(
    ctx: seahaven.Ctx, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
) -> str:
    """Suspend an active line for last month's unpaid bill, which it adds as overdue; with
    ``contract_ended``, the line's contract ended last month too (a setup's; not a tool)."""
    line = store.line(ctx.db, line_id)
    if line["status"] != "Active":
        raise InvalidState("Line must be active to suspend for unpaid bill")
    plan = store.plan(ctx.db, line["plan_id"])
    amount = plan["price_per_month"]
    if amount <= 0:
        raise InvalidState("Amount must be positive for overdue bill")
    owner = store.customer(ctx.db, customer_id)
    bill_ids = json.loads(owner["bill_ids"])
    if any(store.bill(ctx.db, bill_id)["status"] == "Overdue" for bill_id in bill_ids):
        raise InvalidState("Customer already has an overdue bill")
    now = today(ctx)
    last_month_end = now.replace(day=1) - timedelta(days=1)
    last_month_start = last_month_end.replace(day=1)
    ctx.db.execute(
        "INSERT INTO bills (bill_id, customer_id, period_start, period_end, issue_date,"
        " total_due, due_date, status, position) VALUES (?, ?, ?, ?, ?, ?, ?, 'Overdue',"
        " (SELECT COALESCE(MAX(position), -1) + 1 FROM bills))",
        new_bill_id,
        customer_id,
        last_month_start.isoformat(),
        last_month_end.isoformat(),
        last_month_start.isoformat(),
        0.0 + amount,
        (last_month_start + timedelta(days=14)).isoformat(),
    )
    ctx.db.execute(
        "INSERT INTO bill_line_items (bill_id, position, description, amount, date, item_type)"
        " VALUES (?, 0, ?, ?, ?, ?)",
        new_bill_id,
        f"Charge for line {line_id}",
        amount,
        now.isoformat(),
        "Charge" if amount > 0 else "Credit",
    )
    ctx.db.execute(
        "UPDATE customers SET bill_ids = ? WHERE customer_id = ?",
        json.dumps([*bill_ids, new_bill_id], separators=(",", ":")),
        customer_id,
    )
    ctx.db.execute(
        "UPDATE lines SET status = 'Suspended', suspension_start_date = ?,"
        " contract_end_date = CASE WHEN ? THEN ? ELSE contract_end_date END WHERE line_id = ?",
        now.isoformat(),
        contract_ended,
        last_month_end.isoformat(),
        line_id,
    )
    return (
        f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"
    )


ASSISTANT_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "set_data_usage": set_data_usage,
    "suspend_line_for_overdue_bill": suspend_line_for_overdue_bill,
    # Tools of the carrier a setup may call too, by the tool's name.
    "enable_roaming": lines.enable_roaming,
    "disable_roaming": lines.disable_roaming,
    "suspend_line": lines.suspend_line,
    "resume_line": lines.resume_line,
    "refuel_data": lines.refuel_data,
    "send_payment_request": billing.send_payment_request,
}
"""What a setup may do on the carrier's side, by the benchmark's name: each takes the context."""


def _action(index: int, action: Any) -> tuple[str, str, dict[str, Any]]:
    """One action of the list, checked: its side, its function's name, its arguments."""
    where = f"initialization_actions[{index}]"
    if not isinstance(action, Mapping):
        raise seahaven.WorldBug(f"{where} is not a mapping of env_type, func_name, arguments")
    unknown = sorted(set(action) - {"env_type", "func_name", "arguments"})
    if unknown:
        raise seahaven.WorldBug(
            f"{where} has keys {unknown}; it takes env_type, func_name, arguments"
        )
    side, name = action.get("env_type"), action.get("func_name")
    arguments = action.get("arguments") or {}
    known = {"user": USER_FUNCTIONS, "assistant": ASSISTANT_FUNCTIONS}.get(str(side))
    if known is None:
        raise seahaven.WorldBug(f"{where}: env_type is 'user' or 'assistant', not {side!r}")
    if name not in known:
        raise seahaven.WorldBug(
            f"{where}: the {side} side has no function {name!r}; it has {', '.join(known)}"
        )
    if not isinstance(arguments, Mapping) or not all(isinstance(key, str) for key in arguments):
        raise seahaven.WorldBug(f"{where}: arguments is a mapping of names to values")
    return str(side), str(name), dict(arguments)


def run_initialization(ctx: seahaven.Ctx[TelecomWorlds], actions: Sequence[Any]) -> None:
    """Run a task's initialization actions in order, syncing the two sides after each."""
    phone_db = ctx.worlds.phone.db
    for index, action in enumerate(actions):
        side, name, arguments = _action(index, action)
        try:
            if side == "user":
                phone: Phone = load(phone_db)
                USER_FUNCTIONS[name](phone, **arguments)
                save(phone_db, phone)
            else:
                ASSISTANT_FUNCTIONS[name](ctx, **arguments)
        except TypeError as error:
            raise seahaven.WorldBug(
                f"initialization_actions[{index}]: {name} does not take {arguments}: {error}"
            ) from None
        except seahaven.ToolError as error:
            raise seahaven.WorldBug(
                f"initialization_actions[{index}]: {name} was refused: {error.message}"
            ) from None
        sync(ctx.db, phone_db)
    sync(ctx.db, phone_db)


@world.instance_startup
def initialize(
    ctx: seahaven.Ctx[TelecomWorlds], *, initialization_actions: Sequence[Any] = ()
) -> None:
    """Run a task's setup (``initialization_actions``, the benchmark's list), if it has one."""
    if isinstance(initialization_actions, str | bytes) or not isinstance(
        initialization_actions, Sequence
    ):
        raise seahaven.WorldBug(
            "startup initialization_actions is a list of {env_type, func_name, arguments}"
        )
    if initialization_actions:
        run_initialization(ctx, initialization_actions)
