"""The world object, and the worlds it adds."""

import seahaven
from gal_sh503.vendor import vendor

world = seahaven.World(
    name="sh503",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
world.add_world(vendor, name="vendor", tool_allow_list=[])
world.add_world(vendor, name="audit", store="audit", tool_allow_list=[])
