"""Freeze a fixture of this gallery world, then break it the way the case is about."""

import sys
from pathlib import Path

sys.path.insert(0, "src")

from gal_sh404 import world

with world.instance(now="2031-03-14T08:30:00.000Z", clock_mode="fixed") as inst:
    inst.call("create_item", title="first")
    inst.freeze("base", "One item, for the gallery.")

fixture = Path("fixtures/base")
sidecar = fixture / "fixture.yaml"
text = sidecar.read_text(encoding="utf-8")
assert "2031-03-14T08:30:00.000Z" in text
# Seconds without milliseconds: a valid instant, but not the clock's own spelling.
sidecar.write_text(text.replace("08:30:00.000Z", "08:30:00Z"), encoding="utf-8")
