"""The world object, and the worlds it adds."""

import seahaven
from gal_sh207.vendor import vendor

world = seahaven.World(
    name="sh207",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
world.add_world(vendor, name="billing", tool_prefix="bill_")
world.add_world(vendor, name="stripe", tool_prefix="stripe_")
