"""What an MCP instance may be made with, and the check of it.

Kept apart from ``seahaven_mcp.server`` so that the command line, which loads on
every ``seahaven`` run, checks ``--reset-options`` without importing the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seahaven.declaration.instance_options import check_instance_options, instance_option_names
from seahaven.errors import WorldBug

__all__ = ["CONVENIENCE_KEYS", "RESET_KEYS", "check_reset_options"]

# Every keyword of world.instance() an MCP instance may be made with: the fields of
# seahaven.InstanceOptions. control_tools is not one: this server never has a control tool.
RESET_KEYS: tuple[str, ...] = instance_option_names()
# The four a command-line flag also spells.
CONVENIENCE_KEYS: tuple[str, ...] = ("fixture", "seed", "now", "clock_mode")


def check_reset_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as keyword arguments for ``world.instance()``, or ``WorldBug`` naming the fix.

    Only the keys in ``RESET_KEYS`` are taken, each of the JSON type
    ``seahaven.InstanceOptions`` gives it; ``control_tools`` is refused, because
    an instance served over MCP never has the control tool. What the values mean
    (a fixture that exists) is the instance's to check.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise WorldBug(
            f"reset_options must be an object of world.instance() keywords, not "
            f"{type(options).__name__}"
        )
    if "control_tools" in options:
        raise WorldBug(
            "reset_options may not hold control_tools: an instance served over MCP never has "
            "the control tool; read the state document (inst.state()) in process instead"
        )
    checked = check_instance_options(options, source="reset_options")
    return checked.keywords()
