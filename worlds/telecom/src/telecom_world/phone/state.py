"""The phone's state as Python objects: tau2-bench's phone models, with their defaults.

``telecom_world.phone.store`` reads them from the phone's store and writes them
back; ``telecom_world.phone.behaviour`` changes them as the benchmark's tools do.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "APPS",
    "DEFAULT_SIGNALS",
    "Apn",
    "Device",
    "PaymentRequest",
    "Permissions",
    "Phone",
    "Surroundings",
    "Vpn",
]


@dataclass
class Apn:
    """The active APN settings (tau2-bench's ``APNSettings`` and its defaults)."""

    apn_name: str = "internet"
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


@dataclass
class Vpn:
    """The VPN connection's details (``VpnDetails``)."""

    server_address: str | None = None
    protocol: str | None = None
    server_performance: str = "unknown"


@dataclass
class Permissions:
    """What one app may do (``AppPermissions``)."""

    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


APPS: dict[str, Permissions] = {
    "messaging": Permissions(sms=True, storage=True, phone=True),
    "browser": Permissions(network=True, storage=True),
}
"""The apps a phone has when none are given, with their permissions."""


@dataclass
class Device:
    """The phone's settings and radio state (``MockPhoneAttributes``), its defaults included."""

    sim_card_status: str = "active"
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: str = "good"
    network_technology_connected: str = "5G"
    network_connection_status: str = "connected"
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: str = "4g_5g_preferred"
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: str = "none"
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    apn: Apn = field(default_factory=Apn)
    vpn: Vpn | None = None
    apps: dict[str, Permissions] = field(default_factory=lambda: copy.deepcopy(APPS))


DEFAULT_SIGNALS = {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}
"""The signal each technology gets where the user is, unless a task says otherwise."""


@dataclass
class PaymentRequest:
    """A bill the carrier asked the user to pay (``PaymentRequest``)."""

    bill_id: str
    amount_due: float
    paid: bool = False


@dataclass
class Surroundings:
    """Where the phone is and what the network allows it (``UserSurroundings``)."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SIGNALS))
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


@dataclass
class Phone:
    """The whole phone: the device and its surroundings."""

    device: Device = field(default_factory=Device)
    surroundings: Surroundings = field(default_factory=Surroundings)
    #: What the store held when the phone was read (``phone.store``'s cells), so that
    #: saving writes only what changed since. Not part of the phone: never compared.
    loaded: dict[tuple[str, str, str], Any] = field(default_factory=dict, compare=False, repr=False)
