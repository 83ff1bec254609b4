"""The company world's pack of scenarios: ``company``, tasks for a back office on the acme fixture.

The scenarios are YAML files beside this module (``pack.yaml`` names the pack,
its defaults and its splits; every other file holds scenarios by area). The
pack is published under the ``seahaven.scenarios`` entry point as ``company``,
and read the first time it is asked for.
"""

from __future__ import annotations

from functools import cache

from seahaven.scenarios import ScenarioSet

__all__ = ["pack"]


@cache
def pack() -> ScenarioSet:
    """The ``company`` pack, loaded from the YAML files shipped in this package."""
    return ScenarioSet.from_package("company_world", "scenarios")
