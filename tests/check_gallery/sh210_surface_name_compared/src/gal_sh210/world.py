"""The world object."""

import seahaven

world = seahaven.World(
    name="sh210",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
