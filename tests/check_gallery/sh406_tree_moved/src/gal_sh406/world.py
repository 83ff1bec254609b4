"""The world object, and the worlds it adds."""

import seahaven
from gal_sh406.vendor import vendor

world = seahaven.World(
    name="sh406",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
world.add_world(vendor, name="vendor", tool_prefix="v_")
