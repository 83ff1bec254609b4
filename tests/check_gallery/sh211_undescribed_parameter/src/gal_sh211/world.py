"""The world object; its tools register on it when the tools package is imported."""

import seahaven

world = seahaven.World(
    name="sh211",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
)
