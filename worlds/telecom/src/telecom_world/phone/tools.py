"""The phone's tools: tau2-bench's 30 telecom user tools, with its names, arguments and texts.

Each one loads the phone, does what the benchmark's tool does (``behaviour``),
saves what changed and answers the benchmark's text. None of them refuses: the
benchmark's user tools answer every request with a sentence, a failed one
included ("Cannot change Wi-Fi settings while Airplane Mode is ON."). Only an
argument of the wrong shape is refused, as ``INVALID_INPUT``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field

import seahaven
from telecom_world.phone import behaviour as phone_does
from telecom_world.phone.behaviour import with_bar
from telecom_world.phone.state import Apn, Phone
from telecom_world.phone.store import load, save
from telecom_world.phone.world import world

__all__ = ["TOOL_NAMES", "ApnSettings"]

T = TypeVar("T")

AppName = Annotated[str, Field(description="The app's name, such as 'messaging' or 'browser'.")]


def _act(ctx: seahaven.Ctx, does: Callable[[Phone], T]) -> T:
    """Load the phone, let ``does`` read or change it, save what changed, return its answer."""
    phone = load(ctx.db)
    answer = does(phone)
    save(ctx.db, phone)
    return answer


def _on_off(value: bool) -> str:
    return "ON" if value else "OFF"


# --- status and network ----------------------------------------------------------------------


@world.tool
def check_status_bar(ctx: seahaven.Ctx) -> str:
    """What the status bar at the top of your screen shows: signal, network type, mobile
    data (on, off, Data Saver), Wi-Fi, VPN and battery."""
    return _act(ctx, lambda phone: f"Status Bar: {phone_does.status_bar(phone)}")


@world.tool
def check_network_status(ctx: seahaven.Ctx) -> str:
    """Your phone's connection to cellular networks and Wi-Fi: airplane mode, SIM, signal,
    network type, whether mobile data and data roaming are on."""

    def report(phone: Phone) -> str:
        device = phone.device
        lines = [
            f"Airplane Mode: {_on_off(device.airplane_mode)}",
            f"SIM Card Status: {phone_does.sim_status(phone)}",
            f"Cellular Connection: {device.network_connection_status}",
            f"Cellular Signal: {device.network_signal_strength}",
            f"Cellular Network Type: {device.network_technology_connected}",
            f"Mobile Data Enabled: {'Yes' if device.data_enabled else 'No'}",
            f"Data Roaming Enabled: {'Yes' if device.roaming_enabled else 'No'}",
            f"Wi-Fi Radio: {_on_off(device.wifi_enabled)}",
            f"Wi-Fi Connected: {'Yes' if device.wifi_connected else 'No'}",
        ]
        if device.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {device.wifi_ssid}")
        return "\n".join(lines)

    return _act(ctx, report)


@world.tool
def check_network_mode_preference(ctx: seahaven.Ctx) -> str:
    """The kind of cellular network your phone prefers."""
    return _act(
        ctx, lambda phone: f"Network Mode Preference: {phone.device.network_mode_preference}"
    )


@world.tool
def set_network_mode_preference(
    ctx: seahaven.Ctx,
    mode: Annotated[
        str,
        Field(description="One of 4g_5g_preferred, 4g_only, 3g_only or 2g_only."),
    ],
) -> str:
    """Choose the kind of cellular network your phone prefers (5G and 4G are faster, and
    use more battery); the phone looks for a network again."""

    def choose(phone: Phone) -> str:
        chosen = phone_does.set_network_mode(phone, mode)
        if chosen is None:
            return with_bar(
                f"Failed to set network mode: '{mode}' is not a valid option. Please use one "
                f"of: {', '.join(phone_does.NETWORK_MODES)}",
                phone,
            )
        return with_bar(f"Preferred Network Mode set to: {chosen}", phone)

    return _act(ctx, choose)


@world.tool
def run_speed_test(ctx: seahaven.Ctx) -> str:
    """Measure your mobile internet's download speed, and what it is good enough for."""

    def measure(phone: Phone) -> str:
        speed, description = phone_does.speed_test(phone)
        if speed is None:
            return f"Speed test failed: {description or 'Could not determine speed'}."
        advice = phone_does.ADVICE.get(description, "")
        return f"Speed Test Result: {speed:.2f} Mbps ({description}). {advice}"

    return _act(ctx, measure)


@world.tool
def toggle_airplane_mode(ctx: seahaven.Ctx) -> str:
    """Turn airplane mode on or off. On, it cuts every radio: cellular, Wi-Fi and Bluetooth."""
    return _act(
        ctx,
        lambda phone: with_bar(
            f"Airplane Mode is now {_on_off(phone_does.toggle_airplane(phone))}.", phone
        ),
    )


# --- SIM -------------------------------------------------------------------------------------


@world.tool
def check_sim_status(ctx: seahaven.Ctx) -> str:
    """Whether your SIM card works: active, missing, or locked with a PIN or a PUK."""
    return _act(ctx, lambda phone: phone_does.SIM_TEXTS[phone_does.sim_status(phone)])


@world.tool
def reseat_sim_card(ctx: seahaven.Ctx) -> str:
    """Take the SIM card out and put it back in, which can fix a SIM the phone does not see."""

    def reseat(phone: Phone) -> str:
        phone_does.reseat_sim(phone)
        return with_bar("SIM card re-seated successfully.", phone)

    return _act(ctx, reseat)


# --- mobile data and roaming -----------------------------------------------------------------


@world.tool
def toggle_data(ctx: seahaven.Ctx) -> str:
    """Turn mobile data on or off: whether the phone uses the cellular network for the
    internet when there is no Wi-Fi."""
    return _act(
        ctx,
        lambda phone: with_bar(
            f"Mobile Data is now {_on_off(phone_does.toggle_data(phone))}.", phone
        ),
    )


@world.tool
def toggle_roaming(ctx: seahaven.Ctx) -> str:
    """Turn data roaming on or off: on, the phone may use mobile data on other carriers'
    networks, abroad."""
    return _act(
        ctx,
        lambda phone: with_bar(
            f"Data Roaming is now {_on_off(phone_does.toggle_roaming(phone))}.", phone
        ),
    )


@world.tool
def check_data_restriction_status(ctx: seahaven.Ctx) -> str:
    """Whether a feature that limits data use is on: Data Saver."""
    return _act(
        ctx,
        lambda phone: (
            "Data Saver mode is ON (limits data usage)."
            if phone.device.data_saver_mode
            else "Data Saver mode is OFF."
        ),
    )


@world.tool
def toggle_data_saver_mode(ctx: seahaven.Ctx) -> str:
    """Turn Data Saver on or off. On, it uses less data, and the connection may be slower."""
    return _act(
        ctx,
        lambda phone: with_bar(
            f"Data Saver Mode is now {_on_off(phone_does.toggle_data_saver(phone))}.", phone
        ),
    )


# --- APN -------------------------------------------------------------------------------------


class ApnSettings(BaseModel):
    """APN settings to make active; a field left out takes its default."""

    # As the benchmark's model: lax (1 is a port, "true" a flag), and no key it does not know.
    model_config = ConfigDict(extra="forbid", strict=False)

    apn_name: Annotated[str, Field(pattern="^(internet|broken)$")] = Field(
        default="internet", description="The APN's name: internet."
    )
    reset_at_reboot: bool = Field(
        default=False, description="Whether the settings go back to the defaults at reboot."
    )
    mms_apn: str | None = Field(default="mms", description="The APN for MMS.")
    mmsc_url: str | None = Field(
        default="http://mms.carrier.com/mms/wapenc",
        description="The MMS centre's URL, which picture messages need.",
    )
    mms_proxy: str | None = Field(default=None, description="The MMS proxy, if any.")
    mms_port: int | None = Field(default=None, description="The MMS proxy's port, if any.")


@world.tool
def check_apn_settings(ctx: seahaven.Ctx) -> str:
    """The APN settings your phone connects to mobile data with: the APN's name and the MMS
    centre's URL picture messages use."""

    def show(phone: Phone) -> str:
        apn = phone.device.apn
        return (
            f"Current APN Name: {apn.apn_name or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {apn.mmsc_url or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    return _act(ctx, show)


@world.tool
def set_apn_settings(ctx: seahaven.Ctx, apn_settings: ApnSettings) -> str:
    """Make these APN settings the phone's; it looks for a network again."""

    def apply(phone: Phone) -> str:
        phone_does.set_apn(phone, Apn(**apn_settings.model_dump()))
        return with_bar(f"APN settings set to: {apn_settings.apn_name}", phone)

    return _act(ctx, apply)


@world.tool
def reset_apn_settings(ctx: seahaven.Ctx) -> str:
    """Put the APN settings back to the defaults, which happens at the next reboot."""

    def reset(phone: Phone) -> str:
        phone_does.reset_apn(phone)
        return with_bar("APN settings will reset at reboot.", phone)

    return _act(ctx, reset)


# --- Wi-Fi and Wi-Fi calling -----------------------------------------------------------------


@world.tool
def check_wifi_status(ctx: seahaven.Ctx) -> str:
    """Whether Wi-Fi is on, the network it is connected to, and its signal."""

    def show(phone: Phone) -> str:
        device = phone.device
        if not device.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if device.wifi_connected:
            return (
                f"Wi-Fi is ON and connected to '{device.wifi_ssid}'. Signal strength: "
                f"{device.wifi_signal_strength}."
            )
        return "Wi-Fi is ON but not connected to any network."

    return _act(ctx, show)


@world.tool
def toggle_wifi(ctx: seahaven.Ctx) -> str:
    """Turn the Wi-Fi radio on or off."""

    def toggle(phone: Phone) -> str:
        state = phone_does.toggle_wifi(phone)
        if state is None:
            return with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.", phone)
        return with_bar(f"Wi-Fi is now {_on_off(state)}.", phone)

    return _act(ctx, toggle)


@world.tool
def check_wifi_calling_status(ctx: seahaven.Ctx) -> str:
    """Whether Wi-Fi calling (calls over Wi-Fi instead of the cellular network) is on."""
    return _act(
        ctx,
        lambda phone: (
            f"Wi-Fi Calling is currently turned {_on_off(phone.device.wifi_calling_enabled)}."
        ),
    )


@world.tool
def toggle_wifi_calling(ctx: seahaven.Ctx) -> str:
    """Turn Wi-Fi calling on or off; it helps where the cellular signal is weak."""
    return _act(
        ctx,
        lambda phone: with_bar(
            f"Wi-Fi Calling is now {_on_off(phone_does.toggle_wifi_calling(phone))}.", phone
        ),
    )


# --- VPN -------------------------------------------------------------------------------------


def _vpn_details_text(phone: Phone) -> str:
    """The VPN's details as the benchmark prints them: a Python dict, its enum shown as such."""
    vpn = phone.device.vpn
    assert vpn is not None
    performance = vpn.server_performance
    return (
        f"{{'server_address': {vpn.server_address!r}, 'protocol': {vpn.protocol!r}, "
        f"'server_performance': <PerformanceLevel.{performance.upper()}: {performance!r}>}}"
    )


@world.tool
def check_vpn_status(ctx: seahaven.Ctx) -> str:
    """Whether a VPN is on and connected, and its connection's details."""

    def show(phone: Phone) -> str:
        device = phone.device
        if device.vpn_connected:
            if device.vpn is not None:
                return f"VPN is ON and connected. Details: {_vpn_details_text(phone)}"
            return "VPN is ON and connected (no specific details available)."
        if device.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    return _act(ctx, show)


@world.tool
def connect_vpn(ctx: seahaven.Ctx) -> str:
    """Connect to your VPN."""

    def connect(phone: Phone) -> str:
        connected = phone_does.connect_vpn(phone)
        if connected is None:
            return "VPN already connected."
        return with_bar("VPN connected successfully.", phone)

    return _act(ctx, connect)


@world.tool
def disconnect_vpn(ctx: seahaven.Ctx) -> str:
    """Disconnect the VPN, so traffic no longer goes through its server (which can change
    your speed, and what you can reach)."""

    def disconnect(phone: Phone) -> str:
        done = phone_does.disconnect_vpn(phone)
        text = (
            "VPN disconnected successfully." if done else "No active VPN connection to disconnect."
        )
        return with_bar(text, phone)

    return _act(ctx, disconnect)


# --- apps ------------------------------------------------------------------------------------


@world.tool
def check_installed_apps(ctx: seahaven.Ctx) -> str:
    """The apps installed on your phone."""
    return _act(
        ctx,
        lambda phone: (
            "The following apps are installed on the phone: " + ", ".join(phone.device.apps)
        ),
    )


@world.tool
def check_app_status(ctx: seahaven.Ctx, app_name: AppName) -> str:
    """One app's details: the permissions it has."""

    def show(phone: Phone) -> str:
        allowed = phone_does.allowed_permissions(phone, app_name)
        if allowed is None:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        if not allowed:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {permission}" for permission in allowed)
        return "\n".join(lines)

    return _act(ctx, show)


@world.tool
def check_app_permissions(ctx: seahaven.Ctx, app_name: AppName) -> str:
    """The permissions an app has (storage, SMS, phone, network)."""

    def show(phone: Phone) -> str:
        allowed = phone_does.allowed_permissions(phone, app_name)
        if allowed is None:
            return f"App '{app_name}' not found on this phone."
        if not allowed:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(allowed)}."

    return _act(ctx, show)


@world.tool
def grant_app_permission(
    ctx: seahaven.Ctx,
    app_name: AppName,
    permission: Annotated[
        str, Field(description="The permission, in lower case: sms, storage, phone or network.")
    ],
) -> str:
    """Give an app a permission it needs to work, such as storage or SMS."""

    def grant(phone: Phone) -> str:
        done, message = phone_does.grant_permission(phone, app_name, permission)
        return with_bar(f"{'Success. ' if done else 'Error. '}{message}", phone)

    return _act(ctx, grant)


@world.tool
def can_send_mms(ctx: seahaven.Ctx) -> str:
    """Whether your messaging app can send MMS (picture) messages."""
    return _act(
        ctx,
        lambda phone: (
            "Your messaging app can send MMS messages."
            if phone_does.can_send_mms(phone)
            else "Your messaging app cannot send MMS messages."
        ),
    )


# --- the device ------------------------------------------------------------------------------


@world.tool
def reboot_device(ctx: seahaven.Ctx) -> str:
    """Restart the phone, which clears many passing glitches by starting every service and
    connection again."""

    def restart(phone: Phone) -> str:
        return with_bar("\n".join(phone_does.reboot(phone)), phone)

    return _act(ctx, restart)


# --- paying the carrier ----------------------------------------------------------------------


@world.tool
def check_payment_request(ctx: seahaven.Ctx) -> str:
    """Whether the carrier has sent you a request to pay a bill."""

    def show(phone: Phone) -> str:
        request = phone.surroundings.payment_request
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request.bill_id} of {request.amount_due} USD."

    return _act(ctx, show)


@world.tool
def make_payment(ctx: seahaven.Ctx) -> str:
    """Pay the bill the carrier asked you to pay."""

    def pay(phone: Phone) -> str:
        request = phone.surroundings.payment_request
        if request is None:
            return "You do not have a payment request."
        request.paid = True
        return f"Payment of {request.amount_due} USD has been made for bill {request.bill_id}."

    return _act(ctx, pay)


TOOL_NAMES: tuple[str, ...] = tuple(world.tools)
"""Every tool of the phone, in the benchmark's order: the user's tools in a scenario."""
