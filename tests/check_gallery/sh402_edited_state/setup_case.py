"""Freeze a fixture of this gallery world, then break it the way the case is about."""

import sys
from pathlib import Path

sys.path.insert(0, "src")

from gal_sh402 import world

with world.instance(now="2031-03-14T08:30:00.000Z", clock_mode="fixed") as inst:
    inst.call("create_item", title="first")
    inst.freeze("base", "One item, for the gallery.")

fixture = Path("fixtures/base")
state = fixture / "state.sqlite"
state.chmod(0o644)
with state.open("ab") as handle:
    handle.write(b"written after freezing")
