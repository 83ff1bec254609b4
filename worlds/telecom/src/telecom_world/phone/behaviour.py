"""How the phone behaves: tau2-bench's ``TelecomUserTools``, written to its code's behaviour.

Every function here takes the ``Phone`` objects (``phone.state``) and reads or
changes them as the benchmark's methods read or change its models, in the same
order, with the same texts; the tools in ``phone.tools`` load the phone, call
one of these, and save it. What the phone reports of itself (whether mobile
data works, a speed test, whether MMS can be sent) is worked out here once:
the tools answer with it, ``diagnostics`` stores it for graders, and it is what
the benchmark's assertion functions check.

The functions that are not tools (``turn_airplane_mode_on``,
``break_apn_settings``, ``lock_sim_card``, ...) are the ones the benchmark's
tasks run to break a phone before the conversation starts; they are here so
that a task's setup runs the same code (``telecom_world.setup``).
"""

from __future__ import annotations

from typing import Any

from telecom_world.phone.state import Apn, Phone, Vpn

__all__ = [
    "ADVICE",
    "DEFAULT_VPN",
    "NETWORK_MODES",
    "SIM_TEXTS",
    "diagnostics",
    "mobile_data_working",
    "sim_status",
    "speed_test",
    "status_bar",
]

NETWORK_MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
"""The network mode preferences a phone takes, in the benchmark's order."""

DEFAULT_VPN = Vpn(server_address="192.168.1.1", protocol="OpenVPN", server_performance="excellent")
"""The VPN a phone connects to."""

_SIGNAL_ICONS = {
    "none": "📵 No Signal",
    "poor": "📶¹ Poor",
    "fair": "📶² Fair",
    "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}
_SPEEDS = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0)}
_SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
SIM_TEXTS = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}


# --- what the phone reports ------------------------------------------------------------------


def sim_status(phone: Phone) -> str:
    """``missing`` when the SIM is out, else the SIM card's own status."""
    device = phone.device
    return "missing" if device.sim_card_missing else device.sim_card_status


def status_bar(phone: Phone) -> str:
    """The icons at the top of the screen, as the benchmark draws them."""
    device = phone.device
    indicators = []
    if device.airplane_mode:
        indicators.append("✈️ Airplane Mode")
    else:
        indicators.append(_SIGNAL_ICONS.get(device.network_signal_strength, "📵 No Signal"))
        if device.network_technology_connected != "none":
            indicators.append(device.network_technology_connected)
        if device.data_enabled and device.network_technology_connected != "none":
            indicators.append("📱 Data Enabled")
            if device.data_saver_mode:
                indicators.append("🔽 Data Saver")
        else:
            indicators.append("📵 Data Disabled")
    if device.wifi_enabled and device.wifi_connected:
        if device.wifi_ssid:
            indicators.append(f"📡 Connected to {device.wifi_ssid}")
        else:
            indicators.append("📡 Enabled")
    if device.vpn_connected:
        indicators.append("🔒 VPN Connected")
    indicators.append(f"🔋 {device.battery_level}%")
    return " | ".join(indicators)


def with_bar(text: str, phone: Phone) -> str:
    """A tool's answer followed by the status bar, as most of the phone's tools answer."""
    return f"{text}\nStatus Bar: {status_bar(phone)}"


def mobile_data_working(phone: Phone) -> bool:
    """Whether mobile data works: signal and service, roaming abroad, data on, allowance left."""
    device, around = phone.device, phone.surroundings
    if device.airplane_mode or device.network_signal_strength == "none":
        return False
    if device.network_connection_status == "no_service":
        return False
    if around.is_abroad and (not device.roaming_enabled or not around.roaming_allowed):
        return False
    if not device.data_enabled:
        return False
    return not around.mobile_data_usage_exceeded


def speed_test(phone: Phone) -> tuple[float | None, str]:
    """The download speed a speed test measures, in Mbps (``None`` with no connection),
    and its description, worked out as the benchmark works it out (and rounded as it is)."""
    if not mobile_data_working(phone):
        return None, "No Connection"
    device = phone.device
    factor = 1.0
    if device.vpn_connected and device.vpn is not None and device.vpn.server_performance == "poor":
        factor = 0.1
    if device.data_saver_mode:
        factor *= 0.2
    low, high = _SPEEDS.get(device.network_technology_connected, (0.0, 0.0))
    signal = _SIGNAL_FACTORS.get(device.network_signal_strength, 0.0)
    speed = round((low + high) / 2.0 * signal * factor, 2)
    if speed < 1:
        return speed, "Very Poor"
    if speed < 5:
        return speed, "Poor"
    if speed < 25:
        return speed, "Fair"
    if speed < 100:
        return speed, "Good"
    return speed, "Excellent"


def can_send_mms(phone: Phone) -> bool:
    """Whether the messaging app can send MMS: mobile data, 3G or better, no MMS over
    Wi-Fi calling (the carrier does not take it), an MMSC URL, and the app's permissions."""
    device = phone.device
    if not mobile_data_working(phone):
        return False
    if device.network_technology_connected == "2G":
        return False
    if device.wifi_calling_enabled and device.wifi_calling_mms_over_wifi:
        return False
    if device.apn.mmsc_url is None:
        return False
    messaging = device.apps.get("messaging")
    if messaging is None:
        return False
    return messaging.storage and messaging.sms


def diagnostics(phone: Phone) -> dict[str, Any]:
    """The ``diagnostics`` row: what the phone's own checks report of it now."""
    speed, description = speed_test(phone)
    return {
        "sim_status": sim_status(phone),
        "mobile_data_working": mobile_data_working(phone),
        "speed_mbps": speed,
        "speed_description": description,
        "can_send_mms": can_send_mms(phone),
    }


# --- the network -----------------------------------------------------------------------------


def network_search(phone: Phone) -> None:
    """Look for a network again: what the SIM, the mode preference, airplane mode, the APN
    and the line allow decides the connection, its technology and its signal."""
    device, around = phone.device, phone.surroundings
    status = sim_status(phone)
    if status == "active":
        device.network_connection_status = "connected"
        preference = device.network_mode_preference
        if preference == "4g_5g_preferred":
            five_g = around.signal.get("5G", "none")
            if five_g == "none":
                device.network_technology_connected = "4G"
                device.network_signal_strength = around.signal.get("4G", "none")
            else:
                device.network_technology_connected = "5G"
                device.network_signal_strength = five_g
        else:
            technology = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(preference, "4G")
            device.network_technology_connected = technology
            device.network_signal_strength = around.signal.get(technology, "none")
    else:
        _lose_service(phone)
    if device.airplane_mode or device.apn.apn_name == "broken" or not around.line_active:
        _lose_service(phone)


def _lose_service(phone: Phone) -> None:
    device = phone.device
    device.network_connection_status = "no_service"
    device.network_technology_connected = "none"
    device.network_signal_strength = "none"


def toggle_airplane(phone: Phone) -> bool:
    """Switch airplane mode; the radios drop or come back, and the phone searches again."""
    device = phone.device
    was_on = device.airplane_mode
    device.airplane_mode = not was_on
    if was_on:
        device.network_connection_status = "searching"
        if device.wifi_enabled:
            _drop_wifi(phone)
    else:
        _drop_wifi(phone)
        if device.vpn_connected:
            disconnect_vpn(phone)
    network_search(phone)
    return device.airplane_mode


def _drop_wifi(phone: Phone) -> None:
    device = phone.device
    device.wifi_connected = False
    device.wifi_ssid = None
    device.wifi_signal_strength = "none"


def set_network_mode(phone: Phone, mode: str) -> str | None:
    """Prefer another network mode and search again; ``None`` for a mode there is not."""
    if mode not in NETWORK_MODES:
        return None
    phone.device.network_mode_preference = mode
    network_search(phone)
    return mode


def toggle_data(phone: Phone) -> bool:
    """Switch mobile data, and search again."""
    phone.device.data_enabled = not phone.device.data_enabled
    network_search(phone)
    return phone.device.data_enabled


def toggle_roaming(phone: Phone) -> bool:
    """Switch data roaming, and search again."""
    phone.device.roaming_enabled = not phone.device.roaming_enabled
    network_search(phone)
    return phone.device.roaming_enabled


def toggle_data_saver(phone: Phone) -> bool:
    """Switch Data Saver."""
    phone.device.data_saver_mode = not phone.device.data_saver_mode
    return phone.device.data_saver_mode


def toggle_wifi(phone: Phone) -> bool | None:
    """Switch the Wi-Fi radio; ``None`` (nothing changes) in airplane mode."""
    device = phone.device
    if device.airplane_mode:
        return None
    device.wifi_enabled = not device.wifi_enabled
    if not device.wifi_enabled:
        _drop_wifi(phone)
    return device.wifi_enabled


def toggle_wifi_calling(phone: Phone) -> bool:
    """Switch Wi-Fi calling."""
    phone.device.wifi_calling_enabled = not phone.device.wifi_calling_enabled
    return phone.device.wifi_calling_enabled


def connect_vpn(phone: Phone) -> bool | None:
    """Connect the VPN; ``None`` when it is connected already."""
    device = phone.device
    if device.vpn_connected:
        return None
    device.vpn_connected = True
    device.vpn = Vpn(**vars(DEFAULT_VPN))
    return True


def disconnect_vpn(phone: Phone) -> bool:
    """Disconnect the VPN; ``False`` when there was none to disconnect."""
    device = phone.device
    if not device.vpn_connected:
        return False
    device.vpn_connected = False
    device.vpn = None
    return True


def reseat_sim(phone: Phone) -> None:
    """Take the SIM card out and put it back, and search again."""
    phone.device.sim_card_missing = False
    network_search(phone)


def reset_apn(phone: Phone) -> None:
    """Mark the APN settings to go back to the defaults at the next reboot, and search again."""
    phone.device.apn.reset_at_reboot = True
    network_search(phone)


def set_apn(phone: Phone, apn: Apn) -> None:
    """Make ``apn`` the active APN settings, and search again."""
    phone.device.apn = apn
    network_search(phone)


def reboot(phone: Phone) -> list[str]:
    """Restart the phone: the APN settings reset if they were marked to, and a new search."""
    steps = []
    if phone.device.apn.reset_at_reboot:
        steps.append("Resetting APN settings...")
        phone.device.apn = Apn()
    steps.append("Restarting network services...")
    phone.device.network_connection_status = "searching"
    network_search(phone)
    return steps


def allowed_permissions(phone: Phone, app_name: str) -> list[str] | None:
    """The permissions an app holds, by name; ``None`` for an app the phone does not have."""
    permissions = phone.device.apps.get(app_name)
    if permissions is None:
        return None
    return [name.replace("_", " ").lower() for name, held in vars(permissions).items() if held]


def grant_permission(phone: Phone, app_name: str, permission: str) -> tuple[bool, str]:
    """Give an app a permission; whether that worked, and the message saying so."""
    permissions = phone.device.apps.get(app_name)
    permission = permission.lower()
    if permissions is None:
        return False, f"App '{app_name}' not found. Cannot grant permission."
    available = list(vars(permissions))
    if permission not in available:
        return (
            False,
            f"Permission '{permission}' not tracked for app '{app_name}', available "
            f"permissions: {available}",
        )
    setattr(permissions, permission, True)
    return True, f"Permission '{permission}' granted to app '{app_name}'."


# --- what a task's setup does to the phone (not tools) ---------------------------------------


def set_user_info(phone: Phone, name: str, phone_number: str) -> None:
    """Who holds the phone, and its number."""
    phone.surroundings.name = name
    phone.surroundings.phone_number = phone_number


def set_user_location(phone: Phone, abroad: bool) -> None:
    """Whether the user is abroad."""
    phone.surroundings.is_abroad = abroad


def turn_airplane_mode_on(phone: Phone) -> None:
    """Airplane mode on, however it was."""
    if not toggle_airplane(phone):
        toggle_airplane(phone)


def turn_airplane_mode_off(phone: Phone) -> None:
    """Airplane mode off, however it was."""
    if toggle_airplane(phone):
        toggle_airplane(phone)


def unseat_sim_card(phone: Phone) -> None:
    """Take the SIM card out (``reseat_sim_card`` puts it back)."""
    phone.device.sim_card_missing = True
    network_search(phone)


def lock_sim_card(phone: Phone, mode: str) -> None:
    """Lock the SIM with its PIN or its PUK: no tool of the user's unlocks it."""
    if mode == "pin":
        phone.device.sim_card_status = "locked_pin"
    elif mode == "puk":
        phone.device.sim_card_status = "locked_puk"
    network_search(phone)


def turn_data_on(phone: Phone) -> None:
    """Mobile data on (with no new search, as the benchmark's own does)."""
    phone.device.data_enabled = True


def turn_data_off(phone: Phone) -> None:
    """Mobile data off, however it was."""
    if toggle_data(phone):
        toggle_data(phone)


def turn_roaming_on(phone: Phone) -> None:
    """Data roaming on, however it was."""
    if not toggle_roaming(phone):
        toggle_roaming(phone)


def turn_roaming_off(phone: Phone) -> None:
    """Data roaming off, however it was."""
    if toggle_roaming(phone):
        toggle_roaming(phone)


def turn_data_saver_mode_on(phone: Phone) -> None:
    """Data Saver on, however it was."""
    if not toggle_data_saver(phone):
        toggle_data_saver(phone)


def turn_data_saver_mode_off(phone: Phone) -> None:
    """Data Saver off, however it was."""
    if toggle_data_saver(phone):
        toggle_data_saver(phone)


def break_apn_settings(phone: Phone) -> None:
    """A broken APN: no service until the APN settings are reset (and the phone rebooted)."""
    phone.device.apn.apn_name = "broken"
    network_search(phone)


def break_apn_mms_setting(phone: Phone) -> None:
    """No MMSC URL: no MMS until the APN settings are reset (and the phone rebooted)."""
    phone.device.apn.mmsc_url = None


def break_vpn(phone: Phone) -> None:
    """A VPN connected to a poor server, which slows mobile data down."""
    connect_vpn(phone)
    assert phone.device.vpn is not None
    phone.device.vpn.server_performance = "poor"


def remove_app_permission(phone: Phone, app_name: str, permission: str) -> None:
    """Take a permission from an app."""
    permissions = phone.device.apps.get(app_name)
    permission = permission.lower()
    if permissions is not None and permission in vars(permissions):
        setattr(permissions, permission, False)


def set_wifi_calling(phone: Phone, enabled: bool, mms_over_wifi: bool | None = None) -> None:
    """Wi-Fi calling on or off, and MMS over Wi-Fi when it is given."""
    if phone.device.wifi_calling_enabled != enabled:
        toggle_wifi_calling(phone)
    if mms_over_wifi is not None:
        phone.device.wifi_calling_mms_over_wifi = mms_over_wifi
